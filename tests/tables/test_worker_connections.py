"""The worker keeps its database connection from task to task (one per process, not one per
timer), and still drops one that broke, as Django does around a request."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from celery.fixups.django import DjangoWorkerFixup
from django.db import connection

from config import celery as celery_config

pytestmark = pytest.mark.django_db(transaction=True)  # outside a transaction, as in a worker


def run_task_hooks(fixup: DjangoWorkerFixup) -> None:
    """What the worker runs around every task: Celery's fixup, then the project's handler."""
    sender = SimpleNamespace(request=SimpleNamespace(is_eager=False))
    fixup.on_task_prerun(sender=sender)
    celery_config._connections_as_around_a_request()
    fixup.on_task_postrun(sender=sender)
    celery_config._connections_as_around_a_request()


def test_a_task_keeps_the_worker_s_connection(monkeypatch):
    fixup = DjangoWorkerFixup(celery_config.app)
    assert fixup.db_reuse_max  # without it the fixup closes every connection around every task
    connection.ensure_connection()
    monkeypatch.setattr(connection, "close_at", None)  # tests run with CONN_MAX_AGE 0
    held = connection.connection
    for _ in range(10):
        run_task_hooks(fixup)
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    assert connection.connection is held


@pytest.mark.postgres  # SQLite's in-memory test database is never really closed
def test_a_broken_connection_is_dropped_after_the_task(monkeypatch):
    fixup = DjangoWorkerFixup(celery_config.app)
    connection.ensure_connection()
    monkeypatch.setattr(connection, "close_at", None)
    connection.errors_occurred = True
    monkeypatch.setattr(connection, "is_usable", lambda: False)  # the server went away
    run_task_hooks(fixup)
    assert connection.connection is None
