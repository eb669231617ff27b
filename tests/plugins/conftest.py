"""Third-party plugins as a user installs them: each a module with its
``*.dist-info`` (METADATA and an entry point in the ``graphsval`` group) in
a folder put on ``sys.path`` (and ``PYTHONPATH``, for commands run as a
process), beside the five shipped plugins."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

#: What every plugin module made here starts with.
HEADER = """\
from graphsval_core.plugin_api import hookimpl

graphsval_api_version = "2.1"
"""


@pytest.fixture
def install_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., Path]]:
    """``install_plugin(name, source, files={})``: write module ``gvt_NAME``
    (``source`` after :data:`HEADER`, unless ``header=False``) and its
    distribution ``gvt-NAME 1.0`` into a folder of its own, with ``files``
    beside the module, and put the folder on ``sys.path`` and ``PYTHONPATH``.
    The modules are forgotten afterwards."""
    modules: list[str] = []
    monkeypatch.delenv("GRAPHSVAL_STRICT_PLUGINS", raising=False)
    monkeypatch.delenv("GRAPHSVAL_DISABLE_PLUGIN_AUTOLOAD", raising=False)

    def install(
        name: str, source: str, files: dict[str, str] | None = None, header: bool = True
    ) -> Path:
        folder = tmp_path / "site" / name
        module = f"gvt_{name}"
        info = folder / f"{module}-1.0.dist-info"
        info.mkdir(parents=True)
        text = textwrap.dedent(source)
        (folder / f"{module}.py").write_text((HEADER + "\n" + text) if header else text)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: gvt-{name}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[graphsval]\n{name} = {module}\n")
        for relative, content in (files or {}).items():
            (folder / relative).write_text(content)
        monkeypatch.syspath_prepend(str(folder))
        paths = [str(folder), os.environ.get("PYTHONPATH", "")]
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
        modules.append(module)
        return folder

    yield install
    for module in modules:
        sys.modules.pop(module, None)
