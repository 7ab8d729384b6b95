"""The parallel suite's own promises (docs/testing.md): a module marked ``xdist_group`` runs on
one worker, so a site it starts once serves all its tests. pytest 9.2 silently broke that with
pytest-xdist 3.8 (pytest-dev/pytest-xdist#1386: the group's name no longer reaches the
scheduler), and every such module started its site once per test."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = [pytest.mark.slow]

GROUPED = '''
import os
import pytest

pytestmark = [pytest.mark.xdist_group("shared_site")]


@pytest.mark.parametrize("n", range(6))
def test_where(n):
    with open(os.path.join(os.path.dirname(__file__), "workers.txt"), "a") as out:
        out.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
'''


def test_a_group_runs_on_one_worker(tmp_path):
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:django", "-p", "no:randomly",
         "-p", "no:cacheprovider", "-n", "3", "--dist", "loadgroup", "-q", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    workers = (tmp_path / "workers.txt").read_text().split()
    assert len(workers) == 6 and len(set(workers)) == 1, workers
