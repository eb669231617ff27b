"""The data model: target and op specs, provenance, dtypes, units, target spec files."""
