"""``python -m tools.bench_prune``: what pruning table events costs.

    DATABASE_URL=postgres://... python -m tools.bench_prune [--tables 200] [--versions 5000]

``--tables`` started tables given ``--versions`` event rows each (bulk-inserted, as a long
evening of play leaves them), then beat's prune task run until nothing is left to delete (each
run at most 100,000 rows, in batches of 5,000), and once more on the pruned tables, the cost it
has every minute from then on. On a fresh migrated database created on ``DATABASE_URL``'s server
and dropped afterwards. Numbers, not assertions.
"""

from __future__ import annotations

import argparse
import sys
import time

from tools import procs
from tools.bench_deadlines import delete_tables, open_tables

PREFIX = "benchpr-"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tools.bench_prune",
                                     description="Measure what pruning old table events costs.")
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--versions", type=int, default=5000)
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> None:
    from django.db import connection

    from apps.tables import services, state
    from apps.tables.models import Table, TableEvent

    ids = open_tables(args.tables, turn_seconds=2, prefix=PREFIX)
    top = args.versions
    TableEvent.objects.filter(table_id__in=ids).delete()
    for pk in ids:
        TableEvent.objects.bulk_create(
            [TableEvent(table_id=pk, version=v, events=[{"kind": "move", "seat": v % 4}])
             for v in range(1, top + 1)], batch_size=5000)
    Table.objects.filter(pk__in=ids).update(version=top)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE tables_tableevent")
    rows = TableEvent.objects.count()
    print(f"{len(ids)} tables, {rows:,} event rows", flush=True)
    runs, deleted, began = 0, 0, time.perf_counter()
    while True:
        at = time.perf_counter()
        n = services.prune_table_events()
        runs += 1
        deleted += n
        print(f"  run {runs}: {n:,} deleted in {time.perf_counter() - at:.2f} s", flush=True)
        if n == 0:
            break
    spent = time.perf_counter() - began
    print(f"pruned {deleted:,} rows in {spent:.1f} s "
          f"({deleted / max(spent, 1e-9):,.0f} rows/s); "
          f"{TableEvent.objects.count():,} left "
          f"(= {len(ids)} x {state.LOG_LENGTH})")
    at = time.perf_counter()
    services.prune_table_events()
    idle = 1000 * (time.perf_counter() - at)
    print(f"a run with nothing to delete: {idle:.1f} ms")
    delete_tables(PREFIX)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    procs.run_on_fresh_database("benchpr", lambda: run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
