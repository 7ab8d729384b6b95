"""The load test end to end at the smallest size: it runs, and what it counts is clean.

No time is asserted (the tool reports distributions): only that every move reached every seat,
none was applied twice, no seat was left behind and the servers logged no error.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from ..conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.timeout(300)]


def test_a_two_table_load_test_counts_no_loss_and_prints_the_table(redis_url):
    env = {**os.environ, "REDIS_URL": redis_url}
    done = subprocess.run(
        [sys.executable, "-m", "tools.loadtest", "--tables", "2", "--think", "0.5",
         "--seconds", "6", "--webs", "2"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=280)
    out = done.stdout
    assert done.returncode == 0, f"{out}\n{done.stderr[-3000:]}"
    rows = [line for line in out.splitlines() if re.match(r"\s+2 (product|relay)", line)]
    assert len(rows) == 2, out
    for row in rows:
        assert "never reached all 4: 0" in row and "lost 0," in row and "twice 0," in row, row
        assert "log errors 0" in row, out
    assert re.search(r"^\| 2 \| 8 \| [\d.]+ \|", out, re.M), out
