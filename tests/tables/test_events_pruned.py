"""Table events are kept only as long as a state can carry them: a table's last
``state.LOG_LENGTH`` versions. Without the prune every version of every table left a row for
ever."""

from __future__ import annotations

import pytest
from django.conf import settings

from apps.tables import services, state, tasks
from apps.tables.models import TableEvent

pytestmark = pytest.mark.django_db


def pause_and_resume(table, host, times: int) -> None:
    for _ in range(times):
        services.pause(user=host, table_id=table.pk)
        services.resume(user=host, table_id=table.pk)


def test_only_the_events_a_state_carries_are_kept(full_table, people):
    busy = full_table
    services.start_match(user=people["host"], table_id=busy.pk)
    pause_and_resume(busy, people["host"], 30)
    quiet = services.create_table(host=people["ana"], preset="draw", players=2)
    busy.refresh_from_db()
    before = state.build_latest(busy.pk)["log"]
    assert TableEvent.objects.filter(table=busy).count() > state.LOG_LENGTH + 40
    quiet_rows = TableEvent.objects.filter(table=quiet).count()

    deleted = tasks.prune_events()

    kept = sorted(TableEvent.objects.filter(table=busy).values_list("version", flat=True))
    assert kept == list(range(busy.version - state.LOG_LENGTH + 1, busy.version + 1))
    assert deleted > 40
    assert TableEvent.objects.filter(table=quiet).count() == quiet_rows  # young: all kept
    # A state built afresh from the database (as when Redis lost the snapshot) carries the
    # same events as before.
    assert state.build_latest(busy.pk)["log"] == before
    assert tasks.prune_events() == 0  # nothing more to do


def test_the_prune_works_in_batches_and_beat_runs_it(full_table, people):
    services.start_match(user=people["host"], table_id=full_table.pk)
    pause_and_resume(full_table, people["host"], 15)
    full_table.refresh_from_db()
    assert services.prune_table_events(keep=5, batch=3, batches=2) == 6
    assert services.prune_table_events(keep=5, batch=3, batches=100) > 0
    assert TableEvent.objects.filter(table=full_table).count() == 5
    entry = settings.CELERY_BEAT_SCHEDULE["prune-table-events"]
    assert entry["task"] == "apps.tables.tasks.prune_events" and entry["schedule"] <= 600
