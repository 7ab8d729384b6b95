"""The worker's dispatcher: it fires the tables' due timers (``apps.tables.timers``).

One daemon thread per worker process (started by ``config/celery.py`` when the worker is ready)
takes the timers due now and acts on each through the services, on a few threads of its own so
that one table's slow statement does not hold the others. A slow bot's turn goes to Celery's
``bots`` queue instead, where the bot thinks before it takes the table's lock (as before). It
sleeps until the next timer is due, at most :data:`IDLE_WAIT` (a timer set meanwhile by a web
process is seen then) and at least :data:`BUSY_WAIT` between looks.

Redis or PostgreSQL away: the thread logs a warning and looks again; beat's sweep acts on every
due deadline meanwhile. Tests call :func:`fire_due` directly.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from celery import current_app
from django.db import close_old_connections
from django.utils import timezone

from apps.core.errors import ServiceError
from apps.core.outages import OUTAGES, warn

from . import services, timers
from .scheduling import BOTS_QUEUE, TURN_DUE

log = logging.getLogger(__name__)

#: Longest sleep between looks when no timer is due sooner (new timers are seen within it).
IDLE_WAIT = 0.25
#: Shortest sleep between looks: a busy site's timers are taken in batches this often.
BUSY_WAIT = 0.02
#: Threads that act on due timers (each holds its own database connection).
ACTING_THREADS = 4

_thread: threading.Thread | None = None
_stop = threading.Event()
_pool: ThreadPoolExecutor | None = None


def start() -> None:
    """Start this process's dispatcher (once)."""
    global _thread, _pool
    if _thread is not None and _thread.is_alive():
        return
    _stop.clear()
    _pool = ThreadPoolExecutor(max_workers=ACTING_THREADS, thread_name_prefix="timer")
    _thread = threading.Thread(target=_run, name="timers", daemon=True)
    _thread.start()


def stop(timeout: float = 5.0) -> None:
    global _thread
    _stop.set()
    if _thread is not None:
        _thread.join(timeout)
        _thread = None
    if _pool is not None:
        _pool.shutdown(wait=True, cancel_futures=False)


def _run() -> None:
    while not _stop.is_set():
        try:
            fired = fire_due(submit=_pool.submit)
            due = timers.next_due() if not fired else None
        except OUTAGES as err:
            warn(log, "due timers not read this time", err)
            fired, due = 0, None
        except Exception:
            log.exception("due timers not read this time")
            fired, due = 0, None
        wait = BUSY_WAIT if fired else IDLE_WAIT
        if due is not None:
            wait = min(wait, max(BUSY_WAIT, due - time.time()))
        _stop.wait(wait)


def fire_due(*, now=None, submit=None) -> int:
    """Act on every timer due at ``now``; returns how many were taken. ``submit`` runs each
    act elsewhere (the dispatcher's threads); without it they run here, in turn."""
    now = now or timezone.now()
    taken = timers.pop_due(now)
    for table_id, round_number, ply, slow_bot in taken:
        if slow_bot:
            _send_to_bots(table_id, round_number, ply)
        elif submit is not None:
            submit(_act, table_id, round_number, ply, now)
        else:
            _act(table_id, round_number, ply, now)
    return len(taken)


def _send_to_bots(table_id: int, round_number: int | None, ply: int | None) -> None:
    try:
        current_app.send_task(TURN_DUE, (table_id, round_number, ply, True), queue=BOTS_QUEUE)
    except Exception:  # the broker is away: the sweep acts on the deadline
        log.warning("the bot's turn at table %s was left to the sweep", table_id,
                    exc_info=True)


def _act(table_id: int, round_number: int | None, ply: int | None, now) -> None:
    # As Django does around a request: a connection PostgreSQL cut is replaced, never reused.
    close_old_connections()
    try:
        # ``now`` is when the timer was taken: a deadline due then is due, however long the
        # act waited for a thread.
        services.act_on_deadline(table_id=table_id, round_number=round_number, ply=ply,
                                 now=max(now, timezone.now()))
    except ServiceError as err:  # moved on, paused, not due: a late timer is harmless
        log.debug("timer of table %s at %s/%s: %s", table_id, round_number, ply, err.code)
    except OUTAGES as err:
        warn(log, f"deadline of table {table_id} at {round_number}/{ply} left to the sweep",
             err)
    except Exception:
        log.exception("deadline of table %s at %s/%s failed", table_id, round_number, ply)
    finally:
        close_old_connections()
