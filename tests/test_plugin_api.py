"""The stable surface for plugins: every name it promises resolves, what type
checkers see matches what it loads, importing it is cheap, and the first-party
plugins (code and tests) import nothing else from the core."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from graphsval_core import plugin_api

REPO = Path(__file__).resolve().parents[1]
ALLOWED = {"graphsval_core.plugin_api", "graphsval_core.testing"}


def test_every_promised_name_resolves():
    for name in plugin_api.__all__:
        assert getattr(plugin_api, name) is not None, name
    with pytest.raises(AttributeError, match="no 'no_such_name'"):
        plugin_api.no_such_name  # noqa: B018


def test_what_type_checkers_see_is_what_is_loaded():
    tree = ast.parse(Path(plugin_api.__file__).read_text())
    guarded = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
    )
    seen = {
        alias.name: node.module
        for node in guarded.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert seen == plugin_api._WHERE


def test_importing_it_loads_no_numpy_and_no_torch():
    code = (
        "import sys, graphsval_core.plugin_api as api; api.TargetSpec; api.datasheet; "
        "assert 'numpy' not in sys.modules and 'torch' not in sys.modules, sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def _core_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found |= {n for n in names if n.split(".")[0] == "graphsval_core"}
    # the bare package gives hookimpl and the version constants too
    return found - {"graphsval_core"}


@pytest.mark.parametrize(
    "path",
    sorted((REPO / "plugins").glob("graphsval_*/**/*.py")),
    ids=lambda p: str(p.relative_to(REPO)),
)
def test_first_party_plugins_import_only_the_stable_surface(path):
    assert _core_imports(path) <= ALLOWED


def test_installed_packages_are_told_from_source_trees(tmp_path):
    import numpy

    from graphsval_core.plugins.resources import in_installed_package

    assert in_installed_package(numpy.__file__)
    assert not in_installed_package(tmp_path / "floors.json")
    assert not in_installed_package(REPO / "plugins" / "graphsval_cpu" / "graphsval_cpu")
