"""Fixtures of the KPU plugin's tests: an empty workspace for the session."""

from graphsval_core.testing import (  # every test: an empty workspace
    graphsval_empty_workspace as graphsval_empty_workspace,
)
