"""Frozen sweep files, installed as the resource package ``graphsval_core.sweeps``."""
