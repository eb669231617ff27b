"""graphsval plugin: TPU v4 and Coral Edge TPU targets (consistency-only)."""
