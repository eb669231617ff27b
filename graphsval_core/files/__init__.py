"""The file formats: baselines, calibration files, sweeps, floors, tolerances,
prediction snapshots."""
