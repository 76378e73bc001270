"""runners.host reads this machine; runners.domain takes what it read as arguments."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import ROOT

from runners.domain.sweep import capacity, launcher
from runners.host import machine, memory


def test_available_memory_is_read_from_meminfo(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 9000 kB\nMemAvailable:    2048 kB\nCached: 1 kB\n")
    assert memory.available_bytes(meminfo) == 2 * 2**20
    meminfo.write_text("MemTotal: 9000 kB\n")  # an old kernel's: none said
    assert memory.available_bytes(meminfo) == memory.UNKNOWN_BYTES
    assert memory.available_bytes(tmp_path / "missing") == memory.UNKNOWN_BYTES


def test_this_machine_as_read() -> None:
    cores = machine.physical_cores()
    assert 1 <= cores <= len(os.sched_getaffinity(0))
    assert machine.cpu_model() and machine.hostname()


def test_the_domain_decides_from_the_values_read() -> None:
    """The same group is dedicated on a larger host and oversubscribed on a smaller one."""
    assert not launcher.is_oversubscribed(4, cores=4) and launcher.is_oversubscribed(5, cores=4)
    free = 2**30
    assert capacity.payload_problem([capacity.largest_payload(2, free)], 2, free) is None
    assert capacity.payload_problem([capacity.largest_payload(2, free) + 1], 2, free)


def test_a_library_starts_from_the_install_found_here(tmp_path: Path) -> None:
    """The descriptor's rules are pure: the same Install always gives the same launch."""
    from runners.domain.libraries import LIBRARIES, Install

    impi, openmpi = LIBRARIES["impi"], LIBRARIES["openmpi"]
    lib_dir = tmp_path / "lib"
    found = Install(tmp_path, tmp_path / "bin" / "mpiexec", lib_dir / "libmpi.so.12", ("/a",))
    env = impi.launch_env(found)
    assert env["LD_LIBRARY_PATH"] == f"{lib_dir}:/a" and "FI_PROVIDER_PATH" not in env
    with_providers = Install(found.prefix, found.mpiexec, found.libmpi, (), lib_dir / "prov")
    assert impi.launch_env(with_providers)["FI_PROVIDER_PATH"] == str(lib_dir / "prov")
    words = openmpi.command(found, 3, ["prog"], exports=["X"])
    assert words[:4] == [str(found.mpiexec), "--oversubscribe", "-n", "3"]
    assert words[-3:] == ["-x", "X", "prog"]


def test_the_host_finds_each_library_in_its_prefix() -> None:
    from runners.domain.libraries import LIBRARIES
    from runners.host import libraries

    for lib in LIBRARIES.values():
        found = libraries.install(lib)
        assert found.prefix == libraries.prefix(lib) and found.mpiexec == libraries.mpiexec(lib)
        if lib.prefix_name:  # a prefix of its own: its launcher and libmpi are in it
            assert found.mpiexec.is_relative_to(found.prefix) and found.libmpi is not None
    assert libraries.installed(LIBRARIES["mpich"])  # the environment's own, which runs tests


def test_a_tuning_file_is_read_here_and_checked_by_its_library(tmp_path: Path) -> None:
    """Missing and unreadable files are said by the host, in the library's order of its
    files; what is in them, by the library."""
    from runners.domain.libraries import LIBRARIES
    from runners.host.tuning_files import tuning_problem

    mpich, openmpi = LIBRARIES["mpich"], LIBRARIES["openmpi"]
    table = tmp_path / "t.json"
    assert "t.json does not exist" in str(tuning_problem(mpich, table))
    table.write_text("{}")
    assert "lacks collective=allreduce" in str(tuning_problem(mpich, table))  # before the 2nd
    folder = tmp_path / "rules"
    folder.mkdir()
    assert "rules: a folder" in str(tuning_problem(openmpi, folder))
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00")
    assert "not a readable text file" in str(tuning_problem(openmpi, tmp_path / "bin"))


# What the host package reads; none of it may appear in runners/domain.
HOST_READS = {
    ("sys", "prefix"),
    ("sys", "executable"),
    ("shutil", "which"),
    ("os", "sched_getaffinity"),
    ("os", "cpu_count"),
    ("socket", "gethostname"),
    ("platform", "processor"),
}


def test_the_domain_reads_nothing_the_host_package_reads() -> None:
    import ast

    found = []
    for path in sorted((ROOT / "runners" / "domain").rglob("*.py")):
        text = path.read_text()
        for node in ast.walk(ast.parse(text)):
            named = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            if named and (node.value.id, node.attr) in HOST_READS:
                found.append(f"{path.name}: {node.value.id}.{node.attr}")
        if "/proc/" in text:
            found.append(f"{path.name}: /proc")
    assert found == []


def test_an_mpich_table_naming_an_algorithm_mpich_lacks_is_refused(tmp_path: Path) -> None:
    """A leaf MPICH's selection cannot parse would fail inside the ranks: the installed
    library's own names (its libmpi's `algorithm=` strings) decide, before any rank starts."""
    from runners.domain.libraries import LIBRARIES
    from runners.domain.libraries.mpich_tuning import TABLES, posix_path
    from runners.host.tuning_files import mpich_algorithms, tuning_problem

    mpich = LIBRARIES["mpich"]
    assert {"MPIR_Allreduce_intra_ring", "MPIR_Bcast_intra_binomial"} <= mpich_algorithms()
    table = tmp_path / "t.json"
    table.write_text((TABLES / "mpir_generic.json").read_text())
    posix_path(table).write_text((TABLES / "posix_generic.json").read_text())
    assert tuning_problem(mpich, table) is None  # MPICH's own tables
    bogus = "MPIR_Allreduce_intra_ring_of_fire"
    table.write_text(table.read_text().replace("MPIR_Allreduce_intra_recursive_doubling", bogus))
    assert f"names {bogus}, an algorithm this MPICH does not have" in str(
        tuning_problem(mpich, table)
    )
