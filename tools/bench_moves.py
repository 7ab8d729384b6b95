"""``python -m tools.bench_moves``: what one automatic move costs the process that applies it.

    DATABASE_URL=postgres://... REDIS_URL=redis://... python -m tools.bench_moves \\
        [--tables 20] [--moves 2000]

CPU and wall time per move of ``services.act_on_deadline`` (lock, engine, writes, snapshot,
publish, next timer), run in this process on N partners tables in turn, and the move path's
reads through the ORM against the same reads as SQL (``apps.tables.rows``). On a fresh migrated
database created on ``DATABASE_URL``'s server and dropped afterwards. Numbers, not assertions:
run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import sys
import time

from tools import procs
from tools.bench_deadlines import delete_tables, open_tables

PREFIX = "benchmv-"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tools.bench_moves",
        description="Measure the CPU and time one automatic move costs in-process.")
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--moves", type=int, default=2000)
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> None:
    from datetime import timedelta

    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from apps.tables import services

    ids = open_tables(args.tables, turn_seconds=2, prefix=PREFIX)
    later = timezone.now() + timedelta(days=1)  # every deadline is due

    def play(count: int) -> None:
        done = 0
        while done < count:
            for pk in ids:
                try:
                    services.act_on_deadline(table_id=pk, now=later)
                    done += 1
                except services.ServiceError:
                    pass

    play(len(ids) * 3)  # warm: caches, connections, the first deals
    cpu, wall = time.process_time(), time.perf_counter()
    play(args.moves)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    with CaptureQueriesContext(connection) as queries:
        play(len(ids))
    moves = args.moves
    print(f"{moves} automatic moves on {len(ids)} tables: CPU {cpu / moves * 1000:.2f} ms "
          f"and wall {wall / moves * 1000:.2f} ms per move "
          f"({moves / wall:.0f} moves/s on one thread); "
          f"{len(queries) / len(ids):.1f} statements per move (BEGIN and COMMIT included)")
    compare_reads(ids[0])
    delete_tables(PREFIX)


def compare_reads(pk: int) -> None:
    from django.db import transaction

    from apps.tables import rows
    from apps.tables.models import Match, Seat, Table

    pairs = [
        ("lock the table", lambda: Table.objects.select_for_update().get(pk=pk),
         lambda: rows.locked_table(pk)),
        ("seats with people", lambda: list(Seat.objects.filter(table_id=pk).select_related(
            "user__profile").order_by("index")), lambda: rows.seats_with_people(pk)),
        ("current match", lambda: Match.objects.filter(table_id=pk).order_by(
            "-number").first(), lambda: rows.current_match(pk)),
    ]
    with transaction.atomic():
        for name, orm, sql in pairs:
            print(f"{name}: ORM {cpu_ms(orm):.3f} ms CPU, SQL {cpu_ms(sql):.3f} ms CPU")


def cpu_ms(fn, count: int = 2000) -> float:
    fn()
    began = time.process_time()
    for _ in range(count):
        fn()
    return (time.process_time() - began) / count * 1000


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    procs.run_on_fresh_database("benchmv", lambda: run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
