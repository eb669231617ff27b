"""Large baselines (issue 17 item 5): a named file is validated a block of
rows at a time, and a run that lists no record keeps figures, not records.
Whatever the blocks and whether records are kept, the summary and the
terminal say the same; bad input in a later block is still one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from graphsval_core.cli.main import cli
from graphsval_core.files import baseline_stream
from graphsval_core.plugins.loader import build_registry
from graphsval_core.validate import workflow
from graphsval_core.validate.attribution import add_cells, attribute, build_cells
from graphsval_core.validate.records import Records
from graphsval_core.validate.summary import summary_dict
from graphsval_core.validate.tally import WORST_KEPT, Tally, worst_key
from graphsval_core.validate.terminal import Screen, summary_lines
from graphsval_core.validate.workflow import LISTED_KEPT, ValidateOptions, reports, validate

SHIPPED = Path(__file__).resolve().parents[2] / "plugins/graphsval_cpu/graphsval_cpu/baselines"
HEADER = "hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes"


def _big(tmp_path: Path) -> Path:
    """The shipped Xeon validation rows in one named file, with a failed
    capture, an implausibly fast row and an energy per row (so every list
    apart and every verdict has members)."""
    rows = []
    for op in ("matmul", "linear", "vector_add"):
        text = (SHIPPED / f"host_intel_xeon_2c_1t_{op}.validation.csv").read_text()
        rows += [line.split(",")[:8] for line in text.splitlines()[1:] if line]
    for i, row in enumerate(rows):
        row[5] = row[5] or f"{float(row[4]) * 60:.6g}"  # ~60 W
        row[7] = "" if i % 3 else "n"
    rows.append(["host_intel_xeon_2c_1t", "vector_add", "8", "fp32", "", "", "0", "failed: oom"])
    rows.append(["host_intel_xeon_2c_1t", "matmul", "4096x4096x4096", "fp32", "1e-9", "", "1", ""])
    path = tmp_path / "xeon.validation.csv"
    path.write_text("\n".join([HEADER, *(",".join(r) for r in rows)]) + "\n")
    return path


def _run(path: Path, monkeypatch, chunk: int, records: bool):
    monkeypatch.setattr(baseline_stream, "CHUNK_LINES", chunk)
    result = validate(build_registry(), ValidateOptions(baselines=[str(path)], records=records))
    monkeypatch.undo()
    return result


def _comparable(summary) -> dict:
    """The summary with its lists apart in file order (blocks group rows apart)."""
    out = summary_dict(summary)
    for key in ("excluded", "suspect", "near_boundary", "unplaced"):
        out[key] = sorted(out[key], key=lambda item: (item["line"], str(item)))
    return out


def test_blocks_and_kept_records_change_nothing_the_summary_says(tmp_path, monkeypatch):
    path = _big(tmp_path)
    whole = _run(path, monkeypatch, 65_536, True)
    summary = whole.summary
    assert summary.checked > 500 and summary.failed and summary.drift
    assert summary.excluded and summary.suspect and summary.near_boundary and summary.unplaced
    screen = Screen(100)
    expected = summary_lines(summary, whole.validation, screen, failed=whole.failed)
    for chunk in (7, 100):
        blocks = _run(path, monkeypatch, chunk, True)
        assert _comparable(blocks.summary) == _comparable(summary)
        # records and the lists apart in the order of one whole-file grouping
        assert summary_dict(blocks.summary) == summary_dict(summary)
        assert list(blocks.validation.records.line) == list(whole.validation.records.line)
        lines = summary_lines(blocks.summary, blocks.validation, screen, failed=blocks.failed)
        assert lines == expected
        figures = _run(path, monkeypatch, chunk, False)
        assert not len(figures.validation.records) and not figures.validation.kept
        assert figures.validation.size == summary.records
        lines = summary_lines(figures.summary, figures.validation, screen, failed=figures.failed)
        assert lines == expected
        kept = summary_dict(figures.summary)
        for key in ("excluded", "suspect", "near_boundary", "unplaced"):
            assert figures.summary.total(key) == len(getattr(summary, key))
            assert len(kept[key]) == min(LISTED_KEPT, len(getattr(summary, key)))
            assert kept[key] == summary_dict(blocks.summary)[key][:LISTED_KEPT]
            kept[key] = summary_dict(blocks.summary)[key]
        assert kept == summary_dict(blocks.summary)
        with pytest.raises(ValueError, match="list every record"):
            reports(figures, build_registry())


def test_cells_added_a_part_at_a_time_attribute_as_one(tmp_path, monkeypatch):
    records = _run(_big(tmp_path), monkeypatch, 65_536, True).validation.records
    whole = build_cells(records)
    parts: dict = {}
    for start in range(0, len(records), 37):
        add_cells(parts, records.take(np.arange(start, min(start + 37, len(records)))))
    assert list(parts) == list(whole)
    for key, cell in whole.items():
        assert parts[key].text() == cell.text()
        assert attribute(parts[key]) == attribute(cell)


@pytest.mark.parametrize("part", [1, 3, 40])
def test_the_worst_failures_kept_are_the_worst_of_all_ties_to_the_first(part):
    rng = np.random.default_rng(part)
    n = 400
    error = np.round(rng.lognormal(0, 1, size=n) - 1, 1).clip(-0.9, None)  # ties among them
    error[rng.random(n) < 0.05] = np.nan
    records = Records.build(
        n,
        hardware="t",
        op="o",
        dtype="fp32",
        status="checked",
        passed=(rng.random(n) < 0.2).tolist(),
        latency_error=error,
        line=np.arange(n),
    )
    tally = Tally()
    for start in range(0, n, part):
        tally.add(records.take(np.arange(start, min(start + part, n))))
    failing = np.flatnonzero(records.passed == False)  # noqa: E712
    expected = failing[np.argsort(worst_key(records.take(failing)), kind="stable")][:WORST_KEPT]
    kept = tally.worst
    assert list(kept.line) == sorted(expected.tolist())  # kept in record order
    ranked = kept.line[np.argsort(worst_key(kept), kind="stable")]
    assert list(ranked) == expected.tolist()
    assert tally.failed == failing.size


def test_the_terminal_summary_keeps_no_record(tmp_path, monkeypatch):
    seen = []
    run = workflow.validate

    def spy(registry, options):
        seen.append(options.records)
        return run(registry, options)

    monkeypatch.setattr(workflow, "validate", spy)
    path = str(_big(tmp_path))
    for args, records in (
        ([], False),
        (["-q"], False),
        (["-v"], True),
        (["--format", "json"], True),
    ):
        result = CliRunner().invoke(cli, ["validate", "--baseline", path, *args])
        assert result.exit_code == 1, result.output  # the Xeon rows fail: a verdict, no crash
        assert "FAILED" in result.output or '"records"' in result.output
        assert seen.pop() is records, args


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("host_intel_xeon_2c_1t,matmul,64x64x64,fp99,1e-3,,1,", "dtype 'fp99' is not a known"),
        ("host_intel_xeon_2c_1t,matmul,1x1x8,fp32,2e-3,,1,", "measured at line 2 already"),
        ("nope,matmul,8x8x8,fp32,1e-3,,1,", "hardware: unknown target 'nope'"),
    ],
)
def test_bad_input_in_a_later_block_is_one_line(tmp_path, monkeypatch, row, message):
    rows = [f"host_intel_xeon_2c_1t,matmul,{i + 1}x1x8,fp32,1e-3,,1," for i in range(40)]
    rows.insert(30, row)
    path = tmp_path / "x.validation.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    monkeypatch.setattr(baseline_stream, "CHUNK_LINES", 8)
    result = CliRunner().invoke(cli, ["validate", "--baseline", str(path)])
    assert result.exit_code == 2, result.output
    assert f"{path}:32: " in result.output and message in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_an_unknown_name_a_line_long_is_cut_in_the_error(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text(f"{HEADER}\n{'x' * 100_000},matmul,8x8x8,fp32,1e-5,,5,\n")
    result = CliRunner().invoke(cli, ["validate", "--baseline", str(path)])
    assert result.exit_code == 2
    (line,) = [x for x in result.output.splitlines() if x.startswith("Error:")]
    assert f"unknown target '{'x' * 37}...'" in line
    # the name is cut; the list of known targets after it grows with the plugins
    named, known = line.split("; known: ")
    assert len(named) < 200 + len(str(path)) and "x" * 100 not in known
