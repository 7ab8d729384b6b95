"""The load test's CPU figures count processes that end inside the window (PostgreSQL's
backends are replaced every CONN_MAX_AGE; their CPU was lost, and the tool printed 3% for
PostgreSQL where top showed about 40%)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tools import procs

BUSY = "import time\nt = time.process_time()\nwhile time.process_time() - t < {}: pass\n"


@pytest.mark.slow
def test_a_process_that_ends_in_the_window_counts_through_its_reaper():
    before = subprocess.Popen([sys.executable, "-c", BUSY.format(1.5)])
    # Some of its CPU falls before the window, and must not be counted: half a second of it,
    # waited for as CPU rather than as time, which on a busy machine it might not get.
    deadline = time.monotonic() + 60
    while (procs.cpu_seconds(before.pid) or 0) < 0.5 and time.monotonic() < deadline:
        time.sleep(0.02)
    window = procs.CpuWindow()
    window.reapers["kids"] = os.getpid()
    window.begin({"kids": [before.pid]})
    during = subprocess.Popen([sys.executable, "-c", BUSY.format(0.4)])
    before.wait()
    during.wait()  # started and ended inside the window: only the reaper knows it
    result = window.end()
    wall = time.monotonic() - window._t0
    used = result["kids"]["cpu"] * wall
    spent = procs.reaped_cpu_seconds(os.getpid())
    assert spent is not None and spent >= 1.8
    # All of the second and the part of the first that ran inside the window.
    assert 0.4 + 0.1 < used < spent - 0.2, (used, spent)


@pytest.mark.slow
def test_without_a_reaper_an_ended_process_counts_nothing():
    child = subprocess.Popen([sys.executable, "-c", BUSY.format(0.3)])
    window = procs.CpuWindow()
    window.begin({"kids": [child.pid]})
    child.wait()
    assert window.end()["kids"]["cpu"] == 0.0


def test_each_redis_server_is_read_once_and_named_by_its_roles():
    from tools.loadtest import redis_servers

    shared = {"REDIS_URL": "redis://127.0.0.1:6379/0"}
    assert redis_servers(shared) == {"cache+broker+layer+state": "redis://127.0.0.1:6379/0"}
    # Another database number on the same server is the same server (and the same CPU).
    split = {"REDIS_URL": "redis://127.0.0.1:6379/0", "REDIS_LAYER_URL": "redis://127.0.0.1:6391/0",
             "REDIS_STATE_URL": "redis://127.0.0.1:6379/4", "CELERY_BROKER_URL": "redis://h:6392/1"}
    assert redis_servers(split) == {"cache+state": "redis://127.0.0.1:6379/0",
                                    "broker": "redis://h:6392/1",
                                    "layer": "redis://127.0.0.1:6391/0"}


@pytest.mark.slow
def test_children_lists_a_prefork_pool():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        assert child.pid in procs.children(os.getpid())
    finally:
        child.kill()
        child.wait()
