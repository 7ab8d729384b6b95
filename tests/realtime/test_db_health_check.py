"""A database thread's connection, used a moment ago, is not asked ``SELECT 1`` before the
next socket's call (apps.realtime.hub.HEALTH_CHECK_GRACE); one idle for longer still is, so
a connection PostgreSQL cut during a quiet spell is never reused."""

from __future__ import annotations

import asyncio

import pytest
from django.db import DEFAULT_DB_ALIAS, connection, connections

from apps.realtime import hub

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _query() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 2")


def test_health_checks_only_after_the_grace(monkeypatch):
    # Kept between calls, as on the site (tests close them after every call), and checked as
    # the site's settings say. The calls run on this thread as a database thread runs them
    # (``hub._in_thread``: Django's close_old_connections around the call, the grace inside):
    # which thread asgiref picks for a call is another test's (below).
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 60)
    monkeypatch.setitem(connection.settings_dict, "CONN_HEALTH_CHECKS", True)
    checks = []
    # The class of this very connection: a test that reloads a module may have left the one
    # importable by name apart from it.
    wrapper = type(connections[DEFAULT_DB_ALIAS])
    real = wrapper.is_usable

    def counting(self):
        checks.append(1)
        return real(self)

    monkeypatch.setattr(wrapper, "is_usable", counting)

    seen = []

    def calls(n: int) -> set[int]:
        pids = set()
        for _ in range(n):
            hub._in_thread(_query, (), {})
            pids.add(connection.connection.info.backend_pid)
            conn = connections[DEFAULT_DB_ALIAS]
            seen.append((conn.health_check_enabled, conn.health_check_done,
                         type(conn) is wrapper, wrapper.is_usable is counting))
        return pids

    # From no connection: one opened earlier (with another CONN_MAX_AGE) would be closed and
    # opened again, and an opening needs no check.
    connection.close()
    first = calls(4)
    assert checks == []  # the first call opened the connection; the others followed it
    monkeypatch.setattr(hub, "HEALTH_CHECK_GRACE", 0.0)
    assert calls(3) == first  # the same connection all along
    assert len(checks) == 3, seen  # idle past the grace: each call checks first


def test_calls_on_the_pool_run_in_the_caller_s_context_and_close_old_connections(monkeypatch):
    import contextvars
    import threading

    where = contextvars.ContextVar("where", default="nowhere")
    closes = []
    monkeypatch.setattr(hub, "close_old_connections", lambda: closes.append(1))
    monkeypatch.setattr(hub, "_db_threads", lambda: 3)

    def ask():
        return threading.current_thread().name, where.get()

    def fail():
        raise LookupError("no such seat")

    async def calls():
        where.set("table 7")
        name, seen = await hub.db(ask)
        assert name.startswith("db") and seen == "table 7"
        with pytest.raises(LookupError, match="no such seat"):
            await hub.db(fail)

    try:
        asyncio.run(calls())
    finally:
        hub.close_threads()
    assert len(closes) == 4  # before and after each call, on its thread
