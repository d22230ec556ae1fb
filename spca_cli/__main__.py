"""``python -m spca_cli`` runs the ``spca`` command line."""

from spca_cli.cli import cli

if __name__ == "__main__":
    cli()
