"""graphsval: validate analytical performance and energy models on real silicon.

This package is the core: the hook specifications, the plugin manager, the data
model, and the ``graphsval`` command. Everything hardware-specific lives in
plugins discovered through the ``graphsval`` entry-point group.

Importing this package is cheap: it never imports torch or numpy.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

#: The plugin API version this core implements. A plugin declares the version
#: it was built for as a module attribute ``graphsval_api_version`` on its
#: entry-point module; a plugin whose major version differs is refused.
PLUGIN_API_VERSION = "2.1"

#: The pluggy project name: hook implementations are marked with ``hookimpl``.
PROJECT_NAME = "graphsval"


def __getattr__(name: str) -> Any:
    """``hookimpl``, the marker of hook implementations, made on first use:
    ``graphsval --help`` never imports pluggy."""
    if name == "hookimpl":
        import pluggy

        marker = pluggy.HookimplMarker(PROJECT_NAME)
        globals()["hookimpl"] = marker
        return marker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["PLUGIN_API_VERSION", "PROJECT_NAME", "__version__", "hookimpl"]
