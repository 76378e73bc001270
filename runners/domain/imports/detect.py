"""Which tool wrote a file, from lines only that tool prints (pure)."""

from __future__ import annotations

import re

from runners.domain.imports.records import FORMATS, IMB, NCCL_TESTS, OSU, ImportProblem

SIGNS = {
    IMB: re.compile(r"#\s*(Intel\(R\) MPI Benchmarks|Benchmarking \w)"),
    OSU: re.compile(r"#\s*OSU MPI.* Test v"),
    NCCL_TESTS: re.compile(r"#\s*(nccl-tests version|Collective test starting|nThread \d+ nGpus)"),
}


def detect_format(text: str, name: str) -> str:
    """The format of the first line that only one tool prints; ImportProblem otherwise."""
    if text.lstrip().startswith("{"):
        if '"nccl_version"' in text[:100_000] or '"results"' in text[:100_000]:
            return NCCL_TESTS  # nccl-tests' -J report
        raise ImportProblem(name, 1, "JSON that is not an nccl-tests -J report")
    for line in text.splitlines()[:200]:
        for fmt, sign in SIGNS.items():
            if sign.match(line):
                return fmt
    raise ImportProblem(
        name,
        1,
        f"not a format collsweep imports ({', '.join(FORMATS)}): none of IMB's, OSU's or "
        "nccl-tests' header lines in its first 200 lines",
    )
