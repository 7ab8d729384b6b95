"""The turn-based bench at a tiny size (``python -m tools.bench_turnbased``): it builds its
site on a fresh PostgreSQL database, measures both windows and reads every deadline back. The
CPU bound is the full run's to judge (docs/turn-based.md); here each deadline fires once."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from ..conftest import ROOT

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(400)]


def test_the_bench_runs_at_a_tiny_size():
    from django.db import connection

    db = connection.settings_dict
    env = {**os.environ,
           "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:"
                           f"{db['PORT'] or 5432}/{db['NAME']}"}
    env.pop("PYTEST_EMBEDDED_REDIS", None)
    out = subprocess.run([sys.executable, "-m", "tools.bench_turnbased", "--waiting", "300",
                          "--live", "20", "--seconds", "2", "--due", "4", "--move-seconds",
                          "6", "--sweeps", "3"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=380)
    assert "CPU ms per second" in out.stdout, out.stdout + out.stderr
    assert re.search(r"beat \+ worker: [+-][0-9.]+ ms of CPU a second more", out.stdout)
    assert "deadlines: 4/4 fired, 0 twice" in out.stdout, out.stdout
