"""``python -m tools.bench_fairplay``: what fair play's ``on_change`` hook adds to a move.

    python -m tools.bench_fairplay [--calls 10000] [--repeat 7]

The hook (``apps.fairplay.record.table_changing``) runs for every version of every table, under
the table's row lock. A move's version returns after one look at each event's kind; this times
``--calls`` calls of it with a move's events (a move alone, and a move with the table's
automatic pass after it) against as many calls of a no-op hook with the same signature, best of
``--repeat`` runs, and prints each per call, their ratio, and the hook's time as a share of a
move's CPU (``--move-ms``, 4 ms by ``tools.bench_moves``). No database: the move path never
reaches one. Numbers, not assertions.
"""

from __future__ import annotations

import argparse
import os
import secrets
import time
from datetime import UTC, datetime

from tools.procs import loop_seconds


class _Table:
    """What the hook reads of a table on the move path: nothing, until a watched event."""

    pk = 1
    practice = False


MOVE = {"kind": "move", "ply": 4, "seat": 1, "play": "6-4", "end": "A",
        "at": "2026-12-04T07:00:00.000+00:00", "by": "player"}
PASS = {"kind": "move", "ply": 5, "seat": 2, "pass": True,
        "at": "2026-12-04T07:00:00.000+00:00", "by": "table"}


def noop(*, table, seats, events, now) -> None:
    return None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tools.bench_fairplay",
                                     description="Time fair play's hook on a move's version.")
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--move-ms", type=float, default=4.0)
    return parser.parse_args(argv)


def best(fn, events: list[dict], calls: int, repeat: int) -> float:
    """The best of ``repeat`` runs of ``calls`` calls, in seconds per call."""
    table, seats, now = _Table(), [], datetime.now(UTC)
    times = []
    for _run in range(repeat):
        began = time.perf_counter()
        for _call in range(calls):
            fn(table=table, seats=seats, events=events, now=now)
        times.append((time.perf_counter() - began) / calls)
    return min(times)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    # Settings refuse to start without a key when DEBUG is off; no database is opened.
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    # After setup: the hook's module imports the fair-play models.
    from apps.fairplay.record import table_changing

    print(f"{args.calls:,} calls, best of {args.repeat}; this machine's loop: "
          f"{loop_seconds():.2f} s (docs/performance.md)")
    for name, events in (("a move", [MOVE]), ("a move and a pass", [MOVE, PASS])):
        hook = best(table_changing, events, args.calls, args.repeat)
        base = best(noop, events, args.calls, args.repeat)
        share = hook / (args.move_ms / 1000) * 100
        print(f"  {name:18} hook {hook * 1e9:7.0f} ns   no-op {base * 1e9:6.0f} ns   "
              f"ratio {hook / base:4.2f}x   {share:.4f}% of a {args.move_ms:g} ms move")


if __name__ == "__main__":
    main()
