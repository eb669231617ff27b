"""The entry-point module does nothing at import time."""

from __future__ import annotations

import subprocess
import sys


def test_cuda_plugin_import_loads_neither_torch_nor_pynvml() -> None:
    code = (
        "import graphsval_cuda.plugin, sys; "
        "assert graphsval_cuda.plugin.graphsval_api_version == '2.1'; "
        "assert 'torch' not in sys.modules and 'pynvml' not in sys.modules, "
        "sorted(m for m in sys.modules if m in ('torch', 'pynvml'))"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_cuda_listing_targets_does_not_import_torch() -> None:
    """Listing and probing import no torch; with no NVIDIA driver, no pynvml either."""
    code = (
        "import sys; from graphsval_core.plugin_api import build_registry; "
        "from graphsval_cuda.nvml import missing_driver_reason; "
        "r = build_registry(autoload=False, plugin_args=['cuda'], strict=True); "
        "[r.measurer_probe(t) for t in r.targets().values()]; "
        "assert 'host_gpu' in r.targets(); assert 'torch' not in sys.modules; "
        "assert missing_driver_reason() is None or 'pynvml' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
