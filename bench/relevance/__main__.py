"""Run the judged query set: ``python -m bench.relevance`` (see the package's docstring)."""

from bench.relevance.run import main

main()
