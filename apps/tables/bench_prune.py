"""``python -m apps.tables.bench_prune``: what pruning old table events costs (the management
command of the same name says what it measures), on a fresh migrated database created on
``DATABASE_URL``'s server and dropped afterwards."""

import sys

if __name__ == "__main__":
    from apps.realtime import procs

    procs.run_command_on_fresh_database("bench_prune", "benchpr", sys.argv[1:])
