"""The `collsweep` command line: its entry point is runners.cli.main (one module per command)."""
