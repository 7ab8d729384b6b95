"""Operator tools: benchmarks, the load test, the chaos run and the soak (``tools/README.md``).

Run each as ``python -m tools.NAME``. Nothing under ``apps/`` imports them; they import the
site's code (lazily where Django must be set up first).
"""
