"""Real processes for end-to-end tests, started with the launcher's own command lines
(``apps.core.processes``), and a socket client that reads in the background.

:class:`Stack` runs Daphne processes, a Celery worker and beat against the test's PostgreSQL
database and the test Redis, each killable on its own (SIGKILL a web node, restart the site).
Its Redis keys and pub/sub channels carry a prefix of its own, and its Celery broker is a Redis
database of its own (flushed at start), so tasks queued by earlier tests never reach its worker.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from apps.core import processes
from config.env import redis_urls

from .conftest import ROOT, find_free_port, wait_for_http, worker_index


#: The Redis database a stack's Celery broker uses (tests' own code queues into the worker's
#: database, 0-7): one per parallel worker, since a stack flushes it when it starts.
def broker_db() -> int:
    index = worker_index()
    return 13 if index is None else 15 - index


def _broker_url(redis_url: str) -> str:
    celery = redis_urls(redis_url)["celery"]
    if celery.startswith("redis+socket://"):
        return f"{celery.split('?')[0]}?virtual_host={broker_db()}"
    base = celery.rsplit("/", 1)[0] if celery.count("/") > 2 else celery
    return f"{base}/{broker_db()}"


def _flush_broker(redis_url: str) -> None:
    import redis

    url = redis_urls(redis_url)["redis"]
    if url.startswith("unix://"):
        client = redis.Redis(unix_socket_path=url[len("unix://"):].split("?")[0], db=broker_db())
    else:
        client = redis.Redis.from_url(url, db=broker_db())
    client.flushdb()
    client.close()


class Stack:
    """Daphne(s), a worker and beat on the test database. ``env`` adds settings (e.g. the
    presence limits, shortened)."""

    def __init__(self, workdir: Path, env: dict[str, str] | None = None) -> None:
        from django.db import connection

        db = connection.settings_dict
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        redis_url = os.environ["REDIS_URL"]
        _flush_broker(redis_url)
        self.prefix = f"t{uuid.uuid4().hex[:8]}"
        self.env = {k: v for k, v in os.environ.items() if k != "PYTEST_EMBEDDED_REDIS"}
        self.env.update({
            "DATABASE_URL": (f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:"
                             f"{db['PORT'] or 5432}/{db['NAME']}"),
            "REDIS_URL": redis_url, "REDIS_KEY_PREFIX": self.prefix,
            "CELERY_BROKER_URL": _broker_url(redis_url), "DEBUG": "1",
            "VAR_DIR": str(workdir), "PYTHONUNBUFFERED": "1",
            "DJANGO_SETTINGS_MODULE": "config.settings",
        })
        self.env.update(env or {})
        self.procs: dict[str, subprocess.Popen] = {}
        self.ports: dict[str, int] = {}

    def _start(self, name: str, command: list[str], extra: dict | None = None):
        log = (self.workdir / f"{name}.log").open("ab")
        env = dict(self.env, **(extra or {}))
        self.procs[name] = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        return self.procs[name]

    def web(self, name: str = "web1", port: int | None = None) -> str:
        port = port or self.ports.get(name) or find_free_port()
        self.ports[name] = port
        proc = self._start(name, processes.web(port), {"WEB_NODE": name})
        wait_for_http(f"http://127.0.0.1:{port}/healthz", timeout=60, proc=proc)
        return f"ws://127.0.0.1:{port}"

    def worker(self) -> None:
        self._start("worker", processes.worker(concurrency=2, loglevel="INFO"))

    def judge(self) -> None:
        """The collusion check's worker (its own queue, apps.core.processes.judge_worker)."""
        self._start("judge", processes.judge_worker(loglevel="INFO"))

    def beat(self) -> None:
        self._start("beat", processes.beat(self.workdir, loglevel="INFO"))

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        proc = self.procs.pop(name)
        if proc.poll() is None:
            os.killpg(proc.pid, sig)
        proc.wait(timeout=30)

    def stop(self) -> None:
        for name in list(self.procs):
            self.kill(name, signal.SIGTERM)

    def log(self, name: str) -> str:
        path = self.workdir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""


class Client:
    """A table socket read by a background thread: every frame kept, the last state at hand."""

    def __init__(self, url: str, session: str, origin: str) -> None:
        self.frames: list[dict] = []
        self.closed: int | None = None
        self._lock = threading.Condition()
        # Entered as a context manager (closed in close()): websockets 17 wants it said.
        self.ws = connect(url, origin=origin, open_timeout=15,
                          additional_headers={"Cookie": f"sessionid={session}"}).__enter__()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            while True:
                raw = self.ws.recv()
                with self._lock:
                    self.frames.append(json.loads(raw))
                    self._lock.notify_all()
        except ConnectionClosed:
            pass
        finally:
            with self._lock:
                self.closed = self.ws.close_code if self.ws.close_code is not None else 1006
                self._lock.notify_all()

    def send(self, message: dict) -> None:
        self.ws.send(json.dumps(message))

    def wait(self, pred, timeout: float = 30) -> dict:
        """The first frame (from the start) satisfying ``pred``."""
        deadline = time.monotonic() + timeout
        seen = 0
        with self._lock:
            while True:
                for frame in self.frames[seen:]:
                    if pred(frame):
                        return frame
                seen = len(self.frames)
                left = deadline - time.monotonic()
                if left <= 0 or self.closed is not None:
                    raise AssertionError(f"no such frame (closed={self.closed}); "
                                         f"last: {self.frames[-2:]}")
                self._lock.wait(left)

    def state(self) -> dict | None:
        with self._lock:
            states = [f for f in self.frames if f.get("type") == "state"]
        return max(states, key=lambda f: f["version"])["state"] if states else None

    def wait_state(self, pred, timeout: float = 30) -> dict:
        """Wait until the newest state satisfies ``pred``; return it."""
        deadline = time.monotonic() + timeout
        while True:
            current = self.state()
            if current is not None and pred(current):
                return current
            if time.monotonic() > deadline or self.closed is not None:
                raise AssertionError(f"state never matched (closed={self.closed}); "
                                     f"last: {current and current.get('seats')}")
            time.sleep(0.1)

    def close(self) -> None:
        self.ws.__exit__(None, None, None)
        self._thread.join(timeout=10)


def session_of(user) -> str:
    """A real session for ``user`` in the test database (committed: needs transaction=True)."""
    from django.test import Client as HttpClient

    client = HttpClient()
    client.force_login(user)
    return client.cookies["sessionid"].value


# Runs inside `manage.py shell` against a launcher site's own database (scripts/run.py keeps it
# in its VAR_DIR): four players at a started partners match, a few moves played, and a session
# for each player.
def started_table(turn_seconds: int | None):
    """Ana, Bea, Caio and Dani at a started public ``partners`` table (passwords ``pw-`` and
    the name twice), in whatever database Django is set up on."""
    from django.contrib.auth import get_user_model

    from apps.tables import services
    from apps.tables.models import Table

    users = [get_user_model().objects.create_user(username=n, password="pw-" + n * 2)
             for n in ("ana", "bea", "caio", "dani")]
    table = services.create_table(host=users[0], preset="partners", public=True,
                                  options={"turn_seconds": turn_seconds})
    for user in users[1:]:
        services.join_table(user=user, table_id=table.pk)
    services.start_match(user=users[0], table_id=table.pk)
    return Table.objects.get(pk=table.pk), users


SEED = """
import json, random
from django.contrib.auth import get_user_model
from django.test import Client
from apps.rules.engine import legal_dict
from apps.tables import game, services
from apps.tables.models import Table
from tests.live import started_table
table, users = started_table(None)
rng = random.Random(4)
for _ in range(MOVES):
    t = Table.objects.get(pk=table.pk)
    rnd = game.restore(t.current_match).current
    if rnd is None or (rnd.turn == 0 and rnd.history):
        break
    move = legal_dict(*rng.choice(rnd.legal()))
    services.play_move(user=t.seats.get(index=rnd.turn).user, table_id=t.pk, round_number=0,
                       ply=len(rnd.history), tile=move.get("play"), end=move.get("end"),
                       is_pass=bool(move.get("pass")))
sessions = []
for u in users:
    client = Client()
    client.force_login(u)
    sessions.append(client.cookies["sessionid"].value)
print(json.dumps({"id": table.pk, "code": table.code, "session": sessions[0],
                  "sessions": sessions}))
"""


def seed_site(site, moves: int = 0, env: dict | None = None) -> dict:
    """Four players and a started table in a launcher site's database (see :data:`SEED`)."""
    import sys

    child = {k: v for k, v in os.environ.items()
             if k not in {"REDIS_URL", "DATABASE_URL", "PYTEST_EMBEDDED_REDIS"}}
    child.update({"VAR_DIR": str(site.var_dir), "DEBUG": "1"})
    child.update(env or {})
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c",
                          SEED.replace("MOVES", str(moves))],
                         cwd=ROOT, env=child, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])
