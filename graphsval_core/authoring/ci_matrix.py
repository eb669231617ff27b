"""The installed plugins as a CI matrix (``graphsval ci-matrix``).

One ``include`` entry per loaded third-party or first-party plugin (built-ins
excluded), for a CI job that installs the core and that plugin alone, runs its
tests in strict mode and then ``graphsval validate --check-floors``::

    {"include": [{"plugin": "kpu", "distribution": "graphsval-kpu", "version": "0.1.0",
                  "source": "plugins/graphsval_kpu", "targets": ["kpu_t256", ...],
                  "ops": [], "needs_hardware": false, "needs_torch": false}]}

- ``source``: the folder it was installed from, relative to the current
  directory (None when it came from an index or lies outside);
- ``ops``: the ops its shipped baselines cover (what ``validate`` checks for it);
- ``needs_hardware``: some of its targets are measured on silicon, so capturing
  them needs that hardware (its tests and ``validate`` never do);
- ``needs_torch``: its distribution requires torch (or its ``capture`` extra does).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from graphsval_core.plugins.registry import PluginInfo, Registry


def _distribution(name: str | None) -> Any:
    if not name:
        return None
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        return distribution(name)
    except PackageNotFoundError:
        return None


def source_folder(dist: Any, cwd: Path | None = None) -> str | None:
    """The local folder ``dist`` was installed from, relative to ``cwd``, or None."""
    text = dist.read_text("direct_url.json") if dist is not None else None
    if not text:
        return None
    url = urlparse(json.loads(text).get("url", ""))
    if url.scheme != "file":
        return None
    folder = Path(unquote(url.path)).resolve()
    base = (cwd or Path.cwd()).resolve()
    if not folder.is_relative_to(base):
        return None
    return Path(os.path.relpath(folder, base)).as_posix()


def requires_torch(dist: Any) -> bool:
    """Whether ``dist`` lists torch among its requirements, or its ``capture``
    extra's (a measuring plugin's tests measure with it); other extras aside."""
    for requirement in (dist.requires or []) if dist is not None else []:
        name = re.split(r"[\s;<>=!~\[(]", requirement.strip(), maxsplit=1)[0]
        extra = re.search(r"extra\s*==\s*[\"']([^\"']+)[\"']", requirement)
        if name.lower() == "torch" and (extra is None or extra.group(1) == "capture"):
            return True
    return False


def _baseline_ops(registry: Registry, info: PluginInfo) -> list[str]:
    from graphsval_core.files.baseline import read_many

    own = [item for plugin, item in registry.baseline_files() if plugin == info.name]
    return sorted({row.op for baseline in read_many(own) for row in baseline.rows})


def matrix_entry(registry: Registry, info: PluginInfo, cwd: Path | None = None) -> dict[str, Any]:
    """The matrix entry of one plugin."""
    dist = _distribution(info.distribution)
    targets = [registry.target(key) for key in info.targets]
    return {
        "plugin": info.name,
        "distribution": info.distribution,
        "version": info.version,
        "source": source_folder(dist, cwd),
        "targets": sorted(info.targets),
        "ops": _baseline_ops(registry, info),
        "needs_hardware": any(t.ground_truth == "measured" for t in targets),
        "needs_torch": requires_torch(dist),
    }


def ci_matrix(registry: Registry, cwd: Path | None = None) -> dict[str, list[dict[str, Any]]]:
    """``{"include": [...]}``: one entry per loaded, non-built-in plugin, by name."""
    infos = sorted(
        (i for i in registry.plugins if i.loaded and not i.builtin), key=lambda i: i.name
    )
    return {"include": [matrix_entry(registry, info, cwd) for info in infos]}
