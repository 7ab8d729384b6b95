"""Reading the fair-play record: a person's share and wait, a table's minimum, the words
for them. Nothing here writes.

:func:`wait_left` is what the tournaments ask before someone enters one (and quick play,
through :func:`quick_play_refusal`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from . import rules
from .models import CollusionReport, PersonTally, Record, Stint, TableMinimum


@dataclass(frozen=True)
class Standing:
    """One person's record as the pages show it."""

    started: int = 0
    finished: int = 0
    abandoned: int = 0
    abandoned_at: tuple[datetime, ...] = ()

    @property
    def judged(self) -> int:
        return rules.judged(self.finished, self.abandoned)

    @property
    def share(self) -> int | None:
        return rules.share(self.finished, self.abandoned)

    @property
    def to_judge(self) -> int:
        """Matches still to finish (or leave) before the share is shown."""
        return max(0, rules.MATCHES_TO_JUDGE - self.judged)

    def recent(self, now: datetime) -> int:
        return len(rules.recent(list(self.abandoned_at), now))

    def wait_left(self, now: datetime) -> timedelta:
        return rules.wait_left(list(self.abandoned_at), now)


def _times(raw: list) -> tuple[datetime, ...]:
    out = []
    for value in raw or ():
        moment = parse_datetime(value) if isinstance(value, str) else None
        if moment is not None:
            out.append(moment)
    return tuple(out)


def _standing(record: Record | None) -> Standing:
    if record is None:
        return Standing()
    return Standing(record.started, record.finished, record.abandoned,
                    _times(record.abandoned_at))


def standing(user) -> Standing:
    if user is None or not getattr(user, "is_authenticated", False):
        return Standing()
    return _standing(Record.objects.filter(user_id=user.pk).first())


def standings(user_ids) -> dict[int, Standing]:
    """Several people's records at once (a table's seats, a page of reports)."""
    ids = [u for u in set(user_ids) if u is not None]
    if not ids:
        return {}
    return {r.user_id: _standing(r) for r in Record.objects.filter(user_id__in=ids)}


def wait_left(user, *, now: datetime | None = None) -> timedelta:
    """How long this person must still wait before quick play (and a tournament): zero when
    none. The wait grows with their abandonments within ``rules.ABANDON_WINDOW``
    (docs/fairplay.md)."""
    return standing(user).wait_left(now or timezone.now())


def table_minimum(table_id: int) -> int:
    """The share a host asks of the people who sit at their table; 0 when none."""
    return TableMinimum.objects.filter(table_id=table_id).values_list(
        "minimum", flat=True).first() or 0


def abandoned_stints(user, limit: int = 10) -> list[Stint]:
    """The person's last abandoned matches, newest first, with their tables (for staff)."""
    return list(Stint.objects.filter(user=user, state=Stint.State.ABANDONED)
                .select_related("match__table").order_by("-ended_at")[:limit])


# -- words --------------------------------------------------------------------------------------

def duration_words(left: timedelta) -> str:
    """A wait in the words of the active language, to the minute above."""
    minutes = max(1, math.ceil(left.total_seconds() / 60))
    hours, minutes = divmod(minutes, 60)
    hour_words = ngettext("%(n)s hour", "%(n)s hours", hours) % {"n": hours}
    minute_words = ngettext("%(n)s minute", "%(n)s minutes", minutes) % {"n": minutes}
    if hours and minutes:
        return _("%(hours)s and %(minutes)s") % {"hours": hour_words, "minutes": minute_words}
    return hour_words if hours else minute_words


def share_words(mine: Standing) -> str:
    """The share as a sentence, or why there is none yet."""
    if mine.share is None:
        return _("Fair play: too few matches to judge yet (%(n)s of %(few)s).") % {
            "n": mine.judged, "few": rules.MATCHES_TO_JUDGE}
    return ngettext("Fair play: finished %(share)s%% of %(n)s match.",
                    "Fair play: finished %(share)s%% of %(n)s matches.",
                    mine.judged) % {"share": mine.share, "n": mine.judged}


def wait_words(mine: Standing, now: datetime) -> str:
    """Why quick play is closed to this person for now, and for how long; empty when open."""
    left = mine.wait_left(now)
    if not left:
        return ""
    count = mine.recent(now)
    return ngettext(
        "You left %(count)s match in the last 24 hours: you can use Play now again in "
        "%(wait)s.",
        "You left %(count)s matches in the last 24 hours: you can use Play now again in "
        "%(wait)s.", count) % {"count": count, "wait": duration_words(left)}


def tournament_wait_words(mine: Standing, now: datetime) -> str:
    """Why tournaments are closed to this person for now, and for how long; empty when open."""
    left = mine.wait_left(now)
    if not left:
        return ""
    count = mine.recent(now)
    return ngettext(
        "You left %(count)s match in the last 24 hours: you can register for tournaments "
        "again in %(wait)s.",
        "You left %(count)s matches in the last 24 hours: you can register for tournaments "
        "again in %(wait)s.", count) % {"count": count, "wait": duration_words(left)}


def tournament_refusal(user, *, now: datetime | None = None) -> str | None:
    """The same wait before registering for a tournament (``apps.tournaments``)."""
    return tournament_wait_words(standing(user), now or timezone.now()) or None


def minimum_words(minimum: int) -> str:
    return _("Only players who finish at least %(minimum)s%% of their matches may sit here "
             "(newcomers with fewer than %(few)s matches too).") % {
        "minimum": minimum, "few": rules.MATCHES_TO_JUDGE}


def staff_note(mine: Standing, now: datetime) -> str:
    """One line beside a person in the staff's report queue."""
    recent = mine.recent(now)
    if mine.share is None:
        text = _("Fair play: new (%(judged)s judged, %(left)s left)") % {
            "judged": mine.judged, "left": mine.abandoned}
    else:
        text = _("Fair play: %(share)s%% (%(left)s of %(judged)s left)") % {
            "share": mine.share, "left": mine.abandoned, "judged": mine.judged}
    if recent:
        text += " · " + ngettext("%(n)s match left in the last 24 hours",
                                 "%(n)s matches left in the last 24 hours", recent) % {"n": recent}
    return text


# -- the tables' refusals (registered in apps.fairplay.apps) ----------------------------------

def join_refusal(*, table, user) -> str | None:
    """A host's minimum: a person with a judged share below it may not sit (nor reserve a
    seat mid-match); newcomers may."""
    minimum = table_minimum(table.pk)
    if not minimum:
        return None
    mine = standing(user)
    if rules.meets(mine.finished, mine.abandoned, minimum):
        return None
    return _("Only players who finish at least %(minimum)s%% of their matches may sit at "
             "this table: you have finished %(share)s%%.") % {"minimum": minimum,
                                                              "share": mine.share}


def quick_play_refusal(user) -> str | None:
    """The wait after repeated abandonments: quick play says how long is left."""
    return wait_words(standing(user), timezone.now()) or None


# -- the collusion check (staff only) ---------------------------------------------------------

def collusion_case(report_id: int):
    """A collusion report with its pair, for staff; None when there is no such report."""
    return (CollusionReport.objects.select_related("pair__low", "pair__high", "report",
                                                   "handled_by")
            .filter(pk=report_id).first())


def collusion_case_of(report):
    """The collusion report behind a moderation report, or None (most reports are people's)."""
    return (CollusionReport.objects.select_related("pair__low", "pair__high")
            .filter(report=report).first())


def pair_matches(pair) -> list:
    """The pair's judged matches, oldest first, with their tables."""
    return list(pair.matches_judged.select_related("match__table"))


def person_tally(user):
    return PersonTally.objects.filter(user=user).first()
