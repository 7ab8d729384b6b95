"""The tables' timers: when each table next acts by itself, kept in Redis.

One timer per table, in a sorted set scored by the moment it is due, its position (round, ply,
and whether a slow bot is to play) beside it in a hash. A new deadline replaces the table's
previous one, which could only be stale by then: a person who moves before the clock runs out
leaves nothing behind to fire. The worker's dispatcher (``apps.tables.dispatch``) takes due
timers atomically, so with several workers each fires once.

Why not a Celery task with an ETA per move, as before: that cost every move a message
published, received, held, run (only to find the table moved on) and acknowledged, for a move
that only says "remind me in 45 s" (docs/performance.md, "The cost of a move"); here it is one
round trip, and a timer replaced never runs.

What a restart loses is covered as before: a Redis restart drops the timers and beat's
one-second sweep (``services.sweep``) acts on every due deadline; a worker killed while its
dispatcher held timers leaves them to the sweep too. Every timer carries the position it was
set for, so acting late or twice changes nothing.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from apps.core import snapshots

#: Takes up to ARGV[2] timers due at ARGV[1] (ms), removing them: (table, position) pairs.
_POP_DUE = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
local out = {}
for _, table in ipairs(due) do
  out[#out + 1] = table
  out[#out + 1] = redis.call('HGET', KEYS[2], table) or ''
  redis.call('ZREM', KEYS[1], table)
  redis.call('HDEL', KEYS[2], table)
end
return out
"""
_pop_script = None


def _keys() -> tuple[str, str]:
    prefix = settings.REDIS_KEY_PREFIX
    return f"{prefix}:timers", f"{prefix}:timer-positions"


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def set_timer(table_id: int, due: datetime, *, round_number: int | None, ply: int | None,
              slow_bot: bool = False, pipe=None) -> None:
    """The table acts by itself at ``due`` (replacing any timer it had). Raises when Redis is
    away: the caller logs it, and the sweep acts instead. With ``pipe`` (a pipeline on the
    state's client) it is only queued there.

    The position is written before the time: a dispatcher taking the table's old timer in
    between finds the new position, which is not due yet, and changes nothing."""
    zset, positions = _keys()
    position = f"{'' if round_number is None else round_number}:" \
               f"{'' if ply is None else ply}:{int(slow_bot)}"
    own = pipe is None
    pipe = snapshots.client().pipeline(transaction=False) if own else pipe
    pipe.hset(positions, str(table_id), position)
    pipe.zadd(zset, {str(table_id): _ms(due)})
    if own:
        pipe.execute()


def pop_due(now: datetime, limit: int = 100) -> list[tuple[int, int | None, int | None, bool]]:
    """Take the timers due at ``now``: (table, round, ply, slow bot) each, oldest first."""
    global _pop_script
    client = snapshots.client()
    if _pop_script is None:
        _pop_script = client.register_script(_POP_DUE)
    raw = _pop_script(keys=list(_keys()), args=[_ms(now), limit], client=client)
    out = []
    for table, position in zip(raw[::2], raw[1::2], strict=True):
        round_text, ply_text, bot = (position.decode() if position else "::0").split(":")
        out.append((int(table), int(round_text) if round_text else None,
                    int(ply_text) if ply_text else None, bot == "1"))
    return out


def next_due() -> float | None:
    """When the earliest timer is due (seconds since the epoch), or None when none is set."""
    found = snapshots.client().zrange(_keys()[0], 0, 0, withscores=True)
    return found[0][1] / 1000 if found else None


def clear() -> None:
    """Forget every timer (tests)."""
    snapshots.client().delete(*_keys())
