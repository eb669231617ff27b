"""What a consistency check is handed beside its target: a :class:`CheckContext`.

A check runs as ``check.run(target, context)``. The context holds no hidden
state of the process: it carries the registry's lookups a check needs
(``target``, ``targets``, ``op``, ``memory_hierarchy``), the reference
model's predictions (``predict``; the reference workload set's are
computed once per target and shared by every check of that target), the
committed prediction snapshots (:class:`Snapshots`), and the known findings
the plugins declare (``expected``). One context serves one run of the checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from graphsval_core.consistency.reference_shapes import reference_shapes
from graphsval_core.files.snapshot import Entries, read_snapshot
from graphsval_core.model.predict import predict_shapes

if TYPE_CHECKING:
    from graphsval_core.datamodel.op import OpSpec
    from graphsval_core.datamodel.target import MemoryTier, TargetSpec
    from graphsval_core.model.prediction import Prediction
    from graphsval_core.plugins.registry import Registry

#: The predictor whose invariants are checked.
PREDICTOR = "reference"

#: ``(op, dtype) -> (shapes, prediction)``
Batches = dict[tuple[str, str], tuple[np.ndarray, "Prediction"]]


class Snapshots:
    """The committed predictions each target is compared with: every
    target's in one named file (``graphsval check --snapshot FILE``), or each
    in the prediction snapshot its plugin ships."""

    def __init__(self, registry: Registry, named: str | Path | None = None) -> None:
        self.registry = registry
        self.named = Path(named) if named else None
        self._plugin_files: dict[str, Any] | None = None
        self._read: dict[str, Entries] = {}

    def plugin_files(self) -> dict[str, Any]:
        """``plugin -> snapshot path`` of every plugin that ships one."""
        if self._plugin_files is None:
            self._plugin_files = self.registry.prediction_snapshots()
        return self._plugin_files

    def path_for(self, key: str) -> Any:
        """The snapshot file target ``key`` is compared with, or None."""
        if self.named is not None:
            return self.named
        return self.plugin_files().get(self.registry.target_plugin(key).name)

    def read(self, path: Any) -> Entries:
        """Every target's entries in ``path`` (read once)."""
        name = str(path)
        if name not in self._read:
            self._read[name] = read_snapshot(path)
        return self._read[name]

    def committed(self, key: str) -> dict[str, list[float]] | None:
        """Target ``key``'s committed entries, or None."""
        path = self.path_for(key)
        return None if path is None else self.read(path).get(key)

    def forget(self, path: Any) -> None:
        """Read ``path`` again next time (after it was rewritten)."""
        self._read.pop(str(path), None)


class CheckContext:
    """See the module doc."""

    def __init__(self, registry: Registry, snapshots: Snapshots | None = None) -> None:
        self.registry = registry
        self.snapshots = snapshots if snapshots is not None else Snapshots(registry)
        self._batches: dict[str, tuple[TargetSpec, Batches]] = {}
        self._findings: dict[str, dict[str, str]] = {}

    # --- the registry's lookups --------------------------------------------------

    def target(self, key: str) -> TargetSpec:
        return self.registry.target(key)

    def targets(self) -> dict[str, TargetSpec]:
        return self.registry.targets()

    def op(self, name: str) -> OpSpec:
        return self.registry.op(name)

    def memory_hierarchy(self, target: TargetSpec) -> tuple[MemoryTier, ...]:
        return self.registry.memory_hierarchy(target)

    # --- predictions -------------------------------------------------------------

    def predict(self, target: TargetSpec, op: str, shapes: Any, dtype: str) -> Prediction:
        """The reference model's prediction of ``shapes`` (rows of dims): the
        predictor whose invariants the checks hold."""
        return predict_shapes(self.registry, target, op, shapes, dtype, PREDICTOR)

    def reference_shapes(self, target: TargetSpec, dtype: str) -> dict[str, list[Any]]:
        """The reference workload set of ``target`` at ``dtype``: ``op -> shapes``."""
        return reference_shapes(self.memory_hierarchy(target), dtype)

    def predict_all(
        self,
        target: TargetSpec,
        shapes: Mapping[str, Mapping[str, list[Any]]] | None = None,
        dtypes: Sequence[str] | None = None,
    ) -> Batches:
        """Every op and dtype (or ``dtypes``) of ``target`` over the reference
        workloads (or ``shapes``: ``dtype -> op -> shapes``). The reference
        set's predictions of a target are computed once per context."""
        if shapes is None and dtypes is None:
            cached = self._batches.get(target.key)
            if cached is not None and cached[0] is target:
                return cached[1]
            every = {d: self.reference_shapes(target, d) for d in target.dtypes}
            batches = self.predict_all(target, every)
            self._batches[target.key] = (target, batches)
            return batches
        out: Batches = {}
        for dtype in dtypes or target.dtypes:
            per_op = shapes[dtype] if shapes else self.reference_shapes(target, dtype)
            for op, rows in per_op.items():
                array = np.asarray(rows, dtype=np.int64)
                out[(op, dtype)] = (array, self.predict(target, op, array, dtype))
        return out

    # --- known findings ------------------------------------------------------------

    def expected(self, check: str, target: TargetSpec | str) -> str | None:
        """Why ``check`` is expected to fail on ``target`` (its plugins' known
        findings, ``graphsval_expected_failures``), or None."""
        key = target if isinstance(target, str) else target.key
        if key not in self._findings:
            spec = self.registry.target(key) if isinstance(target, str) else target
            self._findings[key] = self.registry.expected_failures(spec)
        return self._findings[key].get(check)
