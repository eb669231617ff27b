"""graphsval-tpu honours the plugin contract (the conformance class of
graphsval_core.testing, run on the installed entry point)."""

from __future__ import annotations

from graphsval_core.testing import PluginConformance

pytest_plugins = ["graphsval_core.testing"]


class TestTpuConformance(PluginConformance):
    plugin_module = "graphsval_tpu.plugin"
    entry_point_name = "tpu"
