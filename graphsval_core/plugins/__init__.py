"""The plugin machinery: hook specifications, loading, the registry, records."""
