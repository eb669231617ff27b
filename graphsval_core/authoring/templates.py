"""The files ``graphsval plugin new NAME`` writes (:mod:`string.Template` texts).

Placeholders: ``$name`` (``acme``), ``$distribution`` (``graphsval-acme``),
``$package`` (``graphsval_acme``), ``$target_key`` (``acme_dev1``),
``$class_name`` (``Acme``), ``$api_version``, ``$core_requirement`` and
``$core_report_requirement`` (the core with its ``report`` extra, for the tests).
The sweep-label overlay (``$package/sweep_labels.json``) is not a template: it
is computed from the target spec when the package is written.
"""

from __future__ import annotations

PYPROJECT = """\
[build-system]
requires = ["setuptools>=70.1"]
build-backend = "setuptools.build_meta"

[project]
name = "$distribution"
version = "0.1.0"
description = "graphsval targets for $name hardware."
readme = "README.md"
requires-python = ">=3.10"
dependencies = ["$core_requirement"]

[project.optional-dependencies]
test = ["pytest>=8", "$core_report_requirement"]

[project.entry-points.graphsval]
$name = "$package.plugin"

[tool.setuptools]
packages = ["$package"]

[tool.setuptools.package-data]
$package = [
    "baselines/*.csv",
    "baselines/README.md",
    "calibration/*.calibration.json",
    "calibration/README.md",
    "sweep_labels.json",
    "floors.json",
    "consistency_snapshot.json",
]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

README = """\
# $distribution

A [graphsval](https://pypi.org/project/graphsval/) plugin: the `$target_key`
target (placeholder figures until you write yours).

```bash
pip install -e .            # then: graphsval targets --hw $target_key
python -m pytest            # the conformance suite of graphsval_core.testing
```

Next steps (graphsval's docs/writing-a-plugin.md walks through them):

1. Write the real figures, each with its source, in `$package/targets.py`.
2. Relabel the shipped sweeps for the target:
   `graphsval sweep label --hw $target_key --out $package/sweep_labels.json`.
3. Capture a baseline (write `$package/measure.py`, then `graphsval capture`)
   or write one by hand into `$package/baselines/`.
4. Capture calibration rows too (`--purpose calibration`), fit the constants no
   datasheet gives with `graphsval calibrate --hw $target_key --baseline ...
   --out $package/calibration/$target_key.calibration.json` and ship the file
   (`$package/calibration/README.md`).
5. `graphsval validate --hw $target_key`.
"""

INIT = '''\
"""graphsval targets for $name hardware (the entry point is :mod:`$package.plugin`)."""
'''

PLUGIN = '''\
"""Entry-point module of $distribution: hook implementations only; nothing runs
at import time (no torch import, no device query). The hooks are documented in
graphsval_core.plugins.hookspecs (docs/hooks.md); everything it imports comes
from graphsval_core.plugin_api, the stable surface for plugins."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from graphsval_core.plugin_api import (
    Measurement,
    OpSpec,
    ProbeResult,
    TargetSpec,
    hookimpl,
    packaged_files,
)

graphsval_api_version = "$api_version"

#: The family of every target of this plugin.
FAMILY = "$name"


@hookimpl
def graphsval_register_targets() -> Iterable[TargetSpec]:
    """The targets of this plugin ($package/targets.py)."""
    from $package.targets import targets

    return targets()


@hookimpl
def graphsval_baselines() -> Iterable[Traversable]:
    """The baseline CSVs in $package/baselines/."""
    return packaged_files("$package", "baselines", ".csv")


@hookimpl
def graphsval_calibrations() -> Iterable[Traversable]:
    """The calibration files in $package/calibration/, written by
    `graphsval calibrate --hw $target_key --baseline ... --out
    $package/calibration/$target_key.calibration.json`: every command applies
    them to the target's spec."""
    return packaged_files("$package", "calibration", ".calibration.json")


@hookimpl
def graphsval_sweep_overlays() -> Iterable[Traversable]:
    """The labels of this plugin's targets for the shipped sweeps, written by
    `graphsval sweep label --hw $target_key --out $package/sweep_labels.json`."""
    overlay = resources.files("$package") / "sweep_labels.json"
    return [overlay] if overlay.is_file() else []


@hookimpl
def graphsval_floors() -> Path:
    """Pass-count floors (`graphsval validate --update-floors` writes the file)."""
    return Path(__file__).with_name("floors.json")


@hookimpl
def graphsval_prediction_snapshot() -> Path:
    """The committed predictions of this plugin's targets
    (`graphsval check --update-snapshot --hw $target_key` writes the file)."""
    return Path(__file__).with_name("consistency_snapshot.json")


@hookimpl
def graphsval_measurer_probe(target: TargetSpec) -> ProbeResult | None:
    """Whether a target of this plugin can be measured here; None for others."""
    if target.family != FAMILY:
        return None
    from $package.measure import probe

    return probe(target)


@hookimpl
def graphsval_measure(
    target: TargetSpec, op: OpSpec, shape: tuple[int, ...], dtype: str, settings: Mapping[str, Any]
) -> Measurement | None:
    """One measurement of a target of this plugin; None for others."""
    if target.family != FAMILY:
        return None
    from $package.measure import measure

    return measure(target, op, shape, dtype, settings)
'''

TARGETS = '''\
"""The targets of $distribution.

Every number says where it comes from: datasheet(value, "where it is
published"), derived(value, "the formula"), estimated(value, "why this
guess"). The figures below are placeholders: replace them with your part's,
then relabel the sweeps (`graphsval sweep label --hw $target_key --out
$package/sweep_labels.json`). `graphsval targets --hw $target_key` prints them
with their sources.
"""

from __future__ import annotations

from graphsval_core.plugin_api import MemoryTier, TargetSpec, datasheet, derived, estimated

KiB = 1024
MiB = 1024**2
GiB = 1024**3
SOURCE = "placeholder: replace with your part's datasheet"
GUESS = "placeholder estimate: replace, or let calibration refine it"

CORES = 8
CLOCK_HZ = 2.0e9
FLOP_PER_CYCLE = 32  # per core: two 8-lane fp32 FMA units


def $target_key() -> TargetSpec:
    """The placeholder target: an 8-core part at 2 GHz with L1, L2 and DRAM."""
    return TargetSpec(
        key="$target_key",
        name="$name dev1 (placeholder figures)",
        family="$name",
        architecture="cpu",  # cpu, gpu, systolic or domain_flow
        compute_units=datasheet(CORES, SOURCE),
        clock_hz=datasheet(CLOCK_HZ, SOURCE),
        peak_ops_per_s={
            "fp32": derived(
                CORES * CLOCK_HZ * FLOP_PER_CYCLE, "cores x clock x 32 fp32 FLOP per cycle"
            ),
        },
        energy_per_op_j={"fp32": estimated(10e-12, GUESS)},
        launch_overhead_s=estimated(2e-6, GUESS),
        idle_power_w=estimated(3.0, GUESS),
        tdp_w=datasheet(45.0, SOURCE),
        ground_truth="measured",  # or "consistency_only" when there is no silicon
        tiers=[
            MemoryTier(
                "l1",
                datasheet(32 * KiB, SOURCE),
                True,
                CORES,
                derived(CORES * 64 * CLOCK_HZ, "cores x 64 B per cycle x clock"),
                estimated(1.5, GUESS),
                energy_per_byte_j=estimated(0.5e-12, GUESS),
            ),
            MemoryTier(
                "l2",
                datasheet(1 * MiB, SOURCE),
                True,
                CORES,
                derived(CORES * 32 * CLOCK_HZ, "cores x 32 B per cycle x clock"),
                estimated(5.0, GUESS),
                energy_per_byte_j=estimated(2e-12, GUESS),
            ),
            MemoryTier(
                "dram",
                datasheet(16 * GiB, SOURCE),
                False,
                1,
                datasheet(50e9, SOURCE),
                estimated(90.0, GUESS),
                energy_per_byte_j=estimated(20e-12, GUESS),
            ),
        ],
    )


def targets() -> list[TargetSpec]:
    """Every target of this plugin."""
    return [$target_key()]
'''

MEASURE = '''\
"""The measurer of $distribution: not written yet.

Until it is, the probe says the target cannot be measured here and measuring
raises :class:`NotImplementedForHardware`. To write it, build the op's workload
(``op.build(shape, dtype, device)``) and hand it to
``graphsval_core.plugin_api.measure_workload`` with a block timer
(``wall_clock_block`` for host-synchronous kernels) and an energy meter
(``graphsval_core.plugin_api.NoEnergy(reason)`` when there is none): the core does
the correctness check, the adaptive timing and the energy window, so your rows
mean what every other plugin's rows mean. Import heavy libraries (torch, a
vendor SDK) inside :func:`measure`, never at module level, and keep
:func:`probe` cheap: no kernel launch, no file written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphsval_core.plugin_api import Measurement, OpSpec, ProbeResult, TargetSpec

NOT_WRITTEN = (
    "measuring is not implemented for this hardware yet "
    "(write $package/measure.py)"
)


class NotImplementedForHardware(NotImplementedError):
    """This plugin cannot measure its targets yet."""


def probe(target: TargetSpec) -> ProbeResult:
    """Whether ``target`` can be measured on this machine."""
    return ProbeResult(False, NOT_WRITTEN)


def measure(
    target: TargetSpec, op: OpSpec, shape: tuple[int, ...], dtype: str, settings: Mapping[str, Any]
) -> Measurement:
    """One ground-truth measurement of ``op`` at ``shape`` and ``dtype``."""
    raise NotImplementedForHardware(f"{target.key}: {NOT_WRITTEN}")
'''

BASELINES_README = """\
Baseline CSVs of $distribution, served by the `graphsval_baselines` hook.

One file per target and op, named `<target>_<op>.<purpose>.csv` (purpose:
`calibration` or `validation`), the V4 columns first:

    hardware,op,shape,dtype,latency_s,energy_j,trial_count,notes
    $target_key,matmul,256x256x256,fp32,0.000135,,20,written by hand

`graphsval capture --hw $target_key --op matmul --purpose validation --out
$package/baselines/${target_key}_matmul.validation.csv` writes them on the
hardware once $package/measure.py is written.
"""

CALIBRATION_README = """\
Calibration files of $distribution, served by the `graphsval_calibrations` hook
and applied by every graphsval command to the target they name (the constants
no datasheet gives: launch overhead, compute and tier fractions, energy
coefficients; `graphsval targets --hw $target_key` shows them beside the
datasheet values, with provenance `calibrated`).

Fit one on the target's calibration rows only (never its validation rows):

    graphsval calibrate --hw $target_key \\
        --baseline $package/baselines/${target_key}_matmul.calibration.csv \\
        --baseline $package/baselines/${target_key}_vector_add.calibration.csv \\
        --out $package/calibration/$target_key.calibration.json

Name each file `<target>.calibration.json`; the package data of
`pyproject.toml` ships every such file. Recalibrating rewrites the file:
commit it with the floors it moves (`graphsval validate --update-floors`).
"""

TEST = '''\
"""$distribution honours the plugin contract (graphsval_core.testing)."""

from __future__ import annotations

import json

from graphsval_core.testing import PluginConformance

pytest_plugins = ["graphsval_core.testing"]


class Test${class_name}Conformance(PluginConformance):
    plugin_module = "$package.plugin"
    entry_point_name = "$name"


def test_target_is_listed(graphsval_cli):
    result = graphsval_cli("targets", "--hw", "$target_key", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["plugin"] == "$name"


def test_measurer_says_it_is_not_written(graphsval_registry):
    """Delete this test once $package/measure.py measures."""
    probe = graphsval_registry.measurer_probe(graphsval_registry.target("$target_key"))
    assert not probe.available
    assert "not implemented for this hardware" in probe.reason
'''

#: Relative path (itself a template) -> text.
FILES: dict[str, str] = {
    "pyproject.toml": PYPROJECT,
    "README.md": README,
    "$package/__init__.py": INIT,
    "$package/plugin.py": PLUGIN,
    "$package/targets.py": TARGETS,
    "$package/measure.py": MEASURE,
    "$package/baselines/README.md": BASELINES_README,
    "$package/calibration/README.md": CALIBRATION_README,
    "tests/test_${name}_conformance.py": TEST,
}
