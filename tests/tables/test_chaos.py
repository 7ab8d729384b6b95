"""The README's short chaos run: ten tables, one fault of each kind, every check PASS.

It starts its own redis-server, two Daphne, a worker and beat on a database it creates on
DATABASE_URL's server, so it needs PostgreSQL. Where this process may restart that server (root,
a Debian cluster of this machine: CI), a PostgreSQL restart is among the faults. The run's own
output is the failure message.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ..conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.timeout(300)]

COMMAND = ["-m", "tools.chaos", "--tables", "10", "--minutes", "0.8", "--seed", "7"]


def test_a_short_chaos_run_passes_every_check():
    from django.db import connections

    from tools.procs import postgres_cluster

    env = {k: v for k, v in os.environ.items() if k != "PYTEST_EMBEDDED_REDIS"}
    faults = "daphne,celery,redis"
    if postgres_cluster(os.environ["DATABASE_URL"]) is not None:
        faults += ",postgres"
    try:
        done = subprocess.run([sys.executable, *COMMAND, "--faults", faults], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=280)
    finally:
        # A restart cut this process's connections too; the next test connects afresh.
        connections.close_all()
    report = done.stdout[-6000:]
    assert done.returncode == 0, f"{report}\n--- stderr ---\n{done.stderr[-3000:]}"
    assert "FAIL" not in report
