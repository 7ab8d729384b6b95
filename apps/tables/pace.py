"""Turn-based tables' numbers, in one place (docs/turn-based.md).

A turn-based table is an ordinary table with ``Table.pace == "turn"``: every preset, seat, bot,
watcher and record works as at a live table, but the presence rules (away, empty, a stand-in for
being away) do not apply and each person's turn has its own deadline of ``Table.move_seconds``,
kept in the database (``Table.turn_deadline``, indexed), so a restart or a Redis flush loses none.

Each number can be set from the environment through ``config/settings.py`` (an operator's test
site offers a 60-second "turn-based" game with ``TURN_BASED_MOVE_SECONDS=60,3600``).
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

LIVE = "live"
TURN = "turn"
PACE_CHOICES = [(LIVE, _("Live")), (TURN, _("Turn-based"))]

#: The time per move a host may choose: 1 hour, 8 hours, 1 day, 3 days.
MOVE_SECONDS = (3600, 8 * 3600, 86400, 3 * 86400)
#: Timeouts in a row in one match after which a stand-in bot takes the seat to the match's end.
TIMEOUTS_DEFAULT = 3
TIMEOUTS_MIN, TIMEOUTS_MAX = 1, 5
#: Vacation days a member has in a calendar year.
VACATION_DAYS = 14
#: Unfinished turn-based matches a person may sit in: this many, plus one per finished one,
#: up to UNFINISHED_MAX.
UNFINISHED_BASE = 20
UNFINISHED_MAX = 50
#: An adjourned match whose host has not resumed it this long ends without counting.
ADJOURNED_DAYS = 30
#: A turn-based "play now" table whose host allowed bots waits this long for people before
#: bots take the free seats.
QUICK_FILL_SECONDS = 3600
#: A gap this long between two beats is an outage: every person's clock at a turn-based table
#: is moved on by the gap (as Lichess does after a restart).
OUTAGE_SECONDS = 30


def move_seconds_choices() -> tuple[int, ...]:
    return tuple(getattr(settings, "TURN_BASED_MOVE_SECONDS", None) or MOVE_SECONDS)


def vacation_days() -> float:
    return float(getattr(settings, "TURN_BASED_VACATION_DAYS", None) or VACATION_DAYS)


def unfinished_base() -> int:
    return int(getattr(settings, "TURN_BASED_UNFINISHED_BASE", None) or UNFINISHED_BASE)


def unfinished_max() -> int:
    return int(getattr(settings, "TURN_BASED_UNFINISHED_MAX", None) or UNFINISHED_MAX)


def adjourned_limit() -> timedelta:
    return timedelta(days=float(getattr(settings, "ADJOURNED_DAYS", None) or ADJOURNED_DAYS))


def quick_fill_wait() -> timedelta:
    seconds = getattr(settings, "TURN_BASED_QUICK_FILL_SECONDS", None)
    return timedelta(seconds=QUICK_FILL_SECONDS if seconds is None else float(seconds))


def outage_threshold() -> timedelta:
    seconds = getattr(settings, "TURN_BASED_OUTAGE_SECONDS", None)
    return timedelta(seconds=OUTAGE_SECONDS if seconds is None else float(seconds))


def move_time_label(seconds: int) -> str:
    """"1 hour", "8 hours", "1 day", "3 days", "60 seconds": the choice as a person reads it."""
    if seconds % 86400 == 0:
        days = seconds // 86400
        return ngettext("%(n)d day per move", "%(n)d days per move", days) % {"n": days}
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return ngettext("%(n)d hour per move", "%(n)d hours per move", hours) % {"n": hours}
    if seconds % 60 == 0:
        minutes = seconds // 60
        return ngettext("%(n)d minute per move", "%(n)d minutes per move",
                        minutes) % {"n": minutes}
    return ngettext("%(n)d second per move", "%(n)d seconds per move", seconds) % {"n": seconds}
