"""The README's short chaos run: ten tables, one fault of each kind, every check PASS.

It starts its own redis-server, two Daphne, a worker and beat on a PostgreSQL server of its own
(``private_postgres``), which it restarts among the faults: the machine's server is shared by
the suite's other workers. Marked postgres: it needs PostgreSQL's server programs. The run's own
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


def test_a_short_chaos_run_passes_every_check(private_postgres):
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_EMBEDDED_REDIS"}
    env.update(private_postgres.env())
    done = subprocess.run([sys.executable, *COMMAND, "--faults", "daphne,celery,redis,postgres"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=280)
    report = done.stdout[-6000:]
    assert done.returncode == 0, f"{report}\n--- stderr ---\n{done.stderr[-3000:]}"
    assert "FAIL" not in report
    assert "fault: postgres" in done.stderr  # its own server was restarted
