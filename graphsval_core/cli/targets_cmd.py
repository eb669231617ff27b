"""``graphsval targets``: the installed targets, or one target's full spec."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

import click

from graphsval_core.cli.context import AppContext, InputError, pass_app, shown_path
from graphsval_core.cli.output import echo_json
from graphsval_core.datamodel.tables import (
    format_noted_table,
    format_table,
    screen_width,
    wrap_line,
)
from graphsval_core.datamodel.target import (
    PACK_A_MIN_COLUMNS,
    MemoryTier,
    TargetSpec,
    output_passes_phrase,
)
from graphsval_core.datamodel.units import (
    fmt_bytes,
    fmt_cost,
    fmt_joules,
    fmt_seconds,
    fmt_share,
    fmt_si,
)
from graphsval_core.files.target_spec import spec_to_json
from graphsval_core.plugins.records import ProbeResult
from graphsval_core.plugins.registry import Registry, UnknownNameError


def _fit_note(notes: dict[str, str], constant: str) -> str:
    """The fit of ``constant`` (``pack_bps.fp32``); a per-dtype packing rate
    an older file gives bare (``pack_bps``, every dtype that packs) has its
    figures under the bare name."""
    if constant in notes:
        return notes[constant]
    return notes.get("pack_bps", "") if constant.startswith("pack_bps.") else ""


def _ops_unit(dtype: str) -> str:
    return "OP/s" if dtype.startswith("int") else "FLOP/s"


def _tier_summary(tier: MemoryTier) -> str:
    size = fmt_bytes(tier.capacity_bytes).replace(" ", "")
    if tier.is_per_unit:
        size += f"x{tier.num_units}"
    shared = " shared" if tier.shared_with_tenants else ""
    return f"{tier.name} {size} {fmt_si(tier.peak_bandwidth_bps, 'B/s').replace(' ', '')}{shared}"


def _measurer_text(probe: ProbeResult) -> str:
    if probe.available:
        return "available" + (f" (energy: {probe.energy})" if probe.energy else "")
    return f"unavailable: {probe.reason}"


def _probe_dict(probe: ProbeResult) -> dict[str, Any]:
    return {"available": probe.available, "reason": probe.reason, "energy": probe.energy}


def _target_json(registry: Registry, target: TargetSpec) -> dict[str, Any]:
    info = registry.target_plugin(target.key)
    data = target.to_dict()
    data["plugin"] = info.name
    data["distribution"] = info.distribution
    data["distribution_version"] = info.version
    data["tiers"] = [t.to_dict() for t in registry.memory_hierarchy(target)]
    data["measurer"] = _probe_dict(registry.measurer_probe(target))
    data["calibration_fit"] = dict(registry.calibration_notes.get(target.key, {}))
    data["calibration_out_of_sample"] = registry.calibration_out_of_sample.get(target.key, {})
    return data


def _out_of_sample_lines(registry: Registry, key: str) -> list[str]:
    """How the calibration of ``key`` did on rows it never fitted, as its file
    records it: a table of grouped CV and the validation set per op, as the
    README's fidelity table has them (none for a target with no calibration,
    or whose file holds neither)."""
    found = registry.calibration_out_of_sample.get(key) or {}
    if not found:
        return []
    grouped, held = found.get("grouped_cv", {}), found.get("validation", {})

    def cell(f: dict[str, float] | None) -> str:
        if f is None:
            return "-"
        return f"{f['median_abs_error']:.1%} / {f['within_band']:.0%} ({int(f['rows'])} rows)"

    table = [
        [
            op,
            cell(grouped.get(op)),
            cell(held.get(op)),
            f"{held[op]['within_10pct']:.0%}" if "within_10pct" in held.get(op, {}) else "-",
        ]
        for op in sorted({*grouped, *held})
    ]
    head = ["OP", "GROUPED CV", "VALIDATION SET", "WITHIN 10%"]
    return [
        f"Out of sample, as {registry.calibration_files[key]} records its fit (median |error| "
        "/ share in the regime's band; WITHIN 10%: the validation set's rows within 10%; "
        "the validation set's rows were never fitted):",
        format_table(head, table),
    ]


class _Provenance(str):
    """A field's provenance text, carrying the name of the calibration
    constant the field shows (``constant``; None for a field no fit sets), so
    that the listing can put the fit's figures for it beside it."""

    constant: str | None = None


def _sourced(text: str, constant: str | None) -> _Provenance:
    out = _Provenance(text)
    out.constant = constant
    return out


def _short_source(provenance: Any) -> tuple[str, str]:
    """A field's provenance as its note under the field, and the whole text
    where it is a calibration's: every calibrated field names the same file
    and rows, so the listing says them once, not under each field."""
    text = str(provenance)
    rows = _FITTED_ON.search(text) if text.startswith("calibrated: ") else None
    if rows is None:
        return text, ""
    return text[: rows.start()] + text[rows.end() :], text[len("calibrated: ") : rows.end()]


#: The rows and version a calibrated field's provenance names, in brackets.
_FITTED_ON = re.compile(r" \(fitted on .*; graphsval [^()]*\)")


def _calibrated(provenance: Any) -> bool:
    """Whether a field's provenance says a calibration set it."""
    return getattr(provenance, "kind", None) == "calibrated"


def _constant(provenance: Any) -> str:
    """The field a row's provenance is of (empty: none)."""
    return getattr(provenance, "constant", None) or ""


def _sheet_value(sheet: list[list[Any]], row: list[Any]) -> str | None:
    """The datasheet spec's value of ``row`` (of the calibrated spec's rows):
    the row of its label, else the one row showing its field (a calibration
    may change a label: ``launch bf16, accumulating`` reads ``dispatch bf16,
    accumulating`` once bf16 has a fitted dispatch); None: the datasheet
    leaves the field unset."""
    for r in sheet:
        if r[0] == row[0]:
            return str(r[1])
    field = _constant(row[2])
    same = [r for r in sheet if field and _constant(r[2]) == field]
    return str(same[0][1]) if len(same) == 1 else None


def _unset(label: str) -> str:
    """The DATASHEET cell of a row the datasheet spec does not have: what the
    model uses when the field is unset (a product's bandwidth share, a tier's
    product share: 1), else -."""
    if label.startswith("product bandwidth "):
        return "1 of each tier's"
    return "1 of it to a matrix product" if label.endswith(" product share") else "-"


#: How the framework kernel's times read in the listing.
_REFERENCE_LABELS = (
    ("reference_output_s", "own kernel per output"),
    ("reference_mac_s", "own kernel per MAC"),
    ("reference_dot_output_s", "own kernel per output (dot)"),
    ("reference_dot_mac_s", "own kernel per MAC (dot)"),
)


def _detail_rows(registry: Registry, target: TargetSpec) -> list[list[str]]:
    prov = target.provenance

    def src(name: str, constant: str | None = "") -> str:
        """The field's provenance, for the calibration constant ``constant``
        (its own name unless given; None: no fit's figures beside it)."""
        return _sourced(str(prov.get(name, "-")), name if constant == "" else constant)

    info = registry.target_plugin(target.key)
    origin = (
        f"{info.name} ({info.distribution} {info.version or '?'})"
        if info.distribution
        else f"{info.name} ({info.module})"
    )
    rows: list[list[str]] = [
        ["name", target.name, ""],
        ["plugin", origin, ""],
        ["family", target.family, ""],
        ["architecture", target.architecture, ""],
        ["ground truth", target.ground_truth, ""],
        ["power mode", target.power_mode or "-", ""],
    ]
    if target.detected:
        rows.append(["detected", "yes: read from this machine", ""])
    if target.process_node_nm is not None:
        rows.append(["process node", f"{target.process_node_nm:g} nm", src("process_node_nm")])
    rows += [
        [
            "compute units",
            f"{target.compute_units} {target.compute_unit_name}",
            src("compute_units"),
        ],
        ["clock", fmt_si(target.clock_hz, "Hz"), src("clock_hz")],
    ]
    # a fitted fraction above 1 raises the peak (and the fraction reads 1): the fit's
    # figures then go with the peak's row, which shows the fitted rate
    folded = {d for d in target.peak_ops_per_s if _calibrated(prov.get(f"peak_ops_per_s.{d}"))}
    for dtype, peak in target.peak_ops_per_s.items():
        fitted = f"compute_fraction.{dtype}" if dtype in folded else None
        text = src(f"peak_ops_per_s.{dtype}", fitted)
        rows.append([f"peak {dtype}", fmt_si(peak, _ops_unit(dtype)), text])
    for dtype, fraction in target.compute_fraction.items():
        text = src(f"compute_fraction.{dtype}", None if dtype in folded else "")
        rows.append([f"achievable {dtype}", f"{fraction:.3g} of peak", text])
    for dtype, energy in target.energy_per_op_j.items():
        rows.append([f"energy/op {dtype}", fmt_joules(energy), src(f"energy_per_op_j.{dtype}")])
    rows += [
        ["launch overhead", fmt_cost(target.launch_overhead_s), src("launch_overhead_s")],
        *_dispatch_rows(target, src),
        *[
            [f"library {d}", f"above {v:g} multiply-adds", src(f"library_min_macs.{d}")]
            for d, v in target.library_min_macs.items()
        ],
        *[
            [
                f"micro-kernel {d}",
                f"{v:g} accumulator lanes ("
                + (
                    "C's N in whole vectors and its tail in pieces, below; M never padded)"
                    if d in target.tail_piece_vectors
                    else "C's N padded to a multiple, M never)"
                ),
                src(f"accumulator_lanes.{d}"),
            ]
            for d, v in target.accumulator_lanes.items()
        ],
        *[
            [
                f"N's tail {d}",
                f"power-of-two pieces, {v:g} vector each",
                src(f"tail_piece_vectors.{d}"),
            ]
            for d, v in target.tail_piece_vectors.items()
        ],
        *[
            [
                f"C's passes {d}",
                f"{v:g} of a product that does not accumulate"
                + (f" (C stored {output_passes_phrase(v)})" if v > 1 else ""),
                src(f"product_output_passes.{d}"),
            ]
            for d, v in target.product_output_passes.items()
        ],
        *[
            [
                f"library {d}",
                "none: every product in the framework's own kernel",
                f"the target's spec: no GEMM library runs its {d} products (the own kernel's "
                "times below)",
            ]
            for d in target.no_gemm_library
        ],
        *[
            [f"{label} {d}", fmt_cost(v), src(f"{name}.{d}")]
            for name, label in _REFERENCE_LABELS
            for d, v in getattr(target, name).items()
        ],
        *[
            [label, text(getattr(target, name)), src(name)]
            for label, name, text in (
                ("TLB reach", "tlb_reach_bytes", fmt_bytes),
                ("TLB miss", "page_walk_s", fmt_cost),
            )
            if getattr(target, name) is not None
        ],
        [
            "register tile",
            fmt_bytes(target.register_tile_bytes) if target.register_tile_bytes else "default",
            src("register_tile_bytes") if target.register_tile_bytes else "model default",
        ],
        *[
            [label, text(getattr(target, name)), src(name)]
            for label, name, text in (
                ("first touch", "first_touch_bps", lambda v: fmt_si(v, "B/s")),
                ("first touch from", "first_touch_min_bytes", fmt_bytes),
            )
            if getattr(target, name) is not None
        ],
        *[
            [
                f"first touch {d} (no product)",
                fmt_si(rate, "B/s"),
                src(f"vector_first_touch_bps.{d}"),
            ]
            for d, rate in target.vector_first_touch_bps.items()
        ],
        *[
            [label, text(getattr(target, name)), src(name)]
            for label, name, text in (
                ("extra kernel", "kernel_overhead_s", fmt_cost),
                ("fork/join", "fork_join_s", fmt_cost),
                ("parallel grain", "parallel_grain_ops", lambda v: f"{v:g} ops"),
            )
            if getattr(target, name) is not None
        ],
        *[
            [f"GEMV fork/join {d}", fmt_cost(v), src(f"gemv_fork_join_s.{d}")]
            for d, v in target.gemv_fork_join_s.items()
        ],
        *[
            [f"vector {d}", fmt_si(rate, "OP/s"), src(f"vector_ops_per_s.{d}")]
            for d, rate in target.vector_ops_per_s.items()
        ],
        *[
            [
                f"product bandwidth {d}",
                f"{share:.3g} of each tier's",
                src(f"product_bandwidth_fraction.{d}"),
            ]
            for d, share in target.product_bandwidth_fraction.items()
        ],
        *[
            [
                f"product overlap {d}",
                f"{share:.3g} of the shorter of compute and memory beyond "
                f"{target.tiers[0].name} hidden",
                src(f"product_overlap.{d}"),
            ]
            for d, share in target.product_overlap.items()
        ],
        *[
            [
                f"packing B {d}",
                f"{fmt_si(rate, 'B/s')} from {_rows_of_a(target.pack_min_rows[d])}",
                src(f"pack_bps.{d}"),
            ]
            for d, rate in target.pack_bps.items()
        ],
        *[
            [
                f"B in place {d}",
                f"a transposed B beyond the caches, up to {_rows_of_a(rows)}: packs only "
                "the share the caches keep",
                src(f"in_place_max_rows.{d}"),
            ]
            for d, rows in target.in_place_max_rows.items()
        ],
        *[
            [
                f"B in place {d}, stream",
                f"{share:.3g} of each tier's bandwidth for the part of B not packed "
                f"({fmt_si(target.tiers[-1].effective_bandwidth_bps * share, 'B/s')} "
                f"from {target.tiers[-1].name})",
                src(f"in_place_fraction.{d}"),
            ]
            for d, share in target.in_place_fraction.items()
        ],
        *[
            [
                f"packing read {d}",
                f"the kernel's own stream does {fmt_share(share)} of the copy's read of a "
                "matmul's B through the caches (of a B larger than they keep, that share of "
                "what they keep)",
                src(f"pack_read_overlap.{d}"),
            ]
            for d, share in target.pack_read_overlap.items()
        ],
        *[
            [
                f"transposed B {d}",
                f"a linear's weight unpacked below {_rows_of_a(rows)} (packed from there)",
                src(f"transposed_pack_min_rows.{d}"),
            ]
            for d, rows in target.transposed_pack_min_rows.items()
        ],
        *[
            [
                f"transposed B {d}, passes",
                f"read once per {_rows_of_a(rows)} below it",
                src(f"transposed_pass_rows.{d}"),
            ]
            for d, rows in target.transposed_pass_rows.items()
        ],
        *[
            [
                f"narrow N {d}, {op}",
                f"N of 2 to {columns:g} columns of {operand} in the library's narrow kernel "
                + (
                    f"(dot products along K, {target.transposed_narrow_n_group[d]:g} of the "
                    "weight's rows a pass: N computed in whole groups)"
                    if transposed and d in target.transposed_narrow_n_group
                    else "(a row of C a step of K)"
                ),
                src(f"{transposed}narrow_n_columns.{d}"),
            ]
            for transposed, op, operand, per_dtype in (
                ("", "matmul", "a matmul's B", target.narrow_n_columns),
                ("transposed_", "linear", "a linear's weight", target.transposed_narrow_n_columns),
            )
            for d, columns in per_dtype.items()
        ],
        *[
            [
                f"narrow N {d}, {which}rate",
                f"{share:.3g} of the compute rate in that kernel",
                src(f"{name}.{d}"),
            ]
            for name, which in (
                ("narrow_n_fraction", ""),
                ("transposed_narrow_n_fraction", "linear's "),
            )
            for d, share in getattr(target, name).items()
        ],
        *[
            [
                f"GEMV stream {d}",
                f"{share:.3g} of each tier's bandwidth beyond the {target.tiers[0].name} "
                "for a GEMV's matrix (M or N of 1; A too short to pack: a GEMV per row) "
                f"({fmt_si(target.tiers[-1].effective_bandwidth_bps * share, 'B/s')} "
                f"from {target.tiers[-1].name})",
                src(f"gemv_fraction.{d}"),
            ]
            for d, share in target.gemv_fraction.items()
        ],
        *[
            [
                f"packing A {d}",
                f"{fmt_si(rate, 'B/s')} beyond the last cache, N > {PACK_A_MIN_COLUMNS}",
                src(f"pack_a_bps.{d}"),
            ]
            for d, rate in target.pack_a_bps.items()
        ],
        ["idle power", fmt_si(target.idle_power_w, "W"), src("idle_power_w")],
        ["TDP", fmt_si(target.tdp_w, "W"), src("tdp_w")],
    ]
    for tier in registry.memory_hierarchy(target):
        provenance = tier.provenance

        def tsrc(
            field: str, fitted: str | None = "", tier: MemoryTier = tier, prov: Any = provenance
        ) -> str:
            """The tier field's provenance, for the tier's constant ``fitted`` (its
            own field unless given; None: no fit's figures beside it)."""
            own = field if fitted == "" else fitted
            return _sourced(str(prov[field]), None if own is None else f"tiers.{tier.name}.{own}")

        label = f" ({tier.label})" if tier.label else ""
        per = (
            f" per unit x{tier.num_units} = {fmt_bytes(tier.total_capacity_bytes)}"
            if tier.is_per_unit
            else ""
        )
        shared = ", shared with other tenants" if tier.shared_with_tenants else ""
        shared += ", non-inclusive" if tier.non_inclusive else ""
        rows.append(
            [
                f"{tier.name}{label} capacity",
                f"{fmt_bytes(tier.capacity_bytes)}{per}{shared}",
                tsrc("capacity_bytes"),
            ]
        )
        if tier.usable_capacity_bytes is not None:
            rows.append(
                [
                    f"{tier.name} usable",
                    fmt_bytes(tier.usable_capacity_bytes),
                    tsrc("usable_capacity_bytes"),
                ]
            )
        # as for the peak: a fitted fraction above 1 raises the tier's bandwidth
        raised = _calibrated(provenance["peak_bandwidth_bps"])
        rows.append(
            [
                f"{tier.name} bandwidth",
                fmt_si(tier.peak_bandwidth_bps, "B/s"),
                tsrc("peak_bandwidth_bps", "achievable_fraction" if raised else ""),
            ]
        )
        rows.append(
            [
                f"{tier.name} achievable",
                f"{tier.achievable_fraction:.3g}",
                tsrc("achievable_fraction", None if raised else ""),
            ]
        )
        if "product_fraction" in provenance:
            rows.append(
                [
                    f"{tier.name} product share",
                    f"{tier.product_fraction:.3g} of it to a matrix product",
                    tsrc("product_fraction"),
                ]
            )
        rows.append(
            [f"{tier.name} latency", f"{tier.access_latency_ns:g} ns", tsrc("access_latency_ns")]
        )
        rows.append(
            [
                f"{tier.name} energy/byte",
                fmt_joules(tier.energy_per_byte_j),
                tsrc("energy_per_byte_j"),
            ]
        )
    for key, value in target.fingerprint.items():
        rows.append([f"fingerprint {key}", value, ""])
    rows.append(["measurer", _measurer_text(registry.measurer_probe(target)), ""])
    return rows


@click.command()
@click.option("--hw", "key", metavar="KEY", help="Print one target's full spec with provenance.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option(
    "--target-file",
    "as_file",
    is_flag=True,
    help="With --hw: print the target's own file, the JSON a plugin ships in its "
    "targets/ folder, before calibration (the i7's too, which is defined in code). Saved "
    "as a workspace's targets/KEY.target.json it replaces the installed target; its "
    "plugin's calibration applies again once copied to the workspace's calibration/.",
)
@click.option(
    "--out",
    "out",
    metavar="FILE",
    help="With --target-file: write the file there (its folders created) instead of "
    "printing it, e.g. WS/targets/KEY.target.json; an existing file is not written over.",
)
@pass_app
def targets(
    app: AppContext, key: str | None, as_json: bool, as_file: bool, out: str | None
) -> None:
    """List installed targets: family, plugin, ground truth, dtypes, tiers and
    whether the target's measurer can run on this machine."""
    if as_file and key is None:
        raise click.BadParameter(
            "needs --hw KEY: the target whose file to print", param_hint="'--target-file'"
        )
    if out is not None and not as_file:
        raise click.BadParameter("writes a target file: give --target-file", param_hint="'--out'")
    if as_file and as_json:
        raise click.BadParameter(
            "--json and --target-file are two formats of JSON; give one",
            param_hint="'--target-file'",
        )
    registry = app.registry
    if key is not None:
        try:
            target = registry.target(key)
        except UnknownNameError as exc:
            raise click.BadParameter(str(exc), param_hint="'--hw'") from None
        if as_file:
            spec = registry.datasheet_target(key)
            if out is None:
                echo_json(spec_to_json(spec))
            else:
                _write_target_file(spec, out)
            return
        if as_json:
            echo_json(_target_json(registry, target))
            return
        width = screen_width()
        click.echo("\n".join(wrap_line(f"{target.key}: {target.name}", width)))
        if target.description:
            click.echo("\n".join(wrap_line(target.description, width)))
        rows = _detail_rows(registry, target)
        sheet = _detail_rows(registry, registry.datasheet_target(key))
        # the datasheet value beside every value calibration changed, and how well the
        # fit pins it (a column only for a calibrated target)
        notes = registry.calibration_notes.get(target.key, {})
        table = []
        for r in rows:
            was = _sheet_value(sheet, r)
            sheet_value = "" if was == r[1] else was or _unset(r[0])
            fit = [_fit_note(notes, getattr(r[2], "constant", None) or "")] if notes else []
            table.append([r[0], r[1], sheet_value, *fit])
        header = ["FIELD", "VALUE", "DATASHEET", *(["FIT"] if notes else [])]
        if not any(t[2] for t in table):  # nothing calibrated: no datasheet value beside
            header, table = header[:2], [t[:2] for t in table]
        sources = [_short_source(r[2]) for r in rows]
        click.echo(format_noted_table(header, table, [s for s, _ in sources], width))
        fitted = next((full for _, full in sources if full), "")
        legend = [
            "Under each field, indented: where its value comes from."
            + (
                " DATASHEET: the datasheet's value, where a calibration changed it."
                if len(header) > 2
                else ""
            )
            + (f" Calibrated: {fitted}." if fitted else "")
        ]
        if notes:
            legend.append(
                "FIT: how well the calibration pins the constant: +- one standard "
                "deviation (relative; a share's own spread in its units), a bound it sits "
                "at, 'not identified' where the rows do not pin it, 'two optima' where "
                "another start of the fit puts it far elsewhere at a cost within 1% (the +- "
                "sees only the optimum kept), 'exact fit, no +-' where the fit reproduced "
                "its rows exactly; blank where the file "
                f"gives no figure ({registry.calibration_files[target.key]})."
            )
        for line in [*legend, *_out_of_sample_lines(registry, target.key)]:
            click.echo("\n".join(wrap_line(line, width)))
        return
    specs = sorted(registry.targets().values(), key=lambda t: (t.family, t.key))
    if as_json:
        echo_json({"targets": [_target_json(registry, t) for t in specs]})
        return
    if not specs:
        click.echo(
            "No targets: no plugin providing targets is installed (see `graphsval plugins`)."
        )
        return
    rows, notes = [], []
    for t in specs:
        rows.append([t.key, t.family, t.ground_truth, ", ".join(t.dtypes)])
        tiers = "; ".join(_tier_summary(tier) for tier in registry.memory_hierarchy(t))
        notes.append(
            f"plugin {registry.target_plugin(t.key).name}; tiers: {tiers}; "
            f"measurer: {_measurer_text(registry.measurer_probe(t))}"
        )
    header = ["TARGET", "FAMILY", "GROUND TRUTH", "DTYPES"]
    click.echo(format_noted_table(header, rows, notes, screen_width()))
    if registry.problems:
        click.echo(f"\n{len(registry.problems)} plugin problem(s); see `graphsval plugins`.")


def _write_target_file(spec: TargetSpec, out: str) -> None:
    """Write ``spec``'s target file to ``out`` (its folders created), never over
    an existing file: a shell's ``> FILE`` would empty a workspace's target
    before the command reads the workspace, and an edited file is the user's."""
    from pathlib import Path

    from graphsval_core.files.outputs import check_output_file
    from graphsval_core.files.target_spec import TargetFileError, write_spec
    from graphsval_core.workspace.location import creating_parent

    path = Path(out)  # a name ending in "/" the option itself refused (cli.params)
    if path.is_dir():
        named = f"{spec.key}.target.json"
        raise InputError(
            f"{out}: is a folder; give the file's name (e.g. {shown_path(path / named)})"
        )
    # a link to a file not there, a FIFO or a device: said so, not "exists"
    check_output_file(path, InputError, out)
    if os.path.lexists(path):
        raise InputError(f"{out}: exists; remove it or name another file (not written over)")
    named = f"{spec.key}.target.json"
    if path.name.strip().lower().endswith(".target.json") and path.name != named:
        # a workspace reads <key>.target.json only: another key's name made that target
        # unusable, another case was never read
        near = path.name.strip().lower() == named.lower()  # blanks or case apart
        raise InputError(
            f"{out}: a target file is read as {named} (the key it holds"
            f"{', exactly: blanks and case count' if near else ''}); name it so, or give a "
            "name not ending in .target.json"
        )
    try:
        with creating_parent(path):
            write_spec(spec, path)
    except (TargetFileError, OSError) as exc:
        raise InputError(f"{out}: cannot be written ({exc})") from None
    click.echo(f"wrote {shown_path(out)}: target {spec.key}'s file, before calibration")


def _rows_of_a(rows: float) -> str:
    return f"{rows:g} row{'' if rows == 1 else 's'} of A"


def _more(seconds: float) -> str:
    """What accumulating costs on top of the call: ``+2 us``, or ``nothing more``."""
    return f"+{fmt_seconds(seconds)}" if seconds else "nothing more"


def _dispatch_rows(target: TargetSpec, src: Callable[[str], str]) -> list[list[str]]:
    """Each dtype's library call (``dispatch_overhead_s``) and, right after
    it, what the call costs more when it accumulates onto C
    (``accumulate_overhead_s``: paid on top of the dispatch, or of the launch
    where the dtype has no dispatch of its own)."""
    rows = []
    for d in dict.fromkeys([*target.dispatch_overhead_s, *target.accumulate_overhead_s]):
        if d in target.dispatch_overhead_s:
            rows.append(
                [
                    f"dispatch {d}",
                    fmt_cost(target.dispatch_overhead_s[d]),
                    src(f"dispatch_overhead_s.{d}"),
                ]
            )
        if d in target.accumulate_overhead_s:
            call = "dispatch" if d in target.dispatch_overhead_s else "launch"
            rows.append(
                [
                    f"{call} {d}, accumulating",
                    _more(target.accumulate_overhead_s[d]),
                    src(f"accumulate_overhead_s.{d}"),
                ]
            )
    return rows
