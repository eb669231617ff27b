"""The toy target of the calibration tests and its baselines: rows whose
latencies come from the same target with known constants ("silicon")."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from attrs import evolve

from graphsval_core.datamodel.provenance import datasheet, estimated
from graphsval_core.model.predict import predict_batch
from graphsval_core.plugins.loader import build_registry

HEADER = ["hardware", "op", "shape", "dtype", "latency_s", "energy_j", "trial_count", "notes"]
# launch-, L2-, DRAM- and compute-bound shapes on the toy target (none is in a project sweep)
SHAPES = {
    "vector_add": [
        [300],
        [700],
        [1500],
        [130_000],
        [170_000],
        [210_000],
        [260_000],
        [1_100_000],
        [2_300_000],
        [4_700_000],
    ],
    "matmul": [[520, 520, 520], [776, 776, 776], [1040, 1040, 1040], [1300, 700, 900]],
}
TRUE = {"launch_overhead_s": 3.1e-6, "fp32": 0.62, "l2": 0.55, "dram": 0.81}


def _toy(make_target, make_tier, launch=2e-6, fp32=1.0, l2=1.0, dram=1.0):
    return make_target(
        "toy",
        launch_overhead_s=estimated(launch, "t"),
        compute_fraction={"fp32": estimated(fp32, "t")},
        tiers=[
            make_tier("l1", 32 * 1024),
            make_tier(
                "l2",
                1024 * 1024,
                peak_bandwidth_bps=datasheet(5e11, "t"),
                achievable_fraction=estimated(l2, "t"),
            ),
            make_tier(
                "dram",
                16 * 1024**3,
                is_per_unit=False,
                num_units=1,
                peak_bandwidth_bps=datasheet(5e10, "t"),
                achievable_fraction=estimated(dram, "t"),
            ),
        ],
    )


@pytest.fixture
def setup(make_target, make_tier, make_plugin, fake_entry_points, make_entry_point, tmp_path):
    """Installs the toy plugin (``toy``, datasheet values) and returns a writer
    of toy baselines (``write(name, purpose_column=None, shapes_of=None) ->
    path``, ``shapes_of`` an op's shapes as :data:`SHAPES` gives them, by
    default those) whose latencies are the model's with the constants in ``TRUE``."""
    model = _toy(make_target, make_tier)
    plugin = make_plugin("toy", lambda: [model])
    fake_entry_points(make_entry_point("toy", lambda: plugin, "graphsval-toy"))
    silicon = _toy(
        make_target,
        make_tier,
        launch=TRUE["launch_overhead_s"],
        fp32=TRUE["fp32"],
        l2=TRUE["l2"],
        dram=TRUE["dram"],
    )
    reg = build_registry(
        extra_plugins=[("s", make_plugin("s", lambda: [evolve(silicon, key="silicon")]))],
        plugin_args=["no:toy"],
    )

    def write(name: str, purpose_column: str | None = None, shapes_of: dict | None = None):
        path = tmp_path / name
        with path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(HEADER + (["purpose"] if purpose_column else []))
            for op, shapes in (shapes_of or SHAPES).items():
                truth = predict_batch(reg, "silicon", op, np.array(shapes), "fp32")
                for dims, lat in zip(shapes, truth.latency_s, strict=True):
                    row = ["toy", op, "x".join(map(str, dims)), "fp32", f"{lat:.9e}", "", 11, ""]
                    writer.writerow(row + ([purpose_column] if purpose_column else []))
        return path

    return write


@pytest.fixture
def elsewhere(setup, make_plugin, fake_entry_points, make_entry_point) -> str:
    """Installs a second target beside ``toy`` (its spec under another key)
    and returns its key: a row of it is another installed target's, left
    out, where one of a key nobody registers is refused."""
    toy = build_registry().datasheet_target("toy")
    plugin = make_plugin("toy", lambda: [toy, evolve(toy, key="elsewhere")])
    fake_entry_points(make_entry_point("toy", lambda: plugin, "graphsval-toy"))
    return "elsewhere"


@pytest.fixture
def intel_adds():
    """Every fourth of the Intel host's shipped fp32/bf16 add calibration rows, with
    the registry, its datasheet spec and the constants a fit of them frees:
    ``(registry, spec, rows, params)`` (a quick fit of a shared L3's capacity)."""
    from graphsval_core.calibrate.params import choose_params
    from graphsval_core.files.baseline import read_baseline_file
    from graphsval_core.plugins.resources import packaged_files

    registry = build_registry()
    spec = registry.datasheet_target("host_intel_xeon_2c_1t")
    csv = next(
        p
        for p in packaged_files("graphsval_cpu", "baselines", ".calibration.csv")
        if p.name == "host_intel_xeon_2c_1t_vector_add.calibration.csv"
    )
    rows = read_baseline_file(str(csv))[0].rows[::4]
    return registry, spec, rows, choose_params(registry, spec, rows)
