"""`python -m toolproof` runs the command line."""

from toolproof.cli import main

main()
