"""The report files of ``validate --out``: Markdown that a parser renders as
the tables and lists it means, an HTML page whose lists are lists, whose
records sort, filter and are reached from the heatmap, and records carrying
the structured terms that ``explain --json`` gives."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from graphsval_core.cli.main import cli
from graphsval_core.validate.roofline import spread_up

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reports")
    result = CliRunner().invoke(
        cli, ["validate", "--hw", "i7_12700k", "--hw", "jetson_orin_nano_8gb", "--out", str(out)]
    )
    assert result.exit_code in (0, 1), result.output
    return out


def _tables(tokens: list) -> list[tuple[int, list[int]]]:
    """Per parsed table: its heading's cells and each body row's cells."""
    out, head, rows, cells, section = [], 0, [], 0, None
    for t in tokens:
        if t.type in ("thead_open", "tbody_open"):
            section = t.type
        elif t.type == "tr_open":
            cells = 0
        elif t.type in ("th_open", "td_open"):
            cells += 1
        elif t.type == "tr_close":
            if section == "thead_open":
                head = cells
            else:
                rows.append(cells)
        elif t.type == "table_close":
            out.append((head, rows))
            rows = []
    return out


def test_markdown_renders_every_table_and_list(reports):
    text = (reports / "report.md").read_text()
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    blocks = re.findall(r"(?m)^\|.*\n\|---", text)  # a heading row followed by its delimiter
    tables = _tables(tokens)
    assert len(tables) == len(blocks) >= 3  # every table parses as one (none falls to text)
    for head, rows in tables:
        assert rows and all(n == head for n in rows)
    items = sum(1 for t in tokens if t.type == "list_item_open")
    baselines = len(
        json.loads((reports / "report.json").read_text())["summary"]["header"]["baselines"]
    )
    assert items >= baselines  # the baselines are a list, not one paragraph
    assert str(REPO) not in text and "sha256" in text  # no absolute path of the checkout
    # the heatmap's cells are read as the text report reads them (from the newcomer)
    heatmap = text.split("## Heatmap", 1)[1]
    assert heatmap.lstrip().startswith("cells: OK passed/n, or FAIL R<regime> L<latency>")


def test_html_lists_are_lists_and_cells_lead_to_their_records(reports):
    page = (reports / "report.html").read_text()
    assert page.count("<li>") > 0
    for block in re.split(r"</ul>", page)[:-1]:
        assert "<ul" in block  # every item sits in a list
    assert page.count("<ul") == page.count("</ul>")
    assert page.split("</ul>")[-1].count("<li>") == 0
    cells = set(re.findall(r'<a href="#records" data-cell="([^"]+)"', page))
    rows = set(re.findall(r'<tr class="[^"]*" [^>]*data-cell="([^"]+)"', page))
    assert cells and cells <= rows  # each heatmap cell has its records in the table
    assert 'id="record-table"' in page and 'id="filter-text"' in page
    assert 'data-type="num"' in page  # numeric columns sort as numbers
    assert page.count("roofline") >= 2 and "data:image/png;base64," in page


def test_records_carry_the_terms_explain_gives(reports):
    (row,) = [
        r
        for r in csv.DictReader((reports / "records.csv").open())
        if r["hardware"] == "i7_12700k" and r["op"] == "matmul" and r["status"] == "checked"
    ][:1]
    result = CliRunner().invoke(
        cli,
        ["explain", "--hw", "i7_12700k", "--op", "matmul", "--shape", row["shape"],
         "--dtype", row["dtype"], "--json"],
    )  # fmt: skip
    explained = json.loads(result.output)
    details, terms = explained["details"], explained["terms"]
    for tier, moved in details["bytes_per_tier"].items():
        assert float(row[f"bytes_{tier}"]) == pytest.approx(moved)
        assert float(row[f"memory_{tier}_s"]) == pytest.approx(details["time_per_tier_s"][tier])
    for name in ("launch_s", "compute_s", "pack_s", "first_touch_s", "energy_static_j"):
        assert float(row[name]) == pytest.approx(terms[name])
    record = json.loads((reports / "report.json").read_text())["records"][0]
    assert {"bytes_l1", "memory_dram_s", "energy_compute_j", "energy_static_j"} <= set(record)
    assert not record["file"].startswith("/")


def test_roof_labels_never_overlap():
    heights = spread_up([1.0, 1.05, 1.1, 3.0, 2.99], 0.2)
    ordered = sorted(heights)
    assert all(b - a >= 0.2 - 1e-12 for a, b in zip(ordered, ordered[1:], strict=False))
    assert heights[3] >= 3.0 and heights[0] == 1.0


def test_json_reports_hold_no_nan_or_infinity():
    """JSON has no NaN or Infinity: an overflowed number is written as null."""
    import json as _json

    from graphsval_core.validate.report import json_safe

    body = {"e": float("inf"), "rows": [{"x": float("nan"), "y": 1.5}], "t": (float("-inf"),)}
    text = _json.dumps(json_safe(body), allow_nan=False)
    assert _json.loads(text) == {"e": None, "rows": [{"x": None, "y": 1.5}], "t": [None]}


def test_a_baseline_named_with_an_escape_never_carries_it_into_a_report(tmp_path, monkeypatch):
    """A baseline whose file name holds an escape sequence (``\\x1b[2J``
    clears a terminal) or an invisible character (a right-to-left override)
    went raw into records.csv's ``file`` column, report.md, report.html
    (warnings too) and the terminal's ``-v`` report: every report people read
    and records.csv, which has no escapes of its own, show it as Python
    writes it (``\\x1b``), HTML-escaped in the page; report.json keeps the
    name exact (its encoder writes ``\\u001b``); so do ``explain`` and
    ``registry lookup``."""
    from graphsval_core.datamodel.errors import CONTROL

    monkeypatch.chdir(tmp_path)
    host = "host_intel_xeon_2c_1t"
    shipped = REPO / f"plugins/graphsval_cpu/graphsval_cpu/baselines/{host}_vector_add"
    lines = Path(f"{shipped}.calibration.csv").read_text().splitlines(keepends=True)
    name = "x\x1b[2J<xx>\u202ey.csv"
    shown = "x\\x1b[2J<xx>\\u202ey.csv"
    Path(name).write_text("".join([*lines, lines[1]]))  # a row repeated: a warning names it
    argv = ["validate", "--baseline", name, "--purpose", "calibration"]
    result = CliRunner().invoke(cli, [*argv, "--out", "out"])
    assert result.exit_code in (0, 1), result.output

    def plain(text: str) -> str:
        assert CONTROL.search(text.replace("\n", "")) is None, CONTROL.search(
            text.replace("\n", "")
        )
        return text

    records = list(csv.DictReader(io.StringIO(plain((tmp_path / "out/records.csv").read_text()))))
    assert {r["file"] for r in records} == {shown}
    warned = f"{shown}: 1 row(s) repeat an earlier row exactly"
    md = plain((tmp_path / "out/report.md").read_text())
    assert f"- {shown.replace('<xx>', '&lt;xx&gt;')} (sha256 " in md
    assert f"- {warned.replace('<xx>', '&lt;xx&gt;')}" in md
    page = plain((tmp_path / "out/report.html").read_text())
    assert "<xx>" not in page
    assert f"<li>{warned.replace('<xx>', '&lt;xx&gt;')}" in page
    assert f"<dd>{shown.replace('<xx>', '&lt;xx&gt;')}:2</dd>" in page
    raw = (tmp_path / "out/report.json").read_text()
    assert raw.isascii() and "\\u001b[2J<xx>\\u202ey.csv" in raw
    report = json.loads(raw)
    assert {r["file"] for r in report["records"]} == {name}
    assert [b["path"] for b in report["summary"]["header"]["baselines"]] == [name]
    assert any(w.startswith(f"{name}: 1 row(s) repeat") for w in report["summary"]["warnings"])
    for fmt in (["-v"], ["--format", "markdown"]):
        said = CliRunner().invoke(cli, [*argv, *fmt])
        assert said.exit_code in (0, 1), said.output
        assert shown.replace("<xx>", "&lt;xx&gt;" if "markdown" in fmt else "<xx>") in plain(
            said.output
        )
    shape = records[0]["shape"]
    one = ["--hw", host, "--op", "vector_add", "--shape", shape, "--dtype", records[0]["dtype"]]
    looked = CliRunner().invoke(cli, ["registry", "lookup", *one, "--baseline", name])
    assert f"\nfile: {shown}\n" in plain(looked.output), looked.output
    looked = CliRunner().invoke(cli, ["registry", "lookup", *one, "--baseline", name, "--json"])
    assert json.loads(looked.stdout)["file"] == name
    explained = CliRunner().invoke(cli, ["explain", *one, "--baseline", name])
    assert f"measured ({shown}:2)" in plain(explained.output), explained.output
    explained = CliRunner().invoke(cli, ["explain", *one, "--baseline", name, "--json"])
    assert json.loads(explained.stdout)["measured"]["file"] == name
