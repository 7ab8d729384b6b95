"""The README's short chaos run: ten tables, one fault of each kind, every check PASS.

It starts its own redis-server, two Daphne, a worker and beat on a database it creates on
DATABASE_URL's server, so it needs PostgreSQL. The run's own output is the failure message.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ..conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.timeout(300)]

COMMAND = ["-m", "apps.tables.chaos", "--tables", "10", "--minutes", "0.8",
           "--faults", "daphne,celery,redis", "--seed", "7"]


def test_a_short_chaos_run_passes_every_check():
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_EMBEDDED_REDIS"}
    done = subprocess.run([sys.executable, *COMMAND], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=280)
    report = done.stdout[-6000:]
    assert done.returncode == 0, f"{report}\n--- stderr ---\n{done.stderr[-3000:]}"
    assert "FAIL" not in report
