"""When a person was last active on the site: a page they asked for or a frame their page
sent (a move, a chat line; not the page's own pings). Read by the notifications, which mail
and push nobody active a moment ago (docs/notifications.md).

Cheap by design: each process remembers when it last wrote each person's moment and writes
again only ``ACTIVITY_WRITE_SECONDS`` later, so a person busy on the site costs one UPDATE
every half minute or so per process, and a request whose profile was loaded anyway (the
language middleware) costs nothing when the row is recent. The sockets only :func:`note` a
person (no query on a move's path); the web process's heartbeat (``apps.realtime.hub``)
writes everyone noted since its last beat in one statement (:func:`flush`).
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from .models import Profile

#: user id -> time.monotonic() of this process's last write. Bounded: emptied when full.
_written: dict[int, float] = {}
_KEEP = 10_000
#: People noted by the sockets since the heartbeat's last flush.
_pending: set[int] = set()


def _every() -> float:
    return float(getattr(settings, "ACTIVITY_WRITE_SECONDS", 30))


def due(user_id: int) -> bool:
    """Whether this process should write ``user_id``'s moment now (no query)."""
    last = _written.get(user_id)
    return last is None or time.monotonic() - last >= _every()


def seen(user_id: int, *, last: datetime | None = None, now: datetime | None = None) -> bool:
    """``user_id`` did something now. ``last``: the moment their profile row holds, when the
    caller has it (no write when it is recent). Returns whether a row was written."""
    if not due(user_id):
        return False
    now = now or timezone.now()
    if last is not None and now - last < timedelta(seconds=_every()):
        _remember(user_id)
        return False
    Profile.objects.filter(user_id=user_id).update(last_active_at=now)
    _remember(user_id)
    return True


def note(user_id: int) -> None:
    """A socket frame of ``user_id``'s: written by the next :func:`flush` (no query here)."""
    if due(user_id):
        _pending.add(user_id)
        _remember(user_id)


def pending() -> bool:
    return bool(_pending)


def flush(*, now: datetime | None = None) -> int:
    """Write the moment of everyone noted since the last flush, in one statement."""
    if not _pending:
        return 0
    ids = sorted(_pending)
    _pending.clear()
    return Profile.objects.filter(user_id__in=ids).update(last_active_at=now or timezone.now())


def _remember(user_id: int) -> None:
    if len(_written) >= _KEEP:
        _written.clear()
    _written[user_id] = time.monotonic()


def active_since(user_ids, since: datetime) -> set[int]:
    """Those of ``user_ids`` active at or after ``since``."""
    return set(Profile.objects.filter(user_id__in=list(user_ids), last_active_at__gte=since)
               .values_list("user_id", flat=True))
