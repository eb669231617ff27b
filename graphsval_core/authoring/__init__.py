"""Tools for plugin authors: the scaffold and the CI matrix."""
