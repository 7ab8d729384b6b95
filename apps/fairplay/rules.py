"""The fair-play numbers and the arithmetic on them (docs/fairplay.md).

Pure Python, no Django: the property tests in tests/fairplay/test_rules.py try it on any
record, and the services, selectors and pages only read these names.
"""

from __future__ import annotations

from datetime import datetime, timedelta

#: Matches a person must have finished or abandoned before their share says anything. Below
#: it the seats show no share and a host's minimum lets them sit: a newcomer who left one of
#: their first two matches is not 50% anything, and refusing every newcomer would keep them
#: from ever getting a record.
MATCHES_TO_JUDGE = 5

#: Abandonments older than this no longer add up towards a wait before quick play.
ABANDON_WINDOW = timedelta(hours=24)

#: The wait after the last abandonment, by how many there were within the window. One alone
#: costs nothing: a phone losing its network happens to everybody once.
WAIT_AFTER_2 = timedelta(minutes=5)
WAIT_AFTER_3 = timedelta(minutes=30)
WAIT_AFTER_4 = timedelta(hours=2)
#: (abandonments within the window, at least; the wait), longest first.
WAITS: tuple[tuple[int, timedelta], ...] = ((4, WAIT_AFTER_4), (3, WAIT_AFTER_3),
                                             (2, WAIT_AFTER_2))

#: Abandonment times a record keeps (newest last): more than the longest tier needs, so staff
#: see a little history too.
KEPT_ABANDONMENTS = 20

#: The lowest and highest minimum a host may ask for (a share, in percent).
MINIMUM_RANGE = (0, 100)

ZERO = timedelta(0)


def judged(finished: int, abandoned: int) -> int:
    """The matches that count towards the share: finished or abandoned (not the ones still
    being played, nor those closed by staff or emptied: docs/fairplay.md)."""
    return finished + abandoned


def share(finished: int, abandoned: int) -> int | None:
    """The share of judged matches finished, in whole percent rounded down (so 100% means
    never once left), or None with fewer than :data:`MATCHES_TO_JUDGE`."""
    total = judged(finished, abandoned)
    if total < MATCHES_TO_JUDGE:
        return None
    return finished * 100 // total


def meets(finished: int, abandoned: int, minimum: int) -> bool:
    """Whether a record may sit at a table asking for ``minimum`` percent. Too few matches
    to judge always may; the rest compare exactly (no rounding lets 79.6% pass 80)."""
    total = judged(finished, abandoned)
    return total < MATCHES_TO_JUDGE or finished * 100 >= minimum * total


def recent(times: list[datetime], now: datetime) -> list[datetime]:
    """The abandonments within the window before ``now`` (none from after it)."""
    return [t for t in times if now - ABANDON_WINDOW < t <= now]


def wait_for(count: int) -> timedelta:
    """The wait after the last of ``count`` abandonments within the window."""
    for least, wait in WAITS:
        if count >= least:
            return wait
    return ZERO


def wait_left(times: list[datetime], now: datetime) -> timedelta:
    """How long before quick play is open again, given the abandonment times: zero when
    none is due."""
    window = recent(times, now)
    wait = wait_for(len(window))
    if not wait:
        return ZERO
    return max(ZERO, max(window) + wait - now)
