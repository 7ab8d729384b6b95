"""The worker's tasks during an outage: PostgreSQL restarting or Redis away is a warning line
and work left to the next sweep, not a failed task with a traceback (the chaos run's
``postgres`` fault restarts the real server)."""

from __future__ import annotations

import pytest
from django.db import OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError

from apps.tables import services, tasks

OUTAGES = [OperationalError("connection failed: server closed the connection unexpectedly"),
           RedisConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")]


def away(err):
    def call(**kwargs):
        raise err
    return call


@pytest.mark.parametrize("err", OUTAGES, ids=["postgres", "redis"])
def test_an_outage_leaves_the_work_to_the_next_sweep(monkeypatch, caplog, err):
    for name in ("sweep", "act_on_deadline", "fill_quick_table"):
        monkeypatch.setattr(services, name, away(err))
    with caplog.at_level("WARNING", logger="apps.tables.tasks"):
        assert tasks.sweep() is None
        tasks.turn_due(7, 0, 3)
        tasks.fill_due(7)
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("sweep skipped: ")
    assert lines[1].startswith("deadline of table 7 at 0/3 left to the sweep: ")
    assert lines[2].startswith("bot fill of table 7 left to the sweep: ")
    assert all(r.levelname == "WARNING" and r.exc_info is None for r in caplog.records)


def test_a_bug_still_fails_the_task(monkeypatch):
    monkeypatch.setattr(services, "sweep", away(RuntimeError("a bug")))
    with pytest.raises(RuntimeError):
        tasks.sweep()


def test_the_timers_are_sent_to_tasks_the_worker_has():
    """The services send their timers by name (``apps.tables.scheduling``): a renamed task
    must not leave them going nowhere."""
    from apps.tables import scheduling
    from config.celery import app

    app.loader.import_default_modules()
    assert {scheduling.TURN_DUE, scheduling.FILL_DUE} <= set(app.tasks)
    assert tasks.turn_due.name == scheduling.TURN_DUE
    assert tasks.fill_due.name == scheduling.FILL_DUE
