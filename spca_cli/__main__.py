"""``python -m spca_cli`` runs the ``spca`` command line."""

from spca_cli.cli import main

if __name__ == "__main__":
    main()
