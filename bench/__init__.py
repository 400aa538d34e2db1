"""The service's benchmarks: each script is a module, run as ``python -m bench.NAME``.

How to run each and what its figures mean: ``bench/README.md``.
"""
