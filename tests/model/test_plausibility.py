"""Physical sanity of measurements: each check flags an implausible
measurement and not a plausible one, the ``suspect`` column reads and writes,
and the shipped baselines hold exactly one implausible quantity."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from attrs import evolve

from graphsval_core.builtin.ops import MATMUL, VECTOR_ADD
from graphsval_core.datamodel.errors import UserInputError
from graphsval_core.datamodel.provenance import calibrated
from graphsval_core.files.baseline import read_baseline_file
from graphsval_core.model.plausibility import (
    ENERGY,
    LATENCY,
    PEAK_MARGIN,
    POWER_MARGIN,
    SLOW_FACTOR,
    SLOW_OVERHEAD_S,
    Flag,
    SuspectFormatError,
    check_batch,
    check_measurement,
    format_suspect,
    parse_suspect,
    ratios,
    row_flags,
)
from graphsval_core.plugins.loader import build_registry

# the conftest toy target: 256 GFLOP/s fp32, l1 1 TB/s (fastest), dram 50 GB/s
# (slowest), TDP 65 W; a 1024^3 matmul is 2.15 GFLOP, 12.6 MB of operands
GEMM = (1024, 1024, 1024)


@pytest.fixture
def toy(make_target):
    return make_target("toy")


def test_a_plausible_measurement_is_not_flagged(toy):
    assert check_measurement(toy, MATMUL, GEMM, "fp32", 20e-3, 1.0) == ()  # 107 GFLOP/s, 50 W
    assert check_measurement(toy, VECTOR_ADD, (1_000_000,), "fp32", 1e-3, 0.05) == ()


def test_compute_above_peak_flags_the_latency(toy):
    # 1.3x peak is within the margin (a turbo clock); 4.2x is not
    assert check_measurement(toy, MATMUL, GEMM, "fp32", 2.147e9 / (1.3 * 256e9), None) == ()
    (flag,) = check_measurement(toy, MATMUL, GEMM, "fp32", 2e-3, None)
    assert flag.quantity == LATENCY
    assert flag.reason == "implies 1.07 TFLOP/s, above 2 x the 256 GFLOP/s fp32 peak (datasheet)"


def test_bandwidth_above_the_fastest_tier_flags_the_latency(toy):
    # 12 MB of operands in 4 us: 3 TB/s, 3x the l1's 1 TB/s (compute stays under peak)
    (flag,) = check_measurement(toy, VECTOR_ADD, (1_000_000,), "fp32", 4e-6, None)
    assert flag.quantity == LATENCY
    assert flag.reason == (
        "moves its operands at 3 TB/s, above 2 x the 1 TB/s of l1, the fastest tier (datasheet)"
    )
    assert check_measurement(toy, VECTOR_ADD, (1_000_000,), "fp32", 10e-6, None) == ()


def test_power_above_tdp_flags_the_energy_only(toy):
    (flag,) = check_measurement(toy, VECTOR_ADD, (1_000_000,), "fp32", 1e-3, 0.2)
    assert flag == Flag(ENERGY, "implies 200 W, above 2 x the 65 W TDP (datasheet)")
    ok = 0.9 * POWER_MARGIN * 65.0 * 1e-3
    assert check_measurement(toy, VECTOR_ADD, (1_000_000,), "fp32", 1e-3, ok) == ()


def test_a_time_far_beyond_any_plausible_bound_flags_the_latency(toy):
    # the slowest plausible time of 1000 elements is about the fixed overhead
    slowest = float(ratios(toy, VECTOR_ADD, [[1000]], "fp32", [1.0], [None]).slowest_s[0])
    assert slowest == pytest.approx(SLOW_OVERHEAD_S, rel=1e-3)
    assert (
        check_measurement(toy, VECTOR_ADD, (1000,), "fp32", 0.5 * SLOW_FACTOR * slowest, None) == ()
    )
    (flag,) = check_measurement(toy, VECTOR_ADD, (1000,), "fp32", 2 * SLOW_FACTOR * slowest, None)
    assert (
        flag.quantity == LATENCY
        and flag.reason == "takes 2000 x the slowest plausible time (10 ms), above 1000 x"
    )


def test_missing_measurements_are_not_judged(toy):
    assert check_measurement(toy, MATMUL, GEMM, "fp32", None, 5.0) == ()
    assert check_measurement(toy, MATMUL, GEMM, "fp32", 2e-2, None) == ()
    assert check_measurement(toy, MATMUL, GEMM, "fp32", 2e-2, 0.0) == ()


def test_calibrated_fractions_do_not_move_the_thresholds(toy):
    """A measurement at 1.5x the datasheet peak is not suspect, even when a
    calibration says the target reaches a tenth of it."""
    slow = evolve(toy, compute_fraction={"fp32": calibrated(0.1, "fit")})
    latency = 2.147e9 / (1.5 * 256e9)
    assert check_measurement(slow, MATMUL, GEMM, "fp32", latency, None) == ()
    assert check_measurement(slow, MATMUL, GEMM, "fp32", latency / PEAK_MARGIN, None) != ()


def test_a_batch_is_judged_row_by_row(toy):
    flags = check_batch(
        toy, VECTOR_ADD, [[1_000_000]] * 3, "fp32", [1e-3, 4e-6, 1e-3], [None, None, 0.2]
    )
    assert [[f.quantity for f in row] for row in flags] == [[], [LATENCY], [ENERGY]]


def test_the_suspect_column_reads_what_it_writes():
    flags = (
        Flag(LATENCY, "rounds disagree by 40% after 2 re-measures"),
        Flag(ENERGY, "implies 1570 W, above 2 x the 190 W TDP (datasheet)"),
    )
    text = format_suspect(flags)
    assert text == (
        "latency: rounds disagree by 40% after 2 re-measures; "
        "energy: implies 1570 W, above 2 x the 190 W TDP (datasheet)"
    )
    assert parse_suspect(text) == flags
    assert parse_suspect("") == parse_suspect(None) == parse_suspect("  ") == ()
    # entries split only before a quantity; a flag's reason is one line with no "; "
    assert parse_suspect("latency: load 3.2; steal 5%; energy: x") == (
        Flag(LATENCY, "load 3.2, steal 5%"),
        Flag(ENERGY, "x"),
    )
    assert Flag(LATENCY, "a; b\nc").reason == "a, b c"


@pytest.mark.parametrize("text", ["power: too high", "implausible", "latency rounds disagree"])
def test_a_malformed_suspect_column_is_bad_input(text):
    with pytest.raises(SuspectFormatError, match="is not '<quantity>: <reason>'"):
        parse_suspect(text)
    assert issubclass(SuspectFormatError, UserInputError)
    with pytest.raises(ValueError, match="suspect quantity 'power'"):
        Flag("power", "x")


def _row(line, dims, latency, energy, suspect=""):
    return SimpleNamespace(
        line=line,
        op="vector_add",
        dims=dims,
        dtype="fp32",
        latency_s=latency,
        energy_j=energy,
        extras={"suspect": suspect} if suspect else {},
    )


def test_row_flags_merge_the_column_with_the_checks(toy):
    rows = [
        _row(2, (1_000_000,), 1e-3, 0.2, "latency: rounds disagree"),
        _row(3, (1_000_000,), 1e-3, None),
        _row(4, (1_000_000,), None, None, "energy: sensor glitch"),
    ]
    flags = row_flags(toy, {"vector_add": VECTOR_ADD}.__getitem__, rows, "f.csv")
    assert flags[0] == (
        Flag(LATENCY, "rounds disagree"),
        Flag(ENERGY, "implies 200 W, above 2 x the 65 W TDP (datasheet)"),
    )
    assert flags[1] == () and flags[2] == (Flag(ENERGY, "sensor glitch"),)
    with pytest.raises(SuspectFormatError, match=r"^f\.csv:7: suspect entry 'bad'"):
        row_flags(
            toy, {"vector_add": VECTOR_ADD}.__getitem__, [_row(7, (8,), 1e-3, None, "bad")], "f.csv"
        )


def test_rounds_in_two_modes_make_the_latency_suspect_when_read(toy):
    """A file captured before the capture flagged two modes is flagged when
    read; one whose column says so already is not flagged twice."""
    rounds = "2.7e-3 18e-3 2.6e-3 19e-3 2.8e-3 18.5e-3 2.7e-3"
    ops = {"vector_add": VECTOR_ADD}.__getitem__
    plain = _row(2, (1_000_000,), 2.7e-3, None)
    plain.extras = {"round_latencies_s": rounds}
    noted = _row(3, (1_000_000,), 2.7e-3, None, "latency: rounds fall into two modes, as captured")
    noted.extras["round_latencies_s"] = rounds
    quiet = _row(4, (1_000_000,), 2.7e-3, None)
    quiet.extras = {"round_latencies_s": "2.7e-3 2.8e-3 2.6e-3 2.7e-3"}
    flags = row_flags(toy, ops, [plain, noted, quiet], "f.csv")
    assert [f.quantity for f in flags[0]] == [LATENCY]
    assert flags[0][0].reason.startswith("rounds fall into two modes, 4 at 2.7 ms and 3 at 18.5 ms")
    assert flags[1] == (Flag(LATENCY, "rounds fall into two modes, as captured"),)
    assert flags[2] == ()


def test_the_shipped_baselines_hold_one_implausible_quantity():
    """Every row of every shipped baseline (recaptures included), judged
    against its target's uncalibrated spec: only the i7-12700K vector_add row
    of 4096 elements (about 1570 W) is flagged, and only its energy."""
    registry = build_registry()
    found = []
    files = registry.baseline_files()
    assert any("recapture" in str(item) for _, item in files)
    for _, item in files:
        baseline, _ = read_baseline_file(item)
        groups: dict[tuple[str, str, str], list] = {}
        for row in baseline.rows:
            if row.latency_s is not None:
                groups.setdefault((row.hardware, row.op, row.dtype), []).append(row)
        for (hw, op, dtype), rows in groups.items():
            spec = registry.datasheet_target(hw)
            flags = check_batch(
                spec,
                registry.op(op),
                [r.dims for r in rows],
                dtype,
                [r.latency_s for r in rows],
                [r.energy_j for r in rows],
            )
            found += [
                (Path(str(item)).name, r.line, f.quantity, f.reason)
                for r, fs in zip(rows, flags, strict=True)
                for f in fs
            ]
    assert found == [
        (
            "i7_12700k_vector_add.calibration.csv",
            3,
            ENERGY,
            "implies 1570 W, above 2 x the 190 W TDP (datasheet)",
        )
    ]


def test_the_shipped_baselines_rows_in_two_modes():
    """Every row of every shipped baseline whose rounds fall into two modes:
    on the Intel host four products whose output is at or just above glibc's
    32 MiB mmap threshold, and one small linear (52x17x2560: 5 rounds at 50 us,
    2 at 69 us); on the Zen 3 (session 57) a product whose C of 32 MiB is at
    that threshold (4096x64x2048: 13.7 ms and 39.3 ms) and four adds in the
    caches (their recapture's two among them, listed by file name)."""
    registry = build_registry()
    found = []
    for _, item in registry.baseline_files():
        baseline, _ = read_baseline_file(item)
        rows = [r for r in baseline.rows if r.latency_s is not None]
        spec = registry.datasheet_target(rows[0].hardware)
        for row, flags in zip(rows, row_flags(spec, registry.op, rows), strict=True):
            if any(f.reason.startswith("rounds fall into two modes") for f in flags):
                found.append((Path(str(item)).name, row.shape, row.dtype))
    assert sorted(found) == [
        ("host_amd_epyc_2c_1t_matmul.calibration.csv", "4096x64x2048", "fp32"),
        ("host_amd_epyc_2c_1t_vector_add.validation.csv", "102304", "bf16"),
        ("host_amd_epyc_2c_1t_vector_add.validation.csv", "17168", "fp32"),
        ("host_amd_epyc_2c_1t_vector_add.validation.csv", "269744", "fp32"),
        ("host_amd_epyc_2c_1t_vector_add.validation.csv", "465952", "fp32"),
        ("host_intel_xeon_2c_1t_linear.validation.csv", "52x17x2560", "fp32"),
        ("host_intel_xeon_2c_1t_matmul.calibration.csv", "21520x21x944", "bf16"),
        ("host_intel_xeon_2c_1t_matmul.calibration.csv", "33600x28x592", "bf16"),
        ("host_intel_xeon_2c_1t_matmul.calibration.csv", "65536x384x256", "bf16"),
        ("host_intel_xeon_2c_1t_matmul.validation.csv", "21520x96x416", "fp32"),
    ]
