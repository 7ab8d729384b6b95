"""What pruning table events costs: ``--tables`` started tables given ``--versions`` event rows
each (bulk-inserted, as a long evening of play leaves them), then beat's prune task run until
nothing is left to delete (each run at most 100,000 rows, in batches of 5,000), and once more on
the pruned tables, the cost it has every minute from then on. Numbers, not assertions."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand
from django.db import connection

from apps.tables import services, state
from apps.tables.management.commands.bench_deadlines import delete_tables, open_tables
from apps.tables.models import Table, TableEvent

PREFIX = "benchpr-"


class Command(BaseCommand):
    help = "Measure what pruning old table events costs."

    def add_arguments(self, parser):
        parser.add_argument("--tables", type=int, default=200)
        parser.add_argument("--versions", type=int, default=5000)

    def handle(self, *args, **opts):
        ids = open_tables(opts["tables"], turn_seconds=2, prefix=PREFIX)
        top = opts["versions"]
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
        self.stdout.write(f"{len(ids)} tables, {rows:,} event rows")
        runs, deleted, began = 0, 0, time.perf_counter()
        while True:
            at = time.perf_counter()
            n = services.prune_table_events()
            runs += 1
            deleted += n
            self.stdout.write(f"  run {runs}: {n:,} deleted in {time.perf_counter() - at:.2f} s")
            if n == 0:
                break
        spent = time.perf_counter() - began
        self.stdout.write(f"pruned {deleted:,} rows in {spent:.1f} s "
                          f"({deleted / max(spent, 1e-9):,.0f} rows/s); "
                          f"{TableEvent.objects.count():,} left "
                          f"(= {len(ids)} x {state.LOG_LENGTH})")
        at = time.perf_counter()
        services.prune_table_events()
        idle = 1000 * (time.perf_counter() - at)
        self.stdout.write(f"a run with nothing to delete: {idle:.1f} ms")
        delete_tables(PREFIX)
