"""A site down is nobody's time: beat's heartbeat, and the turn-based clocks an outage moves on.

Beat's sweep writes when it ran (:class:`~apps.tables.models.BeatMark`, one row, one UPDATE a
second). When it finds the last mark older than ``pace.OUTAGE_SECONDS`` (every process was
stopped, or beat was), the site was away for that long: every person's clock still running at
a turn-based table (``Table.person_clock``, a partial index) moves on by the gap, in one
statement, as Lichess does after a restart. Meanwhile a timer firing while the mark is old
(:func:`beat_missing`) leaves a person's timeout to the sweep, which moves the clocks first.
Live tables are not touched: their seconds-long clocks start again with the people's pages.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import F

from ..models import BeatMark, Table
from ..pace import outage_threshold


def note_beat(*, now: datetime) -> timedelta | None:
    """Beat ran at ``now``: write the mark; after an outage, move the turn-based clocks on by
    it and return the gap (else None)."""
    with transaction.atomic():
        mark = BeatMark.objects.select_for_update().filter(name="sweep").first()
        if mark is None:
            BeatMark.objects.create(name="sweep", seen_at=now)
            return None
        last = mark.seen_at
        if now <= last:
            return None
        BeatMark.objects.filter(pk=mark.pk).update(seen_at=now)
        gap = now - last
        if gap <= outage_threshold():
            return None
        extend_clocks(since=last, by=gap)
        return gap


def extend_clocks(*, since: datetime, by: timedelta) -> int:
    """Every person's clock that was still running at ``since`` gets ``by`` more; returns how
    many tables. The turn's start moves with the deadline, so arming the clock again later
    (a chat line, a vacation) gives the same new deadline."""
    return Table.objects.filter(person_clock=True, turn_deadline__gt=since,
                                state=Table.State.PLAYING).update(
        turn_deadline=F("turn_deadline") + by, turn_started_at=F("turn_started_at") + by)


def beat_missing(*, now: datetime) -> bool:
    """Whether beat has been silent longer than an outage: its mark exists and is old."""
    seen = BeatMark.objects.filter(name="sweep").values_list("seen_at", flat=True).first()
    return seen is not None and now - seen > outage_threshold()
