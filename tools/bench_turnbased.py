"""``python -m tools.bench_turnbased``: what waiting turn-based tables cost a site, and how late
their deadlines fire (docs/turn-based.md, "What it costs").

    DATABASE_URL=postgres://... REDIS_URL=redis://... python -m tools.bench_turnbased \\
        [--waiting 100000] [--live 1000] [--seconds 30] [--due 200] [--move-seconds 15]

On a fresh migrated database made on ``DATABASE_URL``'s server (dropped afterwards), with its
own Celery worker and beat (the launcher's command lines) and its own Redis key prefix:

1. ``--live`` live tables being played (people at the page, no move clock): the CPU per
   second of beat, the worker (which runs beat's one-second sweep and the timers' dispatcher)
   and the database's backends over ``--seconds``, and the sweep's own time per run;
2. the same after ``--waiting`` turn-based tables waiting for a move (deadlines a day away,
   each with its timer in Redis as a real table has): the difference is what waiting tables
   cost, at most 5 ms of CPU a second (the issue's bound);
3. ``--due`` turn-based tables made through the services with a ``--move-seconds`` time per
   move whose people never move: every deadline's lateness (the move's time minus its due
   time), each within 1 s, and each played once.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import statistics
import subprocess
import sys
import time
from datetime import timedelta

from tools import procs

BOUND_MS = 5.0
LATE_BOUND_S = 1.0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tools.bench_turnbased",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--waiting", type=int, default=100_000)
    parser.add_argument("--live", type=int, default=1_000)
    parser.add_argument("--seconds", type=float, default=30, help="each measuring window")
    parser.add_argument("--due", type=int, default=200)
    parser.add_argument("--move-seconds", type=int, default=15)
    parser.add_argument("--sweeps", type=int, default=20, help="sweeps timed in this process")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # The bench's short time per move must be one the site offers; its own Redis prefix.
    os.environ["TURN_BASED_MOVE_SECONDS"] = f"{args.move_seconds},3600,28800,86400,259200"
    os.environ.setdefault("REDIS_KEY_PREFIX", f"bench-tb-{secrets.token_hex(3)}")
    result: dict = {}
    procs.run_on_fresh_database("turnbased", lambda: result.update(run(args)))
    return 0 if result.get("ok") else 1


def run(args: argparse.Namespace) -> dict:
    from django.conf import settings

    users = make_users(8)
    procs.log(f"{args.live} live tables")
    make_live(args.live, users)
    worker, beat = start_celery(settings)
    try:
        time.sleep(5)  # the worker connects, beat's first sweeps run
        base = measure(args.seconds, worker, beat, settings)
        base_sweep = time_sweeps(args.sweeps)
        procs.log(f"{args.waiting} waiting turn-based tables")
        began = time.monotonic()
        make_waiting(args.waiting, users)
        procs.log(f"made in {time.monotonic() - began:.0f} s")
        time.sleep(3)
        loaded = measure(args.seconds, worker, beat, settings)
        loaded_sweep = time_sweeps(args.sweeps)
        procs.log(f"{args.due} turn-based tables due in {args.move_seconds} s")
        late = deadlines(args.due, args.move_seconds, make_users(2 * args.due, "due"))
    finally:
        for proc in (beat, worker):
            proc.send_signal(signal.SIGTERM)
        for proc in (beat, worker):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        forget_redis(settings.REDIS_KEY_PREFIX)
    return report(args, base, loaded, base_sweep, loaded_sweep, late)


def forget_redis(prefix: str) -> None:
    """The bench's own keys (its timers, its snapshots) go with its database: only those under
    its prefix."""
    from apps.core import snapshots

    client = snapshots.client()
    batch = []
    for key in client.scan_iter(f"{prefix}:*", count=1000):
        batch.append(key)
        if len(batch) >= 1000:
            client.delete(*batch)
            batch = []
    if batch:
        client.delete(*batch)


# -- the tables ----------------------------------------------------------------------------

def make_users(count: int, prefix: str = "bench") -> list:
    from django.contrib.auth import get_user_model

    from apps.accounts.services import ensure_profile

    users = [get_user_model().objects.create_user(username=f"{prefix}{i}", password=None)
             for i in range(count)]
    for user in users:
        ensure_profile(user)
    return users


def _bulk_tables(count: int, users: list, *, turn: bool, prefix: str) -> list[int]:
    """Rows as the services leave them, written in bulk (the services would take an hour for
    100,000): a playing two-seat block table, its seats taken; turn-based ones wait for a
    person's move due in a day, live ones have their people at the page and no move clock."""
    from django.db import transaction
    from django.utils import timezone

    from apps.tables.models import Seat, Table

    now = timezone.now()
    ids: list[int] = []
    batch = 5000
    for start in range(0, count, batch):
        rows = []
        for i in range(start, min(count, start + batch)):
            deadline = now + timedelta(days=1, seconds=i % 86400) if turn else None
            rows.append(Table(code=f"{prefix}{i:09d}", host=users[i % len(users)],
                              preset="block", players=2, state=Table.State.PLAYING,
                              pace="turn" if turn else "live",
                              move_seconds=86400 if turn else None, person_clock=turn,
                              turn_started_at=now if turn else None, turn_deadline=deadline,
                              version=3))
        with transaction.atomic():
            made = Table.objects.bulk_create(rows)
            Seat.objects.bulk_create(
                Seat(table=t, index=k, user=users[(n + k) % len(users)], joined_at=now,
                     turn_based=turn, away_since=now - timedelta(hours=1) if turn else None)
                for n, t in enumerate(made) for k in range(2))
        ids += [t.pk for t in made]
    return ids


def make_live(count: int, users: list) -> list[int]:
    ids = _bulk_tables(count, users, turn=False, prefix="L")
    settle()
    return ids


def settle() -> None:
    """What autovacuum does soon after a change this big, done before a window rather than in
    it: without the statistics the planner guesses, and the sweep's range queries scan the
    tables they were made to skip."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def make_waiting(count: int, users: list) -> list[int]:
    """The waiting tables, and each one's timer in Redis, as arming its clock leaves it."""
    from apps.core import snapshots
    from apps.tables import timers
    from apps.tables.models import Table

    ids = _bulk_tables(count, users, turn=True, prefix="W")
    settle()
    pipe = snapshots.client().pipeline(transaction=False)
    for n, (table_id, deadline) in enumerate(
            Table.objects.filter(pk__in=ids).values_list("pk", "turn_deadline").iterator()):
        timers.set_timer(table_id, deadline, round_number=0, ply=0, pipe=pipe)
        if n % 5000 == 4999:
            pipe.execute()
    pipe.execute()
    return ids


def deadlines(count: int, move_seconds: int, users: list) -> dict:
    """``count`` two-person turn-based tables, started now through the services; nobody moves.
    Waits for the first deadline of each, then reads the table's moves back."""
    from apps.tables import services
    from apps.tables.models import Move, Table

    made = []
    for i in range(count):
        host, guest = users[2 * i], users[2 * i + 1]  # each within the limit on matches
        table = services.create_table(host=host, preset="block", players=2, pace="turn",
                                      move_seconds=move_seconds)
        services.join_table(user=guest, table_id=table.pk, code=table.code)
        services.start_match(user=host, table_id=table.pk)
        made.append(table.pk)
    last_due = max(Table.objects.filter(pk__in=made).values_list("turn_deadline", flat=True))
    wait = last_due.timestamp() - time.time() + 5
    procs.log(f"waiting {wait:.0f} s for the last deadline")
    time.sleep(max(0, wait))
    moves = list(Move.objects.filter(round__match__table_id__in=made, by=Move.By.TABLE,
                                     round__number=0, ply=0, due_at__isnull=False)
                 .values_list("round__match__table_id", "created_at", "due_at"))
    late = [(made_at - due).total_seconds() for _t, made_at, due in moves]
    tables = [t for t, _m, _d in moves]
    return {"tables": count, "fired": len(set(tables)), "twice": len(tables) - len(set(tables)),
            "late": late}


# -- measuring ---------------------------------------------------------------------------

def start_celery(settings) -> tuple[subprocess.Popen, subprocess.Popen]:
    from apps.core import processes

    env = dict(os.environ)
    var_dir = os.path.join(settings.VAR_DIR, "bench-turnbased")
    os.makedirs(var_dir, exist_ok=True)
    log = open(os.path.join(var_dir, "celery.log"), "ab")
    worker = subprocess.Popen(processes.worker(), env=env, stdout=log, stderr=log)
    beat = subprocess.Popen(processes.beat(var_dir), env=env, stdout=log, stderr=log)
    return worker, beat


def measure(seconds: float, worker, beat, settings) -> dict[str, float]:
    """CPU of beat, the worker and the database's backends, as ms of CPU per second."""
    database = settings.DATABASES["default"]["NAME"]
    window = procs.CpuWindow()
    window.reapers["worker"] = worker.pid
    backends = procs.postgres_backends(database)
    postmaster = procs.parent_pid(backends[0]) if backends else None
    if postmaster is not None:
        window.reapers["postgres"] = postmaster
    window.begin({"worker": [worker.pid, *procs.children(worker.pid)], "beat": [beat.pid],
                  "postgres": backends})
    time.sleep(seconds)
    cpu = window.end({"postgres": procs.postgres_backends(database),
                      "worker": procs.children(worker.pid)})
    return {name: part["cpu"] * 1000 for name, part in cpu.items()}


def time_sweeps(count: int) -> float:
    """The sweep's wall time per run, in this process (its queries included), in ms: its
    work is all in the database, so a query that grew with the waiting tables shows here."""
    from apps.tables import services

    times = []
    for _ in range(count):
        began = time.perf_counter()
        services.sweep()
        times.append((time.perf_counter() - began) * 1000)
        time.sleep(0.05)
    return statistics.median(times)


def report(args, base: dict, loaded: dict, base_sweep: float, loaded_sweep: float,
           late: dict) -> dict:
    print(f"turn-based bench: {args.waiting} waiting turn-based tables, {args.live} live; "
          f"windows of {args.seconds:g} s; machine loop {procs.loop_seconds():.2f} s")
    print("CPU ms per second     without   with   more")
    more_total = 0.0
    for name in ("beat", "worker", "postgres"):
        a, b = base.get(name, 0.0), loaded.get(name, 0.0)
        if name != "postgres":
            more_total += b - a
        print(f"  {name:<18} {a:8.2f} {b:7.2f} {b - a:+7.2f}")
    print(f"  sweep (ms per run)  {base_sweep:8.2f} {loaded_sweep:7.2f} "
          f"{loaded_sweep - base_sweep:+7.2f}")
    print(f"beat + worker: {more_total:+.2f} ms of CPU a second more (bound {BOUND_MS:g})")
    values = sorted(late["late"])
    ok = more_total <= BOUND_MS and late["fired"] == late["tables"] and not late["twice"]
    if values:
        p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
        print(f"deadlines: {late['fired']}/{late['tables']} fired, {late['twice']} twice; "
              f"late median {statistics.median(values):.3f} s, p99 {p99:.3f} s, "
              f"max {values[-1]:.3f} s (bound {LATE_BOUND_S:g} s)")
        ok = ok and values[-1] <= LATE_BOUND_S
    else:
        print(f"deadlines: none fired of {late['tables']}")
        ok = False
    print("OK" if ok else "OVER A BOUND")
    return {"ok": ok, "more_ms": more_total, "late": values}


if __name__ == "__main__":
    sys.exit(main())
