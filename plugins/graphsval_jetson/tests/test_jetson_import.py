"""The entry-point module does nothing at import time."""

from __future__ import annotations

import subprocess
import sys


def test_jetson_plugin_import_loads_no_torch() -> None:
    code = (
        "import graphsval_jetson.plugin, sys; "
        "assert graphsval_jetson.plugin.graphsval_api_version == '2.1'; "
        "assert 'torch' not in sys.modules and 'pynvml' not in sys.modules; "
        "assert 'graphsval_jetson.probe' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
