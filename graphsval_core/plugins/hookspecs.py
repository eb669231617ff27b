"""Every hook of the graphsval plugin contract, in one module.

A plugin is a module (named by an entry point in the ``graphsval`` group) whose
functions are marked with ``hookimpl`` and named after these specs; a plugin
imports ``hookimpl`` and everything else it needs from
:mod:`graphsval_core.plugin_api`, the stable surface for plugins. The
docstring of each spec is its reference documentation. Hooks are always
called with keyword arguments, so an implementation may accept any subset of
a spec's parameters.

Two kinds of hook:

- *collecting* hooks: every plugin contributes; the core gathers all results.
- *first-result* hooks: the core asks each plugin in turn and stops at the first
  non-None result. Built-in defaults are registered ``trylast`` so any plugin
  can override them.

Hooks are called through pluggy's own call loop, so ``tryfirst``/``trylast``,
wrappers (``wrapper=True``, or old-style ``hookwrapper=True``) and tracing
work as pluggy defines them.

A plugin can never take the tool down. An implementation that raises, calls
``sys.exit``, raises KeyboardInterrupt when no Ctrl-C was pressed, or returns
something other than what its spec promises gives no answer (a first-result
hook asks the next plugin): that plugin loses that contribution only, every
other plugin and target keeps working, and the exit code reflects only the
command's own result. The same holds for a plugin that fails at import
(an error, ``sys.exit``, a KeyboardInterrupt) and for a file it ships that
does not parse (a baseline, a calibration, the floors, the prediction
snapshot, a sweep-label overlay). Each failure is one line naming the plugin,
the hook and the error, as a ``warning:`` on stderr at the end of the
command. ``graphsval plugins`` calls every hook of every plugin (measuring
aside) and reads every file it ships before listing them, so such a plugin
shows status ``problem`` (``FAILED`` when it was not loaded) with the line.
A registration hook that fails rejects the whole plugin. A Ctrl-C is always
the user's: it stops the command wherever it lands, and an interrupted
capture keeps every finished row and resumes.

In strict mode (``--strict-plugins``, or ``GRAPHSVAL_STRICT_PLUGINS=1``) every
hook (measuring aside) is called and every shipped file read before the
command runs, and any such failure stops it with that one line and exit 2.

A target, op or predictor key registered by a first-party plugin (the core's
built-ins, graphsval-cpu, -cuda, -jetson, -kpu, -tpu) keeps its owner: a
plugin of another distribution registering it loses that key only, named in
one line. Two third-party plugins registering the same key both lose it.

The plugin's module must also declare the API version it was written for::

    graphsval_api_version = "2.1"

A plugin built for another major version than the core's
(:data:`graphsval_core.PLUGIN_API_VERSION`) is refused, with a message naming
both; a plugin of any minor version of the same major loads. The
versions:

- 2.1 (this core): a predictor may declare the constants it used
  (``PredictorSpec.constants`` returning :class:`PredictorConstant` records),
  which drift attribution reports instead of the target spec's; the plugin
  API module exports the regime names (``LAUNCH_BOUND``, ``ALU_BOUND``,
  ``tier_regime``, ``REGIMES``); a hook that exits, or raises
  KeyboardInterrupt without a Ctrl-C, is contained like one that raises an
  error. Additive: a 2.0 plugin needs no change.
- 2.0: plugins import from one module, :mod:`graphsval_core.plugin_api`; a
  consistency check gets a context instead of the registry; the
  ``graphsval_prediction_snapshot`` and ``graphsval_expected_failures`` hooks.
  A 1.x plugin imported core modules that have moved, and is refused rather
  than left to fail at import.
- 1.1: the check context and the two hooks above, as additions.
- 1.0: the first contract.

Entry-point modules do nothing at import time: no torch import, no NVML
initialisation, no sysfs reads. Work happens inside the hooks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pluggy

from graphsval_core import PROJECT_NAME

if TYPE_CHECKING:
    import numpy as np

    from graphsval_core.datamodel.op import OpSpec
    from graphsval_core.datamodel.target import MemoryTier, TargetSpec
    from graphsval_core.plugins.records import (
        ConsistencyCheck,
        Measurement,
        PredictorSpec,
        ProbeResult,
    )

hookspec = pluggy.HookspecMarker(PROJECT_NAME)


# --- registration: what a plugin provides ------------------------------------


@hookspec
def graphsval_register_targets() -> Iterable[TargetSpec]:
    """Return the targets this plugin provides.

    Collecting hook: every plugin contributes.

    :returns: an iterable of :class:`~graphsval_core.datamodel.target.TargetSpec`.
        A spec that fails validation makes the whole plugin be reported (name,
        version, the field at fault) and skipped. A key registered by a
        first-party plugin and by a plugin of another distribution stays with
        the first-party one; two plugins of the same standing registering the
        same key: the key is withdrawn. Either way the error names both plugins.
        A target of the user's workspace (``graphsval --workspace``) with the
        key of an installed one replaces it, said in one note.
        Detected targets (``host_cpu``) read the machine here, not at import.
    """


@hookspec
def graphsval_register_ops() -> Iterable[OpSpec]:
    """Return the ops (operators) this plugin provides.

    Collecting hook: every plugin contributes. The built-in ``matmul``,
    ``linear`` and ``vector_add`` are registered through this same hook.

    :returns: an iterable of :class:`~graphsval_core.datamodel.op.OpSpec`: shape
        schema, FLOPs and bytes per operand (vectorised over shapes), and an
        optional workload builder for measurers.

    For ``shapes`` an integer array ``(n, len(dims))``: ``flops(shapes)``
    returns ``n`` finite non-negative numbers; ``operand_elements(shapes)`` a
    mapping holding every operand of ``working_set_operands`` and the
    ``output_operand``, each ``n`` finite non-negative numbers;
    ``gemm_dims(shapes)`` (an op that is a matrix product) an ``(n, 3)`` array
    of positive ``M, K, N``. A third-party op's functions are called on two
    small shapes before it is registered (one that fails is not registered,
    in one line naming the plugin, the op and the function) and are guarded
    afterwards (a batch they fail on loses its rows).
    """


@hookspec
def graphsval_register_predictors() -> Iterable[PredictorSpec]:
    """Return the analytical models (predictors) this plugin provides.

    Collecting hook: every plugin contributes. The built-in reference model is
    registered through this hook under the name ``reference``; ``--predictor
    NAME`` selects one (``validate``, ``explain``, ``predict``), so two models
    can be validated by the same harness.

    A predictor is a :class:`~graphsval_core.plugins.records.PredictorSpec`: a
    ``name``, a one-line ``description``, ``predict`` and, optionally,
    ``constants``.

    ``predict(registry, target, op, shapes, dtype)`` is called once per batch
    of one target, op and dtype: ``shapes`` is an integer array ``(n,
    len(op.dims))``; ``target`` is the calibrated spec
    (``registry.datasheet_target(target.key)`` is the datasheet one). It
    returns a :class:`~graphsval_core.model.prediction.Prediction` holding,
    per shape, ``latency_s`` (finite, positive seconds), ``energy_j``
    (finite, non-negative joules), ``regime`` (``launch_bound``,
    ``alu_bound`` or ``<tier>_bound`` for a tier of the target: it picks the
    tolerance band and is judged against the measured regime) and
    ``binding_tier`` (the name of one of the target's tiers), besides
    ``predictor`` (its registered name), ``target``, ``op``, ``dtype``,
    ``dims`` and ``shapes``. Every breakdown field (``launch_s``,
    ``compute_s``, ``memory_s``, per-tier bytes and times, tiles, energy
    terms) is optional; one that is given holds one row per shape. Without a
    breakdown, explanations give the totals, reports leave the terms out, and
    ``explain`` and ``validate`` say so. The values are checked row by row: a
    row whose latency, energy, regime or binding tier breaks these rules is
    left out of the validation with its reason, the others are judged; a
    breakdown term that is not finite numbers is dropped; a prediction under
    another predictor's name is relabelled; each in one line per plugin,
    predictor and field. A predictor that produced nothing fails ``validate``
    (exit 1).

    ``constants(registry, target, op, dtype)``, optional, returns the
    :class:`~graphsval_core.plugins.records.PredictorConstant` records the
    predictor used for that target, op and dtype: ``name``, ``value``,
    ``unit``, ``regime`` (the regime whose cells it governs; None: every
    regime) and ``quantity`` (``latency`` or ``energy``). Drift attribution
    reports, for a failing cell, each constant of its regime that governs the
    failing quantity, with the value the measurements imply: a rate (a unit
    ending in ``/s``) scales inversely with the time it governs (the reported
    compute or memory term, else the whole predicted latency), a time (``s``)
    adds to the latency, a power (``W``) adds the energy the model misses over
    the measured time, any other unit scales with the quantity. A predictor
    that declares none gets the error and its spread per failing cell, and a
    sentence saying that no constant can be named; the target spec's
    constants are the reference model's and are never reported for another
    predictor.

    A predictor that raises, exits or answers against this contract is named
    in one line with its plugin: ``validate`` leaves the rows it could not
    predict out with that reason (strict mode: exit 2), ``explain`` and
    ``predict`` exit 2. The conformance class of :mod:`graphsval_core.testing`
    runs each predictor a plugin registers over a tiny baseline through the
    real harness. The worked example below, a naive roofline, is
    ``graphsval_core/examples/naive_roofline.py``, tested with the core.

    :returns: an iterable of :class:`~graphsval_core.plugins.records.PredictorSpec`.
    """


@hookspec
def graphsval_baselines() -> Iterable[Any]:
    """Return the baseline CSV files this plugin ships.

    Collecting hook: every plugin contributes. ``graphsval validate`` with no
    arguments validates every installed target against these files.

    :returns: an iterable of paths or :mod:`importlib.resources` traversables
        (``importlib.resources.files(__package__) / "baselines" / ...``).
    """


@hookspec
def graphsval_calibrations() -> Iterable[Any]:
    """Return the calibration files this plugin ships (``graphsval calibrate``).

    Collecting hook: every plugin contributes. Each file names its target; the
    registry applies it to that target's spec, so the model, the classifier and
    ``graphsval validate`` use the calibrated constants (provenance
    ``calibrated``), and ``graphsval targets --hw KEY`` shows them beside the
    datasheet values, with how well the fit pins each (its uncertainty, a bound
    it sits at, "not identified", "two optima").

    :returns: an iterable of paths or :mod:`importlib.resources` traversables.
    """


@hookspec
def graphsval_floors() -> Any:
    """Return the floors file of this plugin (pass-count floors per target/op).

    Collecting hook: every plugin contributes at most one path. ``graphsval
    validate --check-floors`` fails when a target/op passes fewer records than
    its floor; ``--update-floors`` raises floors in this file (lowering one
    needs ``--reason``, stored next to it) when it lies in a source tree (a
    plugin installed editable), never in an installed package: there,
    ``--floors FILE`` names the file to write. Ship the file with the plugin.

    :returns: a :class:`pathlib.Path` (it may not exist yet), or None.
    """


@hookspec
def graphsval_prediction_snapshot() -> Any:
    """Return the prediction snapshot file of this plugin's targets.

    Collecting hook: every plugin contributes at most one path. The snapshot
    holds the reference model's predictions of the reference workload set for
    each of the plugin's fixed (not detected) targets; the consistency check
    ``snapshot`` fails when a prediction moves by more than 1% from it.
    ``graphsval check --update-snapshot`` rewrites the entries of the checked
    targets in this file when it lies in a source tree, never in an installed
    package (``--snapshot FILE`` names another file). Ship the file with the
    plugin.

    :returns: a :class:`pathlib.Path` (it may not exist yet), or None.
    """


@hookspec
def graphsval_sweep_overlays() -> Iterable[Any]:
    """Return sweep-label overlay files this plugin ships.

    Collecting hook: every plugin contributes. An overlay (written by
    ``graphsval sweep label --hw KEY --out FILE``) holds the regime labels of a
    plugin's own targets for the shipped sweeps; it is merged at load time, so
    labelling a third-party target edits no file of the core.

    :returns: an iterable of paths or :mod:`importlib.resources` traversables.
    """


# --- the memory model ---------------------------------------------------------


@hookspec(firstresult=True)
def graphsval_memory_hierarchy(target: TargetSpec) -> Sequence[MemoryTier] | None:
    """Return the memory tiers of ``target``, innermost first.

    First-result hook: stops at the first non-None result. The built-in
    default (``trylast``) returns ``target.tiers``; a plugin may override it
    for the targets it registers, e.g. to apply a calibrated effective
    capacity of a shared tier. An answer for another plugin's target is
    refused and named (the target keeps its own plugin's answer).

    :param target: the target spec.
    :returns: a sequence of :class:`~graphsval_core.datamodel.target.MemoryTier`, or
        None to let the next implementation answer.
    """


@hookspec(firstresult=True)
def graphsval_residency_window(
    target: TargetSpec,
    op: OpSpec,
    shapes: np.ndarray,
    dtype: str,
    tier: MemoryTier,
) -> np.ndarray | None:
    """Return the tile of its matrix product each shape keeps alive in ``tier``.

    First-result hook: stops at the first non-None result. Called for ops with
    a matrix product (``op.gemm_dims``); the built-in default (``trylast``) is a
    square output tile fitting the tier's capacity. A target's plugin may
    override it for its own targets (a KPU keeps a layer's weights resident);
    an answer for another plugin's target, or a tile that is not finite and
    at least 1 along each dimension, is refused and named.

    :param target: the target spec.
    :param op: the op.
    :param shapes: integer array ``(n, len(op.dims))``, one shape per row.
    :param dtype: the dtype of every shape in the batch.
    :param tier: the tier whose capacity bounds the tile.
    :returns: an array ``(n, 3)`` of tile extents ``(Mt, Kt, Nt)`` over the op's
        matrix product ``op.gemm_dims(shapes)`` (an untiled dimension keeps the
        product's extent), or None.
    """


# --- measuring ----------------------------------------------------------------


@hookspec(firstresult=True)
def graphsval_measurer_probe(target: TargetSpec) -> ProbeResult | None:
    """Say whether this plugin's measurer can run ``target`` on this machine.

    First-result hook: stops at the first non-None result. Called only when
    asked (``graphsval targets``, ``graphsval capture``); it must be cheap and
    free of side effects: no kernel launch, no file written.

    :param target: the target spec.
    :returns: a :class:`~graphsval_core.plugins.records.ProbeResult` (available
        or not, the reason, the energy source), or None if this plugin does not
        measure ``target``.
    """


@hookspec(firstresult=True)
def graphsval_measure(
    target: TargetSpec,
    op: OpSpec,
    shape: tuple[int, ...],
    dtype: str,
    settings: Mapping[str, Any],
) -> Measurement | None:
    """Take one ground-truth measurement on this machine.

    First-result hook: stops at the first non-None result.

    :param target: the target being measured.
    :param op: the op.
    :param shape: the shape's dims.
    :param dtype: the dtype.
    :param settings: capture settings (time budget per shape, target CI, ...).
    :returns: a :class:`~graphsval_core.plugins.records.Measurement`, or None if
        this plugin does not measure ``target``.
    """


@hookspec(firstresult=True)
def graphsval_snapshot_target(target: TargetSpec, settings: Mapping[str, Any]) -> TargetSpec | None:
    """Freeze a detected target into the named target a capture measures.

    First-result hook: stops at the first non-None result. A detected target
    (``host_cpu``) changes from machine to machine; the capture records its
    rows under the named target returned here (e.g. after the CPU model, core
    and thread count), writes that spec beside the baseline
    (``<key>.target.json``), and the plugin registers such files as targets,
    so validating the captured data gives the same answer on any machine.

    :param target: the detected target about to be captured.
    :param settings: the capture settings (thread count, ...).
    :returns: the named :class:`~graphsval_core.datamodel.target.TargetSpec`, with
        ``fingerprint["snapshot_of"]`` set to ``target.key``, or None.
    """


# --- invariants ---------------------------------------------------------------


@hookspec
def graphsval_consistency_checks(target: TargetSpec) -> Iterable[ConsistencyCheck]:
    """Return the invariants to run for ``target``.

    Collecting hook: every plugin contributes. Consistency-only targets (KPU,
    TPU) are judged by these alone; ``graphsval check`` runs them, and
    ``graphsval validate`` too. The nine built-in checks are registered through
    this hook by :mod:`graphsval_core.builtin.checks`. Return nothing for a
    target the plugin has no check for.

    :param target: the target spec.
    :returns: an iterable of :class:`~graphsval_core.plugins.records.ConsistencyCheck`,
        whose ``run(target, context)`` returns
        :class:`~graphsval_core.datamodel.outcome.Outcome` records (build them with
        :func:`~graphsval_core.datamodel.outcome.outcome`): pass or fail with the
        numbers that decided it and, on failure, the workload and coefficient. The
        :class:`~graphsval_core.consistency.context.CheckContext` gives the check the
        registry's lookups (``target``, ``targets``, ``op``, ``memory_hierarchy``),
        the reference model's predictions (``predict(target, op, shapes, dtype)``;
        ``predict_all(target)``, the reference workload set's, computed once per
        run; ``reference_shapes(target, dtype)``) and the known findings
        (``expected(check, target)``, to pass as ``expected=``).

    A third-party check whose ``run`` raises (``sys.exit`` and a
    KeyboardInterrupt with no Ctrl-C included) or returns anything but
    outcomes is its plugin's problem, in one line at the end of the command,
    and a ``skip`` outcome: never a failure of the target (strict mode: exit
    2). ``graphsval plugins`` runs each check once, on one of its plugin's
    targets or a first-party one.
    """


@hookspec
def graphsval_expected_failures(target: TargetSpec) -> Mapping[str, str] | None:
    """Return the known findings about ``target``: consistency checks expected to fail on it.

    Collecting hook: only the answer of the plugin that registered ``target``
    counts (another plugin's declarations about it are refused and reported).
    Each entry maps a check's name as its outcome prints it (``bounds.power``,
    ``energy_ranking:a100_sxm4_80gb``) to the reason, a real finding that is
    not fixed by bending a coefficient (a datasheet figure that contradicts an
    expectation). A failure of that check on that target reads *expected
    failure* with the reason and does not fail the run; a pass reads
    *unexpected pass*, so that the entry can be removed. Never declare one to
    silence a failure you have not explained.

    :param target: the target spec.
    :returns: a mapping ``check -> reason``, or None.
    """
