"""scripts/gpu_capture.sh end to end in its dry run (the fakes of these tests:
a fake H200 in NVML, CPU kernels of clipped shapes) and its Python steps
(scripts/gpu_capture_steps.py): the archive it leaves, the rows against the
plan, the time against the budget, and the default budget as documented."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "scripts" / "gpu_capture.sh"
STEPS_FILE = REPO / "scripts" / "gpu_capture_steps.py"
SHIM = Path(__file__).with_name("gpu_capture_dryrun.py")
TARGET = "h200_sxm_141gb"

pytestmark = pytest.mark.skipif(
    not SCRIPT.exists() or not all(shutil.which(t) for t in ("bash", "tar", "timeout")),
    reason="needs the repository's scripts/ folder, bash, tar and timeout",
)


def _steps() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_capture_steps", STEPS_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


steps = _steps()


def _rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode())))


def _default(name: str) -> str:
    """A knob's default as the script sets it (``NAME=${NAME:-value}``)."""
    found = re.search(rf"^{name}=\$\{{{name}:-([^}}]*)\}}$", SCRIPT.read_text(), re.M)
    assert found, name
    return found.group(1)


# --- the whole script, dry run ----------------------------------------------------------------


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """One dry run of matmul (four dtypes, int8 among them): 2 calibration and 1
    validation shape per dtype, the recapture, short energy windows."""
    tmp = tmp_path_factory.mktemp("gpu_capture")
    env = {
        **os.environ,
        "DRY_RUN": "1",
        "DRY_RUN_WINDOW_S": "0.01",
        "PYTHON": sys.executable,
        "INSTALL": "none",  # graphsval as this test imports it: no build in the tree
        "OPS": "matmul",
        "CAL_N": "2",
        "VAL_N": "1",
        "CAPTURE_S": "150",
        "BUDGET_S": "240",
        "MAX_TIME_PER_SHAPE": "0.02",
        "MAX_WAIT": "0",
        "RUN_DIR": str(tmp / "run"),
        "OUT": str(tmp / "out"),
        "TMPDIR": str(tmp),
    }
    env.pop("TARGET", None)
    done = subprocess.run(
        ["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=280
    )
    out = tmp / "out"
    archive = out / "gpu-capture-dryrun.tar.gz"
    assert archive.is_file(), done.stdout[-4000:] + done.stderr[-2000:]
    with tarfile.open(archive) as tar:
        files = {
            m.name.removeprefix("./"): tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }
    return SimpleNamespace(done=done, out=out, files=files, log=done.stdout)


def test_dry_run_finishes(dry_run: SimpleNamespace) -> None:
    assert dry_run.done.returncode == 0, dry_run.log[-4000:] + dry_run.done.stderr[-2000:]
    assert "DRY RUN" in dry_run.log
    assert f"== target: {TARGET}" in dry_run.log


def test_dry_run_archive_holds_every_csv_and_the_log(dry_run: SimpleNamespace) -> None:
    # what comes back from the device: one archive and the log, plainly named
    assert sorted(p.name for p in dry_run.out.iterdir()) == [
        "gpu-capture-dryrun.tar.gz",
        "gpu_capture.log",
    ]
    names = set(dry_run.files)
    assert {
        f"baselines/{TARGET}_matmul.calibration.csv",
        f"baselines/{TARGET}_matmul.validation.csv",
        f"baselines/recapture/{TARGET}_matmul.validation.csv",
        "gpu_capture.log",
        "plan.json",
        "gpu.json",
        "targets.json",
        "targets.txt",
        "python.txt",
        "sweeps/matmul_calibration.json",
        "sweeps/matmul_validation.json",
        "sweeps/matmul_validation.recapture.json",
    } <= names
    assert not any(n.startswith("scratch/") or n.endswith(".journal.jsonl") for n in names)
    assert TARGET in dry_run.files["targets.txt"].decode()  # `graphsval targets`, first
    assert "== done in" in dry_run.files["gpu_capture.log"].decode()


def test_dry_run_rows_follow_the_plan(dry_run: SimpleNamespace) -> None:
    plan = json.loads(dry_run.files["plan.json"])
    assert plan["record_as"] == TARGET
    assert plan["rows"] == {
        "matmul": {
            d: {"calibration": 2, "validation": 1, "recapture": 1}
            for d in ("fp32", "fp16", "bf16", "int8")
        }
    }
    got: dict[str, dict[str, int]] = {}
    for name, kind in (
        (f"baselines/{TARGET}_matmul.calibration.csv", "calibration"),
        (f"baselines/{TARGET}_matmul.validation.csv", "validation"),
        (f"baselines/recapture/{TARGET}_matmul.validation.csv", "recapture"),
    ):
        rows = _rows(dry_run.files[name])
        assert all(r["latency_s"] and r["energy_j"] for r in rows), name
        assert {r["hardware"] for r in rows} == {TARGET}
        assert {r["device"] for r in rows} == {"NVIDIA H200"}
        assert {r["torch_version"] for r in rows} == {"dry-run"}  # never taken for real rows
        assert {r["rounds"] for r in rows} == {"1"}
        for r in rows:
            counts = got.setdefault(r["dtype"], {})
            counts[kind] = counts.get(kind, 0) + 1
            if r["dtype"] == "int8":  # torch._int_mm's rules, assumed in a dry run
                m, k, n = (int(x) for x in r["shape"].split("x"))
                assert m > 16 and k % 8 == 0 and n % 8 == 0, r["shape"]
    assert got == plan["rows"]["matmul"]
    validation = {
        (r["shape"], r["dtype"])
        for r in _rows(dry_run.files[f"baselines/{TARGET}_matmul.validation.csv"])
    }
    recapture = {
        (r["shape"], r["dtype"])
        for r in _rows(dry_run.files[f"baselines/recapture/{TARGET}_matmul.validation.csv"])
    }
    assert recapture == validation
    assert "recapture:" in dry_run.log and "shapes agree with the capture" in dry_run.log


def test_dry_run_keeps_its_time_budget(dry_run: SimpleNamespace) -> None:
    spent = re.search(r"== captures: (\d+) s of (\d+)", dry_run.log)
    assert spent, dry_run.log[-3000:]
    assert int(spent.group(2)) <= 150
    assert int(spent.group(1)) <= int(spent.group(2))
    # each capture's share of what is left, in proportion to the estimates: the first
    # gets its part of the whole budget; time the earlier ones leave passes on
    tsv = dry_run.files["captures.tsv"].decode().splitlines()
    estimates = [int(line.rsplit("\t", 1)[1]) for line in tsv]
    shares = [int(s) for s in re.findall(r"at most (\d+) s of measuring", dry_run.log)]
    assert len(shares) == 3
    assert shares[0] <= 150 * estimates[0] / sum(estimates)
    assert all(s <= 150 for s in shares)


# --- the default budget, as the script's header and the runbook write it ----------------------


def test_default_budget_is_the_documented_one(tmp_path: Path) -> None:
    """The plan of the defaults against the fake H200: 12 calibration and 8
    validation (and recapture) shapes per op and dtype, 280 rows, as the
    script's header and docs/runbook-nvidia.md say; its estimate is printed
    beside the 420 s budget."""
    assert (_default("CAL_N"), _default("VAL_N")) == ("12", "8")
    assert (_default("CAPTURE_S"), _default("BUDGET_S"), _default("ROUNDS")) == ("420", "480", "1")
    gpu = tmp_path / "gpu.json"
    gpu.write_text(json.dumps({"int8_matmul": steps.ASSUMED_INT8_RULES}))
    env = {**os.environ, "GRAPHSVAL_WORKSPACE": str(tmp_path / "ws")}
    done = subprocess.run(
        [sys.executable, str(SHIM), "python", str(STEPS_FILE), "plan", "--target", TARGET,
         "--ops", "matmul", "linear", "vector_add", "--cal-n", "12", "--val-n", "8",
         "--max-time-per-shape", _default("MAX_TIME_PER_SHAPE"), "--capture-s", "420",
         "--process-s", _default("PROCESS_S"), "--gpu", str(gpu),
         "--workspace", str(tmp_path / "ws"), "--dir", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    plan = json.loads((tmp_path / "plan.json").read_text())
    per = {"calibration": 12, "validation": 8, "recapture": 8}
    assert plan["rows"] == {
        "matmul": {d: per for d in ("fp32", "fp16", "bf16", "int8")},
        "linear": {d: per for d in ("fp32", "fp16", "bf16")},
        "vector_add": {d: per for d in ("fp32", "fp16", "bf16")},
    }
    assert plan["total_rows"] == 280
    assert [(c["op"], c["kind"]) for c in plan["captures"]] == [
        (op, kind)
        for kind in ("calibration", "validation", "recapture")
        for op in ("matmul", "linear", "vector_add")
    ]
    assert "= 280 rows" in done.stdout and "the budget is 420 s" in done.stdout
    # the estimate stays within reach of the budget: the shares cut at most a quarter
    assert 0.25 * 420 < plan["estimated_s"] < 420 / 0.75
    header = SCRIPT.read_text()
    runbook = (REPO / "docs" / "runbook-nvidia.md").read_text()
    for text in (header, runbook):
        assert "280" in text and "420 s" in text and "12 each" in text and "8 each" in text


# --- the steps, one by one ----------------------------------------------------------------------


def test_spread_order_and_interleave() -> None:
    assert steps.spread_order(8) == [0, 4, 2, 6, 1, 5, 3, 7]
    assert sorted(steps.spread_order(13)) == list(range(13))
    assert steps.spread_order(3)[:2] == [0, 2]
    assert steps.interleave([[1, 2, 3], ["a"], [10, 20]]) == [1, "a", 10, 2, 20, 3]


def test_int8_rules_filter_shapes() -> None:
    rules = steps.ASSUMED_INT8_RULES
    assert steps.int8_runs((17, 8, 16), rules)
    assert not steps.int8_runs((16, 8, 16), rules)
    assert not steps.int8_runs((32, 12, 16), rules)
    assert not steps.int8_runs((32, 16, 12), rules)
    assert steps.int8_runs((1, 3, 5), None)  # unknown: assume it runs
    assert not steps.int8_runs((32, 32, 32), {"runs": False, "error": "no kernel"})


class _Int8Torch:
    """Just enough of torch for the int8 probe: ``_int_mm`` refuses M <= 16 and
    K, N that are not multiples of 8, as torch's CUDA kernel has."""

    int8 = "int8"

    def __init__(self) -> None:
        self.cuda = SimpleNamespace(synchronize=lambda: None)

    def ones(self, shape: tuple[int, int], dtype: Any, device: str) -> tuple[int, int]:
        return shape

    def _int_mm(self, a: tuple[int, int], b: tuple[int, int]) -> Any:
        (m, k), (_, n) = a, b
        if m <= 16:
            raise RuntimeError(f"self.size(0) needs to be greater than 16, but got {m}")
        if k % 8 or n % 8:
            raise RuntimeError("needs to be greater than 0 and a multiple of 8")
        return {(0, 0): k}  # out[0, 0], as a tensor's


def test_int8_probe_finds_the_kernels_rules() -> None:
    rules = steps.int8_matmul_rules(_Int8Torch())
    assert (rules["runs"], rules["min_m"], rules["k_multiple"], rules["n_multiple"]) == (
        True,
        17,
        8,
        8,
    )
    assert "greater than 16" in rules["errors"]["m=16"]


def test_pick_prefers_the_named_target() -> None:
    def t(key: str, available: bool, family: str = "nvidia_datacenter") -> dict[str, Any]:
        return {"key": key, "family": family, "measurer": {"available": available, "reason": ""}}

    targets = [t("host_cpu", True, "cpu"), t("h100_sxm5_80gb", False), t("host_gpu", True)]
    assert steps.pick_target(targets)[0] == "host_gpu"
    assert steps.pick_target([*targets, t(TARGET, True)])[0] == TARGET
    assert steps.pick_target([t("host_cpu", True, "cpu")])[0] == ""


def test_recapture_sweep_holds_the_measured_shapes_reversed(tmp_path: Path) -> None:
    sweep = tmp_path / "v.json"
    shapes = [{"shape": [i, 8, 8], "dtype": "fp16"} for i in (1, 2, 3, 4)]
    sweep.write_text(json.dumps({"op": "matmul", "purpose": "validation", "shapes": shapes}))
    baseline = tmp_path / "v.csv"
    baseline.write_text(
        "hardware,op,shape,dtype,latency_s\n"
        "h,matmul,1x8x8,fp16,1e-5\nh,matmul,2x8x8,fp16,\nh,matmul,3x8x8,fp16,2e-5\n"
    )
    out = tmp_path / "r.json"
    assert steps.main(["recapture-sweep", "--csv", str(baseline), "--sweep", str(sweep),
                       "--out", str(out)]) == 0  # fmt: skip
    assert [e["shape"][0] for e in json.loads(out.read_text())["shapes"]] == [3, 1]
