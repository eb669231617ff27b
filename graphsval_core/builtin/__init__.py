"""The built-in plugins: ops, hook defaults, the reference predictor, checks."""
