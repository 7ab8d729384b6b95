"""How the site's processes are started: the one place the launcher (``scripts/run.py``), the
end-to-end tests and the chaos run take their command lines from, so they run what an operator
runs. Standard library only: the launcher imports it before anything else is set up.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: Daphne pings a quiet socket after this many seconds and closes it when the pong has not
#: come back this many seconds later: a browser that vanished without closing (a phone losing
#: its network) counts as away within 25 s (docs/protocol.md, "Presence").
WS_PING_INTERVAL = 10
WS_PING_TIMEOUT = 15
#: The worker takes the default queue and the slow bots' queue (apps.tables.scheduling).
WORKER_QUEUES = "celery,bots"
#: The judging worker takes the collusion check's queue alone (apps.fairplay.judging), one
#: match at a time, at this niceness: the machine's other processes (the web, the main worker
#: with the tables' timers) come first when the CPU is short.
JUDGE_QUEUES = "collusion"
JUDGE_NICENESS = 10


def web(port: int | str, *, bind: str = "127.0.0.1", python: str = sys.executable) -> list[str]:
    return [python, "-m", "daphne", "-b", bind, "-p", str(port),
            "--ping-interval", str(WS_PING_INTERVAL), "--ping-timeout", str(WS_PING_TIMEOUT),
            "config.asgi:application"]


def worker(*, concurrency: int | str = 2, pool: str = "threads", loglevel: str = "WARNING",
           python: str = sys.executable) -> list[str]:
    return [python, "-m", "celery", "-A", "config", "--quiet", "worker", f"--pool={pool}",
            f"--concurrency={concurrency}", "-Q", WORKER_QUEUES, f"--loglevel={loglevel}",
            "--without-gossip", "--without-mingle"]


def judge_worker(*, loglevel: str = "WARNING", python: str = sys.executable) -> list[str]:
    """The collusion check's worker: a solo pool (the judging is CPU-bound pure Python: one
    process, one match at a time), niced below the site's other processes."""
    return ["nice", "-n", str(JUDGE_NICENESS), python, "-m", "celery", "-A", "config",
            "--quiet", "worker", "--pool=solo", "-Q", JUDGE_QUEUES, f"--loglevel={loglevel}",
            "--without-gossip", "--without-mingle", "--hostname=judge@%h"]


def beat(var_dir: Path, *, loglevel: str = "WARNING", python: str = sys.executable) -> list[str]:
    # beat logs a line per due task at INFO (one a second for the sweep): WARNING keeps the
    # terminal for what an operator needs.
    return [python, "-m", "celery", "-A", "config", "--quiet", "beat", f"--loglevel={loglevel}",
            f"--schedule={Path(var_dir) / 'celerybeat-schedule'}"]


def web_ports(env: dict | None = None) -> list[int]:
    """``PORT`` (8000) and, with ``WEB_PROCESSES`` = n, the n - 1 ports after it."""
    env = os.environ if env is None else env
    first = int(env.get("PORT", "8000"))
    return [first + k for k in range(max(1, int(env.get("WEB_PROCESSES", "1"))))]
