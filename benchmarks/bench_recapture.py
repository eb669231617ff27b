"""Benchmark: capture vs recapture agreement of host baselines, against the
noise floor of their machine kind, and what more rounds buy.

Run: python benchmarks/bench_recapture.py [BASELINES_DIR]
(default: the shipped plugins/graphsval_cpu/graphsval_cpu/baselines; a
workspace's ``baselines`` folder works too). Prints figures; asserts nothing.

For each (target, op) with a recapture: the median |capture - recapture| /
recapture over shapes (the first capture, before any re-measure), the share
of shapes within 10%, the share of suspect rows, and the same agreement had
the capture stopped after k of its rounds (the median of the first k round
medians of both files, from ``round_latencies_s``), with the capture time
those k rounds took (the sum of the rounds' timed work is not recorded, so
time is given as k / rounds of the whole).

Goals (issue 14): Intel Xeon VMs: median 4% or less and at least 80% within
10%; AMD EPYC VMs: 8% or less and at least 70%; fewer than 2% suspect rows.
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

GOALS = {"intel": (0.04, 0.80), "amd": (0.08, 0.70)}
SUSPECT_GOAL = 0.02


def _rows(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    with path.open(newline="") as handle:
        return {(r["shape"], r["dtype"]): r for r in csv.DictReader(handle) if r["latency_s"]}


def _first(row: dict[str, str]) -> float:
    return float(row.get("first_latency_s") or row["latency_s"])


def _rounds(row: dict[str, str]) -> list[float]:
    return [float(v) for v in (row.get("round_latencies_s") or "").split()]


def _agreement(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    diffs = [abs(a - b) / b for a, b in pairs]
    return statistics.median(diffs), sum(d <= 0.10 for d in diffs) / len(diffs)


def main(folder: Path) -> None:
    recaptures = sorted((folder / "recapture").glob("*.csv"))
    if not recaptures:
        print(f"{folder}: no recapture/ files")
        return
    for again_path in recaptures:
        main_path = folder / again_path.name
        if not main_path.exists():
            continue
        main_rows, again_rows = _rows(main_path), _rows(again_path)
        keys = sorted(set(main_rows) & set(again_rows))
        if not keys:
            continue
        kind = "amd" if "amd" in main_path.name else "intel"
        goal_median, goal_within = GOALS[kind]
        median, within = _agreement([(_first(main_rows[k]), float(again_rows[k]["latency_s"]))
                                     for k in keys])  # fmt: skip
        suspect = sum(bool(main_rows[k].get("suspect")) for k in keys) / len(keys)
        remeasured = sum(bool(main_rows[k].get("first_latency_s")) for k in keys)
        ok = median <= goal_median and within >= goal_within and suspect < SUSPECT_GOAL
        print(
            f"{main_path.name}: {len(keys)} shapes, median diff {median:.1%}, "
            f"{within:.0%} within 10%, {suspect:.1%} suspect, {remeasured} re-measured after "
            f"the recapture; goal ({kind}) median <= {goal_median:.0%}, >= {goal_within:.0%} "
            f"within 10%, < {SUSPECT_GOAL:.0%} suspect: {'met' if ok else 'NOT met'}"
        )
        rounds = min(len(_rounds(main_rows[k])) for k in keys)
        if rounds < 2 or any(len(_rounds(again_rows[k])) < rounds for k in keys):
            continue
        for k_rounds in range(1, rounds + 1):
            pairs = [
                (
                    statistics.median(_rounds(main_rows[k])[:k_rounds]),
                    statistics.median(_rounds(again_rows[k])[:k_rounds]),
                )
                for k in keys
            ]
            m, w = _agreement(pairs)
            print(
                f"    first {k_rounds} of {rounds} rounds ({k_rounds / rounds:.0%} of the time): "
                f"median diff {m:.1%}, {w:.0%} within 10%"
            )


if __name__ == "__main__":
    default = Path(__file__).resolve().parents[1] / "plugins/graphsval_cpu/graphsval_cpu/baselines"
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
