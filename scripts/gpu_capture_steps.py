"""The Python steps of ``scripts/gpu_capture.sh`` (docs/runbook-nvidia.md).

Each subcommand is one step of the script; it runs under the interpreter the
script measures with (python3 with a CUDA torch), with no network:

- ``imports``: python3 imports what graphsval needs, else the missing
  distributions and the ``pip download`` line that brings them (exit 1);
- ``gpu OUT.json``: torch sees a CUDA device; which shapes ``torch._int_mm``
  (the int8 matmul kernel) accepts on it, probed with tiny products;
- ``pick TARGETS.json``: the target to measure, from ``graphsval targets --json``;
- ``plan``: the shapes to capture per op, dtype and purpose (the capture's own
  ``--limit`` sample across regimes and sizes, one dtype at a time), written as
  sweep files, and the budget: rows and estimated seconds per capture;
- ``summary DIR``: what the CSVs of a run hold, against the plan.

``plan`` imports graphsval (the registry predicts each shape's regime on the
target); the other steps import only the standard library (and torch).
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import math
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: What python3 must import for graphsval and graphsval-cuda (module: distribution).
NEEDED = {
    "pluggy": "pluggy",
    "click": "click",
    "attrs": "attrs",
    "numpy": "numpy",
    "pynvml": "nvidia-ml-py",
}
PURPOSES = ("calibration", "validation")
#: Seconds a shape costs beyond graphsval's own estimate (its timing and the
#: build of its operands): the energy window, which the NVML meter stretches to
#: at least its minimum (1 s) and the loop tops up by 2%.
WINDOW_TOP_UP = 1.05
#: The recapture measures the shapes that disagree again (graphsval's estimate
#: counts 15% for it).
RECAPTURE_FACTOR = 1.15


# --- imports --------------------------------------------------------------------------------


def missing_distributions() -> list[str]:
    missing = []
    for module, dist in NEEDED.items():
        try:
            importlib.import_module(module)
        except Exception:
            missing.append(dist)
    return missing


def cmd_imports(args: argparse.Namespace) -> int:
    missing = missing_distributions()
    if not missing:
        return 0
    ver = f"{sys.version_info[0]}.{sys.version_info[1]}"
    names = " ".join(missing)
    print(
        f"missing Python packages: {names}\n"
        f"Bring them as wheels: on a machine with network (any OS), for Python {ver} on x86-64 "
        "Linux:\n"
        f"  python3 -m pip download --no-deps --only-binary=:all: --python-version {ver} \\\n"
        "      --implementation cp --platform manylinux_2_28_x86_64 "
        "--platform manylinux_2_17_x86_64 \\\n"
        f"      --platform manylinux2014_x86_64 -d wheels {names}\n"
        "(--no-deps fetches none of their own needs: add any of theirs that is missing here "
        "too.)\n"
        "Bring the folder here, then:\n"
        "  WHEELS=wheels scripts/gpu_capture.sh"
    )
    return 1


# --- gpu ------------------------------------------------------------------------------------


def _int_mm_error(torch: Any, m: int, k: int, n: int) -> str | None:
    """None when ``torch._int_mm`` runs an (m, k) x (k, n) int8 product on the GPU,
    else its error's first line."""
    try:
        a = torch.ones((m, k), dtype=torch.int8, device="cuda")
        b = torch.ones((k, n), dtype=torch.int8, device="cuda")
        out = torch._int_mm(a, b)
        torch.cuda.synchronize()
        if int(out[0, 0]) != k:
            return f"wrong result: {int(out[0, 0])} for {k}"
    except Exception as exc:  # TORCH_CHECK: a RuntimeError before any launch
        return f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
    return None


def int8_matmul_rules(torch: Any) -> dict[str, Any]:
    """Which shapes ``torch._int_mm`` (graphsval's int8 matmul) runs on this GPU:
    the least M, and the multiples K and N must be, found with tiny products
    (torch's CUDA kernel has asked for M > 16 and K, N multiples of 8)."""
    base = _int_mm_error(torch, 32, 32, 32)
    if base is not None:
        return {"runs": False, "error": base}
    errors: dict[str, str] = {}

    def least(candidates: Sequence[tuple[int, tuple[int, int, int]]], what: str) -> int:
        for value, (m, k, n) in candidates:
            err = _int_mm_error(torch, m, k, n)
            if err is None:
                return value
            errors[f"{what}={value}"] = err
        return candidates[-1][0] * 2

    min_m = least([(m, (m, 32, 32)) for m in (1, 8, 16, 17, 32)], "m")
    k_multiple = least([(q, (32, 32 + q, 32)) for q in (1, 2, 4, 8, 16)], "k_multiple")
    n_multiple = least([(q, (32, 32, 32 + q)) for q in (1, 2, 4, 8, 16)], "n_multiple")
    return {
        "runs": True,
        "min_m": min_m,
        "k_multiple": k_multiple,
        "n_multiple": n_multiple,
        "errors": errors,
    }


#: The rules torch's CUDA ``_int_mm`` has stated (a dry run assumes them).
ASSUMED_INT8_RULES = {"runs": True, "min_m": 17, "k_multiple": 8, "n_multiple": 8, "errors": {}}


def cmd_gpu(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if args.dry_run:
        data = {
            "dry_run": True,
            "gpu": "fake NVIDIA H200 (dry run)",
            "int8_matmul": {**ASSUMED_INT8_RULES, "assumed": "dry run: torch's documented rules"},
        }
        out.write_text(json.dumps(data, indent=2) + "\n")
        print("== dry run: no GPU; int8 matmul rules assumed (M > 16, K and N multiples of 8)")
        return 0
    try:
        import torch
    except ImportError as exc:
        print(f"torch cannot be imported ({exc}): this script needs python3 with a CUDA torch")
        return 1
    if not torch.cuda.is_available():
        print(f"torch {torch.__version__} sees no CUDA device (its CUDA: {torch.version.cuda})")
        return 1
    props = torch.cuda.get_device_properties(0)
    name = torch.cuda.get_device_name(0)
    rules = int8_matmul_rules(torch)
    data = {
        "dry_run": False,
        "gpu": name,
        "torch": str(torch.__version__),
        "cuda": str(torch.version.cuda),
        "sms": int(props.multi_processor_count),
        "memory_bytes": int(props.total_memory),
        "capability": f"{props.major}.{props.minor}",
        "int8_matmul": rules,
    }
    out.write_text(json.dumps(data, indent=2) + "\n")
    print(
        f"== torch {torch.__version__}, CUDA {torch.version.cuda}, GPU 0: {name} "
        f"({props.multi_processor_count} SMs, {props.total_memory / 2**30:.0f} GiB, "
        f"sm_{props.major}{props.minor})"
    )
    if rules["runs"]:
        print(
            f"== torch._int_mm runs M >= {rules['min_m']}, K a multiple of "
            f"{rules['k_multiple']}, N a multiple of {rules['n_multiple']}"
        )
    else:
        print(f"== torch._int_mm does not run here: {rules['error']} (no int8 matmul rows)")
    return 0


# --- pick -----------------------------------------------------------------------------------


def pick_target(targets: Sequence[dict[str, Any]]) -> tuple[str, list[str]]:
    """The named CUDA target whose probe says available, else ``host_gpu`` (or
    ""); and one line per CUDA target saying why it is or is not."""
    cuda = [t for t in targets if t["family"] in ("nvidia_datacenter", "nvidia_gpu")]
    lines = [f"  {t['key']}: {t['measurer']['reason'] or 'available'}" for t in cuda]
    named = [t["key"] for t in cuda if t["key"] != "host_gpu" and t["measurer"]["available"]]
    host = [t["key"] for t in cuda if t["key"] == "host_gpu" and t["measurer"]["available"]]
    return (named + host + [""])[0], lines


def cmd_pick(args: argparse.Namespace) -> int:
    data = json.loads(Path(args.targets).read_text())
    key, lines = pick_target(data["targets"])
    for line in lines:
        print(line, file=sys.stderr)
    print(key)
    return 0


# --- plan -----------------------------------------------------------------------------------


def spread_order(count: int) -> list[int]:
    """``range(count)`` in bit-reversed order: any prefix spreads over the range."""
    bits = max(1, (count - 1).bit_length())
    return sorted(range(count), key=lambda i: int(f"{i:0{bits}b}"[::-1], 2))


def interleave(groups: Sequence[Sequence[Any]]) -> list[Any]:
    """One of each group in turn, until every group is spent."""
    out: list[Any] = []
    for i in range(max((len(g) for g in groups), default=0)):
        out.extend(g[i] for g in groups if i < len(g))
    return out


def int8_runs(shape: Sequence[int], rules: dict[str, Any] | None) -> bool:
    """Whether ``torch._int_mm`` accepts an (M, K, N) int8 matmul under ``rules``
    (None: unknown, assume it does)."""
    if rules is None:
        return True
    if not rules.get("runs", True):
        return False
    m, k, n = shape
    return (
        m >= rules.get("min_m", 1)
        and k % rules.get("k_multiple", 1) == 0
        and n % rules.get("n_multiple", 1) == 0
    )


def _registry(plugin_args: Sequence[str], workspace: str) -> Any:
    from graphsval_core.plugin_api import build_registry

    return build_registry(plugin_args=plugin_args, workspace=workspace)


def plan_captures(args: argparse.Namespace) -> dict[str, Any]:
    """Sample each op's shipped sweeps for the capture (see ``cmd_plan``)."""
    from graphsval_core.measure.protocol import CaptureSettings
    from graphsval_core.measure.workflow import CaptureOptions, estimate_seconds, plan_capture
    from graphsval_core.plugins.resources import sweeps_dir
    from graphsval_cuda.nvml_energy import NvmlEnergyMeter

    registry = _registry(args.plugin, args.workspace)
    target = registry.target(args.target)
    run = Path(args.dir)
    sweeps, scratch = run / "sweeps", run / "scratch"
    sweeps.mkdir(parents=True, exist_ok=True)
    scratch.mkdir(parents=True, exist_ok=True)
    gpu = json.loads(Path(args.gpu).read_text()) if args.gpu else {}
    rules = gpu.get("int8_matmul")
    wanted = {"calibration": args.cal_n, "validation": args.val_n}
    settings = CaptureSettings(max_time_per_shape_s=args.max_time_per_shape)
    window_s = NvmlEnergyMeter.min_window_s * WINDOW_TOP_UP
    captures: list[dict[str, Any]] = []
    rows: dict[str, dict[str, dict[str, int]]] = {}
    dropped: list[str] = []
    record_as = target.key
    for op in args.ops:
        for purpose in PURPOSES:
            data = json.loads(sweeps_dir().joinpath(f"{op}_{purpose}.json").read_text())
            entries = data["shapes"]
            dtypes = [
                d
                for d in dict.fromkeys(e["dtype"] for e in entries)
                if d in target.dtypes and (not args.dtypes or d in args.dtypes)
            ]
            if op == "matmul" and "int8" in dtypes:
                kept = [e for e in entries if e["dtype"] != "int8" or int8_runs(e["shape"], rules)]
                if len(kept) < len(entries):
                    dropped.append(
                        f"{op} {purpose}: {len(entries) - len(kept)} of "
                        f"{sum(e['dtype'] == 'int8' for e in entries)} int8 shapes that "
                        "torch._int_mm refuses here"
                    )
                entries = kept
            filtered = scratch / f"{op}_{purpose}.json"
            filtered.write_text(json.dumps({**data, "shapes": entries}))
            by_key = {(tuple(e["shape"]), e["dtype"]): e for e in entries}
            groups = []
            for dtype in dtypes:
                if not any(e["dtype"] == dtype for e in entries):
                    continue
                plan = plan_capture(
                    registry,
                    CaptureOptions(
                        target=args.target,
                        op=op,
                        purpose=purpose,
                        sweep_file=str(filtered),
                        limit=wanted[purpose],
                        out=str(scratch / f"{op}_{purpose}_{dtype}.csv"),
                        dtypes=(dtype,),
                        workspace=args.workspace,
                    ),
                )
                record_as = plan.record_as.key
                items = sorted(plan.items, key=lambda it: (math.prod(it.dims), it.dims))
                groups.append([items[i] for i in spread_order(len(items))])
                rows.setdefault(op, {}).setdefault(dtype, {})[purpose] = len(items)
                if purpose == "validation":
                    rows[op][dtype]["recapture"] = len(items)
            order = [by_key[(it.dims, it.dtype)] for it in interleave(groups)]
            sweep = sweeps / f"{op}_{purpose}.json"
            sweep.write_text(json.dumps({**data, "shapes": order}, indent=1) + "\n")
            out = run / "baselines" / f"{record_as}_{op}.{purpose}.csv"
            plan = plan_capture(
                registry,
                CaptureOptions(
                    target=args.target,
                    op=op,
                    purpose=purpose,
                    sweep_file=str(sweep),
                    out=str(scratch / f"{op}_{purpose}.csv"),
                    rounds=args.rounds,
                    settings=settings,
                    workspace=args.workspace,
                ),
            )
            shapes = len(plan.items)
            est = estimate_seconds(registry, plan) + shapes * args.rounds * window_s
            captures.append(_capture(op, purpose, False, sweep, out, shapes, est + args.process_s))
            if purpose == "validation":  # the recapture: the same shapes, in reverse
                again = sweeps / f"{op}_validation.recapture.json"
                again.write_text(json.dumps({**data, "shapes": order[::-1]}, indent=1) + "\n")
                est_again = est * RECAPTURE_FACTOR + args.process_s
                captures.append(_capture(op, purpose, True, again, out, shapes, est_again))
    order = {"calibration": 0, "validation": 1, "recapture": 2}
    captures.sort(key=lambda c: order[c["kind"]])  # stable: ops in the order asked
    return {
        "target": args.target,
        "record_as": record_as,
        "ops": list(args.ops),
        "knobs": {
            "cal_n": args.cal_n,
            "val_n": args.val_n,
            "rounds": args.rounds,
            "max_time_per_shape_s": args.max_time_per_shape,
            "energy_window_s": round(window_s, 3),
            "process_s": args.process_s,
            "capture_s": args.capture_s,
        },
        "int8_matmul": rules,
        "dropped": dropped,
        "rows": rows,
        "total_rows": sum(c["rows"] for c in captures),
        "estimated_s": round(sum(c["estimated_s"] for c in captures), 1),
        "captures": captures,
    }


def _capture(
    op: str, purpose: str, recapture: bool, sweep: Path, out: Path, rows: int, est: float
) -> dict[str, Any]:
    return {
        "op": op,
        "purpose": purpose,
        "kind": "recapture" if recapture else purpose,
        "recapture": recapture,
        "sweep": str(sweep),
        "out": str(out),
        "rows": rows,
        "estimated_s": round(est, 1),
    }


def budget_table(plan: dict[str, Any]) -> str:
    """The plan's rows per op, dtype and purpose, and its seconds."""
    lines = [f"{'op':<11} {'dtype':<6} {'calibration':>11} {'validation':>10} {'recapture':>9}"]
    for op, by_dtype in plan["rows"].items():
        for dtype, n in by_dtype.items():
            lines.append(
                f"{op:<11} {dtype:<6} {n.get('calibration', 0):>11} "
                f"{n.get('validation', 0):>10} {n.get('recapture', 0):>9}"
            )
    kinds = {k: sum(c["rows"] for c in plan["captures"] if c["kind"] == k) for k in
             ("calibration", "validation", "recapture")}  # fmt: skip
    lines.append(
        f"{'total':<18} {kinds['calibration']:>11} {kinds['validation']:>10} "
        f"{kinds['recapture']:>9}   = {plan['total_rows']} rows"
    )
    lines.append(f"{'capture':<22} {'rows':>4}  estimated s")
    for c in plan["captures"]:
        lines.append(f"{c['op'] + ' ' + c['kind']:<22} {c['rows']:>4}  {c['estimated_s']:>11.0f}")
    knobs = plan["knobs"]
    lines.append(
        f"estimated {plan['estimated_s']:.0f} s of capture for {plan['total_rows']} rows "
        f"({plan['estimated_s'] / max(plan['total_rows'], 1):.2f} s a row: graphsval's estimate, "
        f"a {knobs['energy_window_s']:.2f} s energy window per shape and round, "
        f"{knobs['process_s']:.0f} s per capture process); the budget is {knobs['capture_s']} s"
    )
    return "\n".join(lines)


def cmd_plan(args: argparse.Namespace) -> int:
    plan = plan_captures(args)
    run = Path(args.dir)
    (run / "plan.json").write_text(json.dumps(plan, indent=2) + "\n")
    with (run / "captures.tsv").open("w") as handle:
        for c in plan["captures"]:
            fields = (c["op"], c["purpose"], int(c["recapture"]), c["sweep"], c["out"], c["rows"])
            handle.write("\t".join(str(f) for f in fields) + f"\t{math.ceil(c['estimated_s'])}\n")
    for line in plan["dropped"]:
        print(f"== left out: {line}")
    print(budget_table(plan))
    if plan["estimated_s"] > args.capture_s:
        print(
            f"warning: the estimate is above the {args.capture_s} s budget: each capture stops "
            "at its share of the budget (the shapes are ordered so that a cut keeps a spread)"
        )
    return 0


# --- recapture-sweep ------------------------------------------------------------------------


def measured_keys(path: Path) -> set[tuple[str, str]]:
    """(shape, dtype) of every measured row of a baseline CSV (none if it is missing)."""
    if not path.exists():
        return set()
    with path.open(newline="") as handle:
        return {(r["shape"], r["dtype"]) for r in csv.DictReader(handle) if r.get("latency_s")}


def cmd_recapture_sweep(args: argparse.Namespace) -> int:
    """The validation sweep's shapes that its capture measured, in reverse order (a
    recapture of one round per shape would visit them in the same order)."""
    data = json.loads(Path(args.sweep).read_text())
    done = measured_keys(Path(args.csv))
    entries = [
        e for e in data["shapes"] if ("x".join(str(d) for d in e["shape"]), e["dtype"]) in done
    ]
    Path(args.out).write_text(json.dumps({**data, "shapes": entries[::-1]}, indent=1) + "\n")
    print(len(entries))
    return 0


# --- summary --------------------------------------------------------------------------------


def _floats(rows: Sequence[dict[str, str]], column: str) -> list[float]:
    out = []
    for r in rows:
        try:
            out.append(float(r.get(column) or "nan"))
        except ValueError:
            continue
    return [v for v in out if not math.isnan(v)]


def _details(rows: Sequence[dict[str, str]], key: str) -> list[float]:
    out = []
    for r in rows:
        try:
            value = json.loads(r.get("details") or "{}").get(key)
        except json.JSONDecodeError:
            continue
        if isinstance(value, int | float):
            out.append(float(value))
    return out


def _span(values: Sequence[float], fmt: str) -> str:
    if not values:
        return "-"
    return f"{min(values):{fmt}}..{statistics.median(values):{fmt}}..{max(values):{fmt}}"


def summarise(run: Path) -> tuple[list[str], dict[tuple[str, str, str], int]]:
    """One line per CSV under ``run/baselines`` and the rows measured per
    (op, dtype, kind)."""
    lines = []
    counts: dict[tuple[str, str, str], int] = {}
    for path in sorted((run / "baselines").rglob("*.csv")):
        with path.open(newline="") as handle:
            rows = list(csv.DictReader(handle))
        kind = "recapture" if path.parent.name == "recapture" else path.name.split(".")[-2]
        ok = [r for r in rows if r.get("latency_s")]
        for r in ok:
            key = (r["op"], r["dtype"], kind)
            counts[key] = counts.get(key, 0) + 1
        wrong = [r for r in rows if r.get("verdict") == "FAIL"]
        energy = [r for r in ok if r.get("energy_j")]
        wide = [r for r in ok if float(r.get("spread_ci_rel") or 0) > 0.02]
        suspect = [r for r in ok if r.get("suspect")]
        name = f"recapture/{path.name}" if kind == "recapture" else path.name
        lines.append(
            f"{name}: {len(rows)} rows, {len(rows) - len(ok)} failed, {len(wrong)} incorrect, "
            f"{len(energy)} with energy, {len(wide)} with CI above 2%, {len(suspect)} suspect; "
            f"energy window s {_span(_floats(ok, 'energy_window_s'), '.2f')}, "
            f"SM MHz after {_span(_details(ok, 'sm_clock_mhz_after'), '.0f')}, "
            f"C after {_span(_details(ok, 'temperature_c_after'), '.0f')}"
        )
        for r in rows:
            if not r.get("latency_s"):
                lines.append(f"  failed: {r['shape']} {r['dtype']}: {r.get('notes', '')[:160]}")
    return lines, counts


def cmd_summary(args: argparse.Namespace) -> int:
    run = Path(args.dir)
    lines, counts = summarise(run)
    for line in lines:
        print(line)
    plan_file = run / "plan.json"
    if not plan_file.exists():
        return 0
    plan = json.loads(plan_file.read_text())
    short = []
    for op, by_dtype in plan["rows"].items():
        for dtype, planned in by_dtype.items():
            for kind, n in planned.items():
                got = counts.get((op, dtype, kind), 0)
                if got < n:
                    short.append(f"{op} {dtype} {kind} {got}/{n}")
    measured = sum(counts.values())
    print(f"rows measured: {measured} of {plan['total_rows']} planned")
    if short:
        print("short of the plan: " + ", ".join(short))
        return 2
    return 0


# --- main -----------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("imports").set_defaults(func=cmd_imports)
    p = sub.add_parser("gpu")
    p.add_argument("out")
    p.add_argument("--dry-run", action="store_true")
    p.set_defaults(func=cmd_gpu)
    p = sub.add_parser("pick")
    p.add_argument("targets")
    p.set_defaults(func=cmd_pick)
    p = sub.add_parser("plan")
    p.add_argument("--target", required=True)
    p.add_argument("--ops", nargs="+", required=True)
    p.add_argument("--dtypes", nargs="*", default=[])
    p.add_argument("--cal-n", type=int, required=True)
    p.add_argument("--val-n", type=int, required=True)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--max-time-per-shape", type=float, required=True)
    p.add_argument("--process-s", type=float, default=5.0)
    p.add_argument("--capture-s", type=int, required=True)
    p.add_argument("--gpu", help="the gpu step's JSON (int8 matmul rules)")
    p.add_argument("--workspace", required=True)
    p.add_argument("-p", "--plugin", action="append", default=[])
    p.add_argument("--dir", required=True)
    p.set_defaults(func=cmd_plan)
    p = sub.add_parser("recapture-sweep")
    p.add_argument("--csv", required=True, help="the validation capture")
    p.add_argument("--sweep", required=True, help="the validation sweep")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_recapture_sweep)
    p = sub.add_parser("summary")
    p.add_argument("dir")
    p.set_defaults(func=cmd_summary)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
