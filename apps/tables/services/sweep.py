"""Beat's guarantee behind the per-turn timers, and the pruning of old table events.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import F
from django.utils import timezone

from apps.core.beat import act_on_each
from apps.core.errors import ServiceError

from ..models import (
    Seat,
    Table,
    TableEvent,
)
from ..pace import LIVE, adjourned_limit
from ..state import LOG_LENGTH
from .adjourn import end_adjourned
from .clock import away_limit, empty_limit
from .lifecycle import close_empty, mark_unopened
from .moves import act_on_deadline
from .outage import note_beat
from .play import delete_idle_guests, fill_quick_table, sweep_practice
from .presence import expire_leases
from .seats import stand_in


def sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Beat's guarantee behind the per-turn timers: act on everything due, through the
    services, each in its own transaction. Indexed columns find the work."""
    now = now or timezone.now()
    done = {"deadlines": 0, "standins": 0, "closed": 0, "practice_deleted": 0}
    gap = note_beat(now=now)
    done["outage_seconds"] = int(gap.total_seconds()) if gap else 0
    done["expired"] = expire_leases(now=now)
    due = Table.objects.filter(state=Table.State.PLAYING, paused=False,
                               turn_deadline__lte=now).values_list("pk", flat=True)
    done["deadlines"] = act_on_each(
        due=due[:500], act=lambda table_id: act_on_deadline(table_id=table_id, now=now))
    # turn_based=False: the index of live seats (``seat_away_live_idx``); at a turn-based
    # table nobody is ever replaced for being away.
    away = Seat.objects.filter(away_since__lte=now - away_limit(), standin=False,
                               user__isnull=False, turn_based=False,
                               table__state=Table.State.PLAYING)
    done["standins"] = act_on_each(
        due=away.values_list("table_id", "index")[:500],
        act=lambda seat: stand_in(table_id=seat[0], seat_index=seat[1], now=now))
    waited = Table.objects.filter(quick=True, state=Table.State.WAITING,
                                  fill_at__lte=now).values_list("pk", flat=True)
    done["filled"] = act_on_each(
        due=waited[:500], act=lambda table_id: fill_quick_table(table_id=table_id, now=now))
    unopened = Table.objects.filter(state=Table.State.WAITING, empty_since__isnull=True,
                                    pace=LIVE, created_at__lte=now - empty_limit(),
                                    connections__isnull=True).values_list("pk", flat=True)
    done["unopened"] = act_on_each(
        due=unopened[:500], act=lambda table_id: mark_unopened(table_id=table_id, now=now))
    empty = Table.objects.filter(empty_since__lte=now - empty_limit()).exclude(
        state=Table.State.CLOSED).values_list("pk", flat=True)
    for table_id in list(empty[:500]):
        try:
            kept = close_empty(table_id=table_id, now=now)
            done["closed" if kept is not None else "practice_deleted"] += 1
        except ServiceError:
            pass
    adjourned = Table.objects.filter(state=Table.State.ADJOURNED,
                                     adjourned_at__lte=now - adjourned_limit())
    done["adjourned_ended"] = act_on_each(
        due=adjourned.values_list("pk", flat=True)[:500],
        act=lambda table_id: end_adjourned(table_id=table_id, now=now))
    done["practice_deleted"] += sweep_practice(now=now)
    done["guests_deleted"] = delete_idle_guests(now=now)
    return done


def prune_table_events(*, keep: int | None = None, batch: int = 5000, batches: int = 20) -> int:
    """Delete the events no state can carry any more; returns how many.

    A table's snapshot holds the events of its last ``state.LOG_LENGTH`` versions, rebuilt from
    these rows when Redis has lost it, and nothing else reads them. Left alone they grow by one
    row per version of every table for ever (a busy evening is millions). Beat runs this every
    minute (``config/settings.py``), in batches of short statements on rows no move touches.
    """
    keep = LOG_LENGTH if keep is None else keep
    old = TableEvent.objects.filter(version__lte=F("table__version") - keep)
    deleted = 0
    for _batch in range(batches):
        ids = list(old.values_list("pk", flat=True)[:batch])
        if not ids:
            break
        deleted += TableEvent.objects.filter(pk__in=ids).delete()[0]
    return deleted
