"""graphsval plugin: KPU T64 / T256 / T768 targets (consistency-only)."""
