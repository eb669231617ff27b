"""The probes (benchmarks/probes/): captures of shapes no sweep drew, never
fitted. They parse, each has its recapture, the DNN-layer sweeps are what
their script writes, and none of their shapes is one of the target's
shipped baseline shapes (else they would not be an independent check)."""

from __future__ import annotations

import csv
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from graphsval_core.files.baseline import read_baseline_file

ROOT = Path(__file__).resolve().parents[1]
PROBES = ROOT / "benchmarks" / "probes"
BASELINES = ROOT / "plugins" / "graphsval_cpu" / "graphsval_cpu" / "baselines"
DNN = sorted(PROBES.glob("*_dnn_layers_*.csv"))


def _shapes(path: Path) -> set[tuple[str, str, str]]:
    with path.open(newline="") as handle:
        return {(r["op"], r["shape"], r["dtype"]) for r in csv.DictReader(handle)}


def test_there_are_dnn_layer_probes():
    assert [p.name for p in DNN] == [
        "zen4_dnn_layers_linear.csv",
        "zen4_dnn_layers_matmul.csv",
    ]


@pytest.mark.parametrize("path", DNN, ids=lambda p: p.name)
def test_a_dnn_probe_parses_has_its_recapture_and_no_shipped_shape(path):
    rows = read_baseline_file(str(path))[0].rows
    again = read_baseline_file(str(PROBES / "recapture" / path.name))[0].rows
    assert rows and all(r.latency_s for r in rows)
    assert {(r.shape, r.dtype) for r in rows} == {(r.shape, r.dtype) for r in again}
    (target,) = {r.hardware for r in rows}
    shipped = set().union(*(_shapes(p) for p in BASELINES.glob(f"{target}_*.csv")))
    assert not _shapes(path) & shipped


def test_the_dnn_sweeps_are_what_their_script_writes(tmp_path):
    spec = importlib.util.spec_from_file_location("dnn", PROBES / "dnn_layer_shapes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main("host_amd_epyc_zen4_2c_1t", tmp_path)
    for made in sorted(tmp_path.glob("*.sweep.json")):
        assert made.read_bytes() == (PROBES / made.name).read_bytes(), made.name
    assert len(list(tmp_path.glob("*.sweep.json"))) == 2


def test_bench_probe_prints_the_figures_and_refuses_a_missing_file(tmp_path):
    bench = ROOT / "benchmarks" / "bench_probe.py"
    run = subprocess.run(
        [sys.executable, str(bench), str(DNN[1])], capture_output=True, text=True, check=True
    )
    assert "zen4_dnn_layers_matmul.csv: 72 rows of host_amd_epyc_zen4_2c_1t matmul" in run.stdout
    # the figures README.md and the notebook quote (a recalibration that moves them
    # must move the prose too): model 3.9% / 81% within 10%, recapture 1.2% / 100%
    (total,) = [line.split() for line in run.stdout.splitlines() if line.startswith("  all ")]
    assert total == ["all", "72", "3.9%", "81%", "1.2%", "100%", "no"]
    assert "the 8 worst:" in run.stdout
    gone = subprocess.run(
        [sys.executable, str(bench), str(tmp_path / "x.csv")], capture_output=True, text=True
    )
    assert gone.returncode == 2
    assert gone.stderr.strip() == f"bench_probe: no such file: {tmp_path / 'x.csv'}"
    (tmp_path / "empty.csv").write_text("")
    empty = subprocess.run(
        [sys.executable, str(bench), str(tmp_path / "empty.csv")], capture_output=True, text=True
    )
    assert empty.returncode == 2 and "Traceback" not in empty.stderr
    assert empty.stderr.startswith(f"bench_probe: {tmp_path / 'empty.csv'}: empty file")


def test_the_linear_probe_figures_are_the_ones_the_docs_quote():
    bench = ROOT / "benchmarks" / "bench_probe.py"
    run = subprocess.run(
        [sys.executable, str(bench), str(DNN[0])], capture_output=True, text=True, check=True
    )
    (total,) = [line.split() for line in run.stdout.splitlines() if line.startswith("  all ")]
    assert total == ["all", "70", "6.6%", "70%", "2.6%", "90%", "no"]
    readme = (ROOT / "README.md").read_text()
    assert "6.6% on linear (70% within 10%" in " ".join(readme.split())


def test_bench_probe_judges_each_target_and_op_of_a_file_on_its_own(tmp_path):
    bench = ROOT / "benchmarks" / "bench_probe.py"
    lines = [DNN[0].read_text().splitlines()[i] for i in range(4)]
    lines += DNN[1].read_text().splitlines()[1:3]
    mixed = tmp_path / "mixed.csv"
    mixed.write_text("\n".join(lines) + "\n")
    run = subprocess.run([sys.executable, str(bench), str(mixed)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "mixed.csv: 3 rows of host_amd_epyc_zen4_2c_1t linear" in run.stdout
    assert "mixed.csv: 2 rows of host_amd_epyc_zen4_2c_1t matmul" in run.stdout
    assert "no recapture/mixed.csv beside it" in run.stdout and "the 2 worst:" in run.stdout
