"""benchmarks/bench_narrow_n.py, the evidence behind a narrow N's whole
vector: it runs, prints each N's time beside N = 16's, and refuses a bad
size in one line. It asserts nothing about the times (a benchmark prints
figures; a test of timing would be flaky)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_narrow_n.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True)


def test_it_prints_every_n_against_a_whole_vector_of_16():
    run = _run("--m", "32", "--k", "32", "--dtype", "bf16")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("32 x 32 x N, one thread")
    for layout in ("bf16 matmul", "bf16 linear"):
        block = run.stdout.split(layout + "\n", 1)[1].split("\n\n", 1)[0].splitlines()
        rows = {int(line.split()[0]): line.split() for line in block[1:]}
        assert sorted(rows) == [
            1,
            2,
            3,
            4,
            5,
            6,
            7,
            8,
            10,
            12,
            14,
            15,
            16,
            20,
            24,
            28,
            31,
            32,
            47,
            48,
        ]
        assert rows[16][2] == "1.00"  # N = 16 is the unit of the last column
    assert "fp32" not in run.stdout and "int8" not in run.stdout


def test_int8_has_no_linear_and_a_bad_size_is_one_line():
    run = _run("--m", "16", "--k", "16", "--dtype", "int8", "--dtype", "int8")
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("int8 matmul") == 1 and "int8 linear" not in run.stdout
    bad = _run("--m", "0")
    assert bad.returncode == 2 and "--m and --k must be at least 1" in bad.stderr
    assert "Traceback" not in bad.stderr
    for m, k, name in (("99999999999999999999", "1", "A"), ("1", "134217728", "B")):
        huge = _run("--m", m, "--k", k)
        assert huge.returncode == 2, huge.stderr
        assert f"{name} would hold" in huge.stderr and "at most 134217728" in huge.stderr
        assert "Traceback" not in huge.stderr
    tall = _run("--m", "134217728", "--k", "1")
    assert tall.returncode == 2 and "C would hold" in tall.stderr
    wide = _run("--m", "1", "--k", "2", "--n", "99999999")
    assert (
        wide.returncode == 2 and "B would hold" in wide.stderr and "N up to 99999999" in wide.stderr
    )
    zero = _run("--n", "0")
    assert zero.returncode == 2 and "--n 0: an N must be at least 1" in zero.stderr


def test_the_ns_to_time_can_be_chosen_and_16_is_always_among_them():
    run = _run("--m", "16", "--k", "16", "--dtype", "int8", "--n", "7", "--n", "59", "--n", "7")
    assert run.returncode == 0, run.stderr
    block = run.stdout.split("int8 matmul\n", 1)[1].splitlines()
    assert [int(line.split()[0]) for line in block[1:]] == [7, 16, 59]


def test_tiers_times_the_linear_kernels_from_the_l2_to_main_memory():
    run = _run("--tiers", "--k", "8")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("fp32 linear M x 8 x N, one thread")
    rows = [line.split() for line in run.stdout.splitlines()[2:]]
    assert [(int(r[0]), int(r[1])) for r in rows] == [
        (n, m) for n in (4, 8, 16) for m in (64, 128, 512, 2048, 8192, 32768)
    ]
    assert all(float(r[4]) > 0 for r in rows)  # ps a multiply-add
    # one refusal (each run imports torch, 3 s): a flag --tiers would ignore
    mixed = _run("--tiers", "--n", "4")
    assert mixed.returncode == 2 and "--tiers times fp32 at its own M and N" in mixed.stderr
