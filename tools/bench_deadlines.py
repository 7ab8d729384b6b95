"""``python -m tools.bench_deadlines``: how late does the table act after a deadline, with
many timed tables and nobody moving?

    DATABASE_URL=postgres://... REDIS_URL=redis://... python -m tools.bench_deadlines \\
        --tables N --seconds 60 --turn-seconds T [--pool prefork|threads|solo] [--bots 0-3]

Creates a fresh migrated database on ``DATABASE_URL``'s server (dropped afterwards, so that it
never fills a real one), starts its own Celery worker and beat against it and Redis, opens N
partners tables whose four players are connected but never move, runs for a while, stops the
processes, and reads back every move the table made: its lateness (created - due) and whether
every turn was acted on exactly once.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time

from tools import procs

PREFIX = "bench-"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tools.bench_deadlines",
        description="Measure how late automatic moves are after their deadlines.")
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--seconds", type=int, default=60, help="how long to run")
    parser.add_argument("--turn-seconds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=2,
                        help="worker processes (prefork) or threads")
    # The site's own pool by default (apps.core.processes.worker), so the figure is the site's.
    parser.add_argument("--pool", default="threads", choices=["prefork", "threads", "solo"])
    parser.add_argument("--bots", type=int, default=0, choices=[0, 1, 2, 3],
                        help="bot seats per table (medium bots thinking one turn time)")
    parser.add_argument("--keep", action="store_true", help="keep the bench tables")
    parser.add_argument("--web-ms", type=float, default=None,
                        help="one web move's CPU ms (the load test's 'web' figure) to compare "
                             "the worker's CPU per automatic move with")
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> None:
    from django.utils import timezone

    from config.celery import app

    delete_tables()
    app.control.purge()  # timers left by an earlier run would act on deleted tables
    worker, beat = start_celery(args.concurrency, args.pool)
    try:
        began = time.monotonic()
        tables = open_tables(args.tables, turn_seconds=args.turn_seconds, bots=args.bots)
        steady_from = timezone.now()
        print(f"{len(tables)} tables started in {time.monotonic() - began:.0f} s;"
              f" measuring the next {args.seconds} s", flush=True)
        meter = CpuMeter(worker.pid, beat.pid)
        time.sleep(args.seconds)
        meter.stop()
    finally:
        stopped = timezone.now()
        for proc in (beat, worker):
            proc.send_signal(signal.SIGTERM)
        for proc in (beat, worker):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
    automatic = report(tables, steady_from, stopped)
    meter.report(automatic, web_ms=args.web_ms)
    if not args.keep:
        delete_tables()


def start_celery(concurrency: int, pool: str):
    from django.conf import settings

    from apps.core import processes

    env = dict(os.environ)
    # The launcher's own command lines, so the bench measures the worker the site runs.
    worker = subprocess.Popen(processes.worker(concurrency=concurrency, pool=pool), env=env)
    var_dir = os.path.join(settings.VAR_DIR, "bench")
    os.makedirs(var_dir, exist_ok=True)
    beat = subprocess.Popen(processes.beat(var_dir), env=env)
    time.sleep(3)  # let the worker connect before the first timers are due
    return worker, beat


class CpuMeter:
    """CPU of the worker (with a prefork pool's children), beat, the database's backends and
    Redis while the bench measures, so that one automatic move's cost can be set beside one
    web move's (the load test's figure): CPU per move does not swing with the machine's mood
    the way lateness does."""

    def __init__(self, worker_pid: int, beat_pid: int) -> None:
        from django.conf import settings

        self.database = settings.DATABASES["default"]["NAME"]
        self.redis_url = settings.REDIS_URL
        pids = {"worker": [worker_pid, *procs.children(worker_pid)], "beat": [beat_pid],
                "postgres": procs.postgres_backends(self.database)}
        self.window = procs.CpuWindow()
        self.window.reapers["worker"] = worker_pid
        postmaster = procs.parent_pid(pids["postgres"][0]) if pids["postgres"] else None
        if postmaster is not None:
            self.window.reapers["postgres"] = postmaster
        _pid, self.redis0 = procs.redis_cpu(self.redis_url)
        self.began = time.monotonic()
        self.window.begin(pids)
        self.worker_pid = worker_pid

    def stop(self) -> None:
        self.cpu = self.window.end({"postgres": procs.postgres_backends(self.database),
                                    "worker": procs.children(self.worker_pid)})
        self.wall = time.monotonic() - self.began
        _pid, redis1 = procs.redis_cpu(self.redis_url)
        if self.redis0 is not None and redis1 is not None:
            self.cpu["redis"] = {"cpu": (redis1 - self.redis0) / self.wall}

    def report(self, moves: int, *, web_ms: float | None) -> None:
        if not moves:
            return
        per_move = {name: part["cpu"] * self.wall * 1000 / moves
                    for name, part in self.cpu.items()}
        worker = per_move.get("worker", 0.0)
        parts = ", ".join(f"{name} {ms:.2f}" for name, ms in per_move.items())
        print(f"CPU ms per automatic move: worker {worker:.2f}; all {sum(per_move.values()):.2f}"
              f" ({parts}); machine loop {procs.loop_seconds():.2f} s")
        if web_ms:
            print(f"worker per automatic move / web per move ({web_ms:.2f} ms): "
                  f"{worker / web_ms:.2f}x")


def report(tables: list[int], steady_from, stopped) -> int:
    """Prints lateness and correctness; returns the automatic moves counted."""
    from datetime import timedelta

    from django.db.models import Count

    from apps.tables.models import Move, Table

    # Only deadlines due once every table was open: setup itself loads the machine.
    moves = Move.objects.filter(round__match__table__in=tables,
                                by__in=[Move.By.TABLE, Move.By.BOT],
                                due_at__gte=steady_from)
    late = sorted((m.created_at - m.due_at).total_seconds() * 1000
                  for m in moves.only("created_at", "due_at"))
    if not late:
        print("no automatic move was made: is Redis reachable?")
        return 0
    duplicates = (Move.objects.filter(round__match__table__in=tables)
                  .values("round_id", "ply").annotate(n=Count("id")).filter(n__gt=1).count())
    gaps = 0
    for round_id in Move.objects.filter(round__match__table__in=tables).values_list(
            "round_id", flat=True).distinct():
        plies = list(Move.objects.filter(round_id=round_id).values_list("ply", flat=True))
        gaps += plies != list(range(len(plies)))
    # A deadline more than a second old when the workers stopped was missed.
    missed = Table.objects.filter(pk__in=tables, paused=False,
                                  turn_deadline__lt=stopped - timedelta(seconds=1)).count()

    def pct(p: float) -> float:
        return late[min(len(late) - 1, int(p * len(late)))]

    print(f"automatic moves: {len(late)} on {len(tables)} tables, "
          f"{len(late) / (stopped - steady_from).total_seconds():.0f} per second\n"
          f"lateness after the deadline: p50 {statistics.median(late):.0f} ms, "
          f"p99 {pct(0.99):.0f} ms, max {late[-1]:.0f} ms\n"
          f"turns acted on twice: {duplicates}; rounds with a skipped ply: {gaps}; "
          f"deadlines missed: {missed}")
    return len(late)


def open_tables(count: int, *, turn_seconds: int, bots: int = 0,
                prefix: str = PREFIX) -> list[int]:
    """``count`` started partners tables at ``turn_seconds`` turns, ``bots`` of each table's
    seats bots (thinking one turn time), the others people connected and never moving; their
    users are named after ``prefix`` (the benchmarks delete them by it)."""
    from django.contrib.auth import get_user_model

    from apps.tables import services
    from apps.tables.models import Table

    users = get_user_model().objects
    ids = []
    for t in range(count):
        people = [users.create_user(username=f"{prefix}{t}-{s}") for s in range(4 - bots)]
        table = services.create_table(host=people[0], preset="partners", public=True,
                                      allow_bots=bots > 0,
                                      options={"turn_seconds": turn_seconds})
        Table.objects.filter(pk=table.pk).update(next_round_seconds=1,
                                                 bot_think_ms=turn_seconds * 1000)
        for person in people[1:]:
            services.join_table(user=person, table_id=table.pk)
        for _bot in range(bots):
            services.add_bot(user=people[0], table_id=table.pk, level="medium")
        for s, person in enumerate(people):
            # Through the service, as a socket opening does: the person is present (an
            # away one would get a bot standing in after two minutes).
            services.connect(user=person, table_id=table.pk, channel_name=f"{prefix}{t}-{s}")
        services.start_match(user=people[0], table_id=table.pk)
        ids.append(table.pk)
    procs.analyze()
    return ids


def delete_tables(prefix: str = PREFIX) -> None:
    """Every table and user :func:`open_tables` made with ``prefix``."""
    from django.contrib.auth import get_user_model

    from apps.tables.models import Table

    Table.objects.filter(host__username__startswith=prefix).delete()
    get_user_model().objects.filter(username__startswith=prefix).delete()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    procs.run_on_fresh_database("bench", lambda: run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
