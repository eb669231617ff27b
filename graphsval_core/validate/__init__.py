"""Validating predictions against baselines: harness, attribution, reports."""
