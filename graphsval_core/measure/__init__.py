"""Measuring ground truth: sampling, energy meters, workloads, capture."""
