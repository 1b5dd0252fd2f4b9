"""``python -m wddmsim``: the same command line as the ``wddmsim`` script."""

from .cli import main

main(prog_name="wddmsim")
