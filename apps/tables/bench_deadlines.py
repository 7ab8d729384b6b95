"""``python -m apps.tables.bench_deadlines``: the deadline benchmark (see the management
command of the same name for what it measures), on a fresh migrated database created on
``DATABASE_URL``'s server and dropped afterwards, so that it never fills a real one."""

import sys

if __name__ == "__main__":
    from apps.realtime import procs

    procs.run_command_on_fresh_database("bench_deadlines", "bench", sys.argv[1:])
