"""The tournament page's script (static/js/tournament.js) under node, with a fake socket and
clock: a change on a quiet page is fetched within a quarter second, and a burst of changes
(40 registrations and withdrawals in 10 s) is fetched a handful of times, not once per change,
the last after the burst's last ring."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("node") is None, reason="needs node")]


def test_rings_in_a_burst_are_fetched_at_most_every_two_seconds():
    out = subprocess.run(["node", str(Path(__file__).with_name("page_script_check.mjs")),
                          str(ROOT / "static/js/tournament.js")],
                         capture_output=True, text=True, timeout=60, check=True)
    seen = json.loads(out.stdout)
    assert seen["single"] == [250]
    burst = seen["burst"]
    assert 4 <= len(burst) <= 7, burst  # 10 s of rings: one fetch per 2 s, and the last
    assert all(b - a >= 2000 for a, b in zip(burst, burst[1:], strict=False)), burst
    assert burst[-1] > seen["lastRing"]  # the burst's last change is on the page
