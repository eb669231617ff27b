"""graphsval: validate analytical performance and energy models on real silicon.

This package is the core: the hook specifications, the plugin manager, the data
model, and the ``graphsval`` command. Everything hardware-specific lives in
plugins discovered through the ``graphsval`` entry-point group.

Importing this package is cheap: it never imports torch or numpy.
"""

from __future__ import annotations

import pluggy

__version__ = "0.1.0"

#: The plugin API version this core implements. A plugin declares the version
#: it was built for as a module attribute ``graphsval_api_version`` on its
#: entry-point module; a plugin whose major version differs is refused.
PLUGIN_API_VERSION = "2.1"

#: The pluggy project name: hook implementations are marked with ``hookimpl``.
PROJECT_NAME = "graphsval"

hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

__all__ = ["PLUGIN_API_VERSION", "PROJECT_NAME", "__version__", "hookimpl"]
