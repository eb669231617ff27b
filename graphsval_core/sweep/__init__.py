"""The frozen sweeps: generator, labels, shapes of a model config."""
