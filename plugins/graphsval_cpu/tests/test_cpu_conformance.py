"""graphsval-cpu honours the plugin contract (the conformance class of
graphsval_core.testing, run on the installed entry point)."""

from __future__ import annotations

from graphsval_core.testing import PluginConformance

pytest_plugins = ["graphsval_core.testing"]


class TestCpuConformance(PluginConformance):
    plugin_module = "graphsval_cpu.plugin"
    entry_point_name = "cpu"
