"""Fake Jetson filesystem trees for the probe tests."""

from graphsval_core.testing import (  # every test: an empty workspace
    graphsval_empty_workspace as graphsval_empty_workspace,
)
