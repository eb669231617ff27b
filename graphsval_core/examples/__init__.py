"""Worked examples of plugins, shipped and tested with the core; the hook
reference (docs/hooks.md) prints their source."""
