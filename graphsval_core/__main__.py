"""``python -m graphsval_core`` runs the ``graphsval`` command."""

from graphsval_core.cli.main import main

main()
