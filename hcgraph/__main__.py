"""``python -m hcgraph`` runs the CLI."""

from .cli import main

main()
