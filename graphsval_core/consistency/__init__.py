"""Consistency checks: invariants a target's predictions must satisfy."""
