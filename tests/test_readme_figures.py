"""The README quotes fitted constants of the shipped calibrations in its prose
(the i7's L2 at 115 GB/s, the Intel host's overlap 0.18 +- 0.40). Each quote
is rendered here from the shipped calibration files, so a recalibration that
moves a constant fails this test, naming the phrase to update, instead of
leaving the README stale (sessions 44-45 found five such figures out of date).

The notebook (docs/model-fidelity.md) is a record of what each session
measured at the time and is not checked."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from graphsval_core.plugins.loader import build_registry

ROOT = Path(__file__).resolve().parents[1]
CALIBRATIONS = ROOT / "plugins" / "graphsval_cpu" / "graphsval_cpu" / "calibration"

I7 = "i7_12700k"
INTEL = "host_intel_xeon_2c_1t"
ZEN3 = "host_amd_epyc_2c_1t"
ZEN4 = "host_amd_epyc_zen4_2c_1t"


def _constant(target: str, key: str) -> dict:
    data = json.loads((CALIBRATIONS / f"{target}.calibration.json").read_text())
    return data["constants"][key]


def _v(target: str, key: str) -> float:
    return float(_constant(target, key)["value"])


def _spread(target: str, key: str) -> float:
    """A share's own spread, as `targets --hw` prints it: value x relative uncertainty."""
    c = _constant(target, key)
    return float(c["value"]) * float(c["relative_uncertainty"])


def _tier_gbps(target: str, tier: str) -> float:
    spec = build_registry().target(target)
    return next(t for t in spec.tiers if t.name == tier).effective_bandwidth_bps / 1e9


def _us(target: str, key: str) -> float:
    return _v(target, key) * 1e6


def _gbps(target: str, key: str) -> float:
    return _v(target, key) / 1e9


def _product_l2_gbps(target: str, dtype: str) -> float:
    """What a packed product of ``dtype`` reads the L2 at: the tier's rate x
    its product share x the library's share."""
    return (
        _tier_gbps(target, "l2")
        * _v(target, "tiers.l2.product_fraction")
        * _v(target, f"product_bandwidth_fraction.{dtype}")
    )


# Each quote as the README words it, the figures filled in from the shipped files.
QUOTES: list[Callable[[], str]] = [
    lambda: (
        f"i7's L2 fits at {_tier_gbps(I7, 'l2'):.0f} GB/s, "
        f"{_v(I7, 'tiers.l2.achievable_fraction'):.3f} of nominal"
    ),
    lambda: (
        f"Zen 4 fits {_v(ZEN4, 'product_overlap.fp32'):.2f} for fp32, "
        f"{_v(ZEN4, 'product_overlap.int8'):.2f} for int8 and "
        f"{_v(ZEN4, 'product_overlap.bf16'):.2f} for bf16"
    ),
    lambda: (
        f"Intel host's fp32 {_v(INTEL, 'product_overlap.fp32'):.2f} +- "
        f"{_spread(INTEL, 'product_overlap.fp32'):.2f} is barely identified"
    ),
    lambda: (
        f"the Zen 3's fp32 is not identified, {_v(ZEN3, 'product_overlap.fp32'):.2f} +- "
        f"{_spread(ZEN3, 'product_overlap.fp32'):.2f}"
    ),
    lambda: (
        f"costs the i7 {_us(I7, 'gemv_fork_join_s.fp32'):.1f} us against the GEMMs' "
        f"{_us(I7, 'fork_join_s'):.1f}"
    ),
    lambda: (
        f"MKL's fp32 at {_v(INTEL, 'product_bandwidth_fraction.fp32'):.2f}, "
        f"oneDNN's bf16 at {_v(INTEL, 'product_bandwidth_fraction.bf16'):.2f} and "
        f"int8 at {_v(INTEL, 'product_bandwidth_fraction.int8'):.2f}"
    ),
    lambda: (
        f"on the host {_v(INTEL, 'tiers.l2.product_fraction'):.2f} of the L2's streaming "
        f"rate, which the adds put at {_v(INTEL, 'tiers.l2.achievable_fraction'):.2f} of "
        f"nominal, {_tier_gbps(INTEL, 'l2'):.0f} GB/s"
    ),
    lambda: (
        f"fp32 add takes fresh pages at {_gbps(INTEL, 'vector_first_touch_bps.fp32'):.1f} "
        f"GB/s, its bf16 add at {_gbps(INTEL, 'vector_first_touch_bps.bf16'):.1f}, the "
        f"products at {_gbps(INTEL, 'first_touch_bps'):.1f}"
    ),
    lambda: (
        f"share is loosely pinned ({_v(INTEL, 'in_place_fraction.bf16'):.2f} +- "
        f"{_spread(INTEL, 'in_place_fraction.bf16'):.2f}"
    ),
    lambda: (
        f"the Zen 4 DRAM's {_tier_gbps(ZEN4, 'dram'):.0f} GB/s, not the "
        f"{_tier_gbps(ZEN4, 'dram') * _v(ZEN4, 'product_bandwidth_fraction.bf16'):.1f} GB/s "
        "share of it a bf16 product"
    ),
    lambda: f"(`pack_a_bps`, {_gbps(INTEL, 'pack_a_bps.fp32'):.1f} GB/s on the host",
    lambda: (
        f"where {_v(INTEL, 'tiers.l2.product_fraction'):.2f} of the products' share gave "
        f"{_product_l2_gbps(INTEL, 'fp32'):.0f}"
    ),
    lambda: f"a share's own spread `+- {_spread(INTEL, 'in_place_fraction.bf16'):.2f}`",
    lambda: (
        f"(the Zen 3 {_v(ZEN3, 'gemv_fraction.fp32'):.2f}, the Zen 4 "
        f"{_v(ZEN4, 'gemv_fraction.fp32'):.2f}, against their products' "
        f"{_v(ZEN3, 'product_bandwidth_fraction.fp32'):.2f} and "
        f"{_v(ZEN4, 'product_bandwidth_fraction.fp32'):.2f})"
    ),
    lambda: (
        f"the Zen 3 fits {_v(ZEN3, 'narrow_n_fraction.fp32'):.2f} +- "
        f"{_spread(ZEN3, 'narrow_n_fraction.fp32'):.2f}, the Zen 4 "
        f"{_v(ZEN4, 'narrow_n_fraction.fp32'):.2f} +- "
        f"{_spread(ZEN4, 'narrow_n_fraction.fp32'):.2f})"
    ),
]


def _readme_text() -> str:
    """The README with its line breaks folded, so a quote may wrap."""
    return re.sub(r"\s+", " ", (ROOT / "README.md").read_text())


# ids by position: a quote is rendered only inside its test, so a constant a
# recalibration drops fails that quote alone, not the collection of the module
@pytest.mark.parametrize("quote", QUOTES, ids=[f"quote{i}" for i in range(len(QUOTES))])
def test_readme_quotes_the_shipped_calibration(quote: Callable[[], str]) -> None:
    phrase = quote()
    assert phrase in _readme_text(), (
        f"README.md no longer quotes the shipped calibration; expected: {phrase!r}"
    )


def test_a_stale_figure_is_caught():
    """The README as it read before session 46 (the i7's L2 at 103 GB/s, not
    the shipped 115): that quote's test fails, the others still pass."""
    quote = QUOTES[0]
    phrase = quote()
    shipped = f"{_tier_gbps(I7, 'l2'):.0f} GB/s"
    assert shipped in phrase
    stale = _readme_text().replace(phrase, phrase.replace(shipped, "103 GB/s"))
    assert phrase not in stale
    assert all(q() in stale for q in QUOTES[1:])


# a row of the README's fidelity table: target, op, grouped CV, validation set, within 10%
TABLE_ROW = re.compile(
    r"^\| `(?P<key>[a-z0-9_]+)` / (?P<op>[a-z_]+) \((?P<rows>[^)]*)\) "
    r"\| (?P<gcv>[^|]+) \| (?P<val>[^|]+) \| (?P<w10>[^|]+) \|$",
    re.MULTILINE,
)


def _fit_of(key: str) -> dict:
    """The fit section of the calibration file a plugin of this repository ships for ``key``."""
    (path,) = ROOT.glob(f"plugins/*/*/calibration/{key}.calibration.json")
    return json.loads(path.read_text())["fit"]


def _pct(x: float, digits: int) -> str:
    return f"{100 * x:.{digits}f}%"


def _table_problems(text: str) -> list[str]:
    """What the fidelity table in README ``text`` says that the shipped calibration
    files do not (one line per figure), or that it lacks a row."""
    start = text.index("| target / op | grouped CV |", text.index("Out-of-sample fidelity"))
    block = text[start : text.index("\n\n", start)].splitlines()[2:]  # past head and rule
    rows = [TABLE_ROW.match(line) for line in block]
    unread = [line for line, m in zip(block, rows, strict=True) if m is None]
    if unread or len(rows) != 15:
        return [f"the fidelity table: {len(rows)} rows, not 15 (one per target and op); {unread}"]
    problems = []
    for m in rows:
        fit = _fit_of(m["key"])
        gcv = fit["grouped_cv"]["per_op"][m["op"]]
        val = fit.get("validation", {}).get("per_op", {}).get(m["op"])
        want = {
            "gcv": f"{_pct(gcv['median_abs_error'], 1)} / {_pct(gcv['within_band'], 0)}",
            "rows": str(gcv["rows"]),
            "val": "-",
            "w10": "-",
        }
        got = {k: m[k].strip().removesuffix(" rows") for k in want}
        if val is not None:
            want["val"] = f"{_pct(val['median_abs_error'], 1)} / {_pct(val['within_band'], 0)}"
            want["rows"] = f"{gcv['rows']} / {val['rows']}"
            want["w10"] = _pct(val["within_10pct"], 0)
            got["w10"] = got["w10"].split(" (")[0]  # the recapture's agreement follows
        problems += [
            f"README fidelity table, {m['key']} / {m['op']}: {name} reads {got[name]!r}, "
            f"the shipped calibration says {want[name]!r}"
            for name in want
            if got[name] != want[name]
        ]
    return problems


def test_readme_fidelity_table_is_the_shipped_calibrations():
    """Each row of the fidelity table (grouped CV, validation set, validation
    within 10%, row counts) is what the shipped calibration file of its target
    stores (``fit.grouped_cv``, ``fit.validation``), so a recalibration that
    moves a figure fails here, naming the row, instead of leaving the table stale."""
    assert _table_problems((ROOT / "README.md").read_text()) == []


def test_a_stale_fidelity_row_is_caught():
    text = (ROOT / "README.md").read_text()
    row = "| `i7_12700k` / linear (18) | "
    assert row in text
    stale = text.replace(
        row + _pct(_fit_of(I7)["grouped_cv"]["per_op"]["linear"]["median_abs_error"], 1),
        row + "99.9%",
    )
    problems = _table_problems(stale)
    assert len(problems) == 1 and "i7_12700k / linear: gcv reads '99.9% /" in problems[0]


def _readme_report() -> tuple[str, str]:
    """The README's sample report: the command it shows and the output under it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## What the report says", 1)[1]
    block = section.split("```", 2)[1].strip("\n")
    command, _, output = block.partition("\n")
    return command, output


def test_readme_sample_report_is_what_validate_prints(monkeypatch, tmp_path):
    """The sample report under "What the report says" is the command's own
    output at 80 columns on the shipped baselines (it had gone stale: 158/238
    shown where the calibration of the day passed 155)."""
    from click.testing import CliRunner

    from graphsval_core.cli.main import cli

    command, shown = _readme_report()
    assert command.startswith("$ graphsval validate ")
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("GRAPHSVAL_WORKSPACE", str(tmp_path))  # the shipped files alone
    for name in ("GRAPHSVAL_DISABLE_PLUGIN_AUTOLOAD", "GRAPHSVAL_STRICT_PLUGINS", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, command.split()[2:])
    assert result.exit_code in (0, 1), result.output
    printed = result.output.rstrip("\n")
    assert printed == shown, (
        "README.md's sample report is stale; paste the output of "
        f"`COLUMNS=80 {command[2:]}`:\n{printed}"
    )
