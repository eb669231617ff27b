"""graphsval plugin: CPU targets (i7-12700K, host_cpu detected from this machine)."""
