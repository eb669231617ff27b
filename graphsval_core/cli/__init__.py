"""The ``graphsval`` command (click). Commands live one module each."""
