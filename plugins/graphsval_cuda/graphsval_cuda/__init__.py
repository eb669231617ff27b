"""graphsval plugin: NVIDIA datacenter GPU targets and the host's GPU (NVML)."""
