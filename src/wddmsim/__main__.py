"""``python -m wddmsim``: the same command line as the ``wddmsim`` script."""

from .entry import main

main()
