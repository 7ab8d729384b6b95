"""The rate limits hold across web processes: two Daphne processes share one database and one
Redis, and a person who alternates between them is limited as if there were one.

Wrong invite codes are counted in the cache (Redis: config.env.cache_settings), failed
sign-ins by django-axes and chat messages in the database.
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import json
import os
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import pytest

from config.env import cache_settings
from tests.conftest import find_free_port, wait_for_http

ROOT = Path(__file__).resolve().parent.parent.parent


def test_cache_settings_use_djangos_redis_cache_on_either_url():
    for url, location in (("unix:///tmp/r/redis.sock", "unix:///tmp/r/redis.sock"),
                          ("redis+socket:///tmp/r.sock", "unix:///tmp/r.sock"),
                          ("redis://cache.example:6379/2", "redis://cache.example:6379/2")):
        default = cache_settings(url, prefix="p")["default"]
        assert default["BACKEND"] == "django.core.cache.backends.redis.RedisCache"
        assert (default["LOCATION"], default["KEY_PREFIX"]) == (location, "p:cache")
        assert default["OPTIONS"]["socket_timeout"]  # never redis-py's default (stack.md)


def test_the_cache_counts_on_the_test_redis(redis_url):
    """The same settings against the session's Redis (embedded unix socket or CI's TCP)."""
    from django.core.cache.backends.redis import RedisCache

    config = cache_settings(redis_url, prefix=f"test-{uuid.uuid4().hex}")["default"]
    cache = RedisCache(config["LOCATION"], {k: v for k, v in config.items()
                                            if k in ("KEY_PREFIX", "OPTIONS")})
    assert cache.add("fails", 0, 60)
    assert [cache.incr("fails") for _ in range(3)] == [1, 2, 3]
    assert cache.get("fails") == 3
    cache.delete("fails")


SETUP = """
import json
from django.contrib.auth import get_user_model
from django.test import Client
from apps.tables import services
U = get_user_model()
users = [U.objects.create_user(username=n, password="pw-" + n * 2) for n in ("ana", "bea")]
client = Client()
client.force_login(users[1])
table = services.create_table(host=users[1], preset="partners", public=True)
print(json.dumps({"session": client.cookies["sessionid"].value, "table": table.pk}))
"""


class Browser:
    """One person's cookies, sent to whichever server a request goes to (cookies do not care
    about the port)."""

    def __init__(self) -> None:
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), NoRedirect())

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.jar if c.name == name), None)

    def get(self, url: str) -> tuple[int, str]:
        return self._open(urllib.request.Request(url))

    def post(self, url: str, data: dict) -> tuple[int, str]:
        token = self.cookie("csrftoken")
        if token is None:
            self.get(url)
            token = self.cookie("csrftoken")
        body = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": token}).encode()
        return self._open(urllib.request.Request(url, data=body, method="POST"))

    def _open(self, request) -> tuple[int, str]:
        try:
            with self.opener.open(request, timeout=30) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@pytest.fixture
def two_servers(tmp_path, redis_url):
    """Two Daphne processes on one SQLite file and the session's Redis, with a key prefix of
    their own (CI's Redis is shared between runs)."""
    env = {k: v for k, v in os.environ.items()
           if k not in {"DATABASE_URL", "PYTEST_EMBEDDED_REDIS", "DJANGO_TESTING"}}
    env.update(VAR_DIR=str(tmp_path), DEBUG="1", SECRET_KEY=secrets.token_urlsafe(50),
               REDIS_URL=redis_url, REDIS_KEY_PREFIX=f"test-{uuid.uuid4().hex}",
               PYTHONUNBUFFERED="1")
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env,
                   check=True, capture_output=True, timeout=180)
    made = subprocess.run([sys.executable, "manage.py", "shell", "-c", SETUP], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    procs, urls = [], []
    try:
        for n in range(2):
            port = find_free_port()
            log = (tmp_path / f"daphne{n}.log").open("wb")
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                 "config.asgi:application"], cwd=ROOT, env=env, stdout=log,
                stderr=subprocess.STDOUT))
            urls.append(f"127.0.0.1:{port}")
        for url, proc in zip(urls, procs, strict=True):
            wait_for_http(f"http://{url}/healthz", timeout=90, proc=proc)
        yield urls, json.loads(made.stdout.strip().splitlines()[-1])
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.mark.slow
def test_the_limits_hold_across_two_processes(two_servers):
    from django.conf import settings
    from websockets.sync.client import connect

    from apps.moderation.services import CHAT_LIMIT
    from apps.tables.views import CODE_FAILURES_LIMIT

    (a, b), made = two_servers
    servers = [a, b]

    # Sign-in: the AXES_FAILURE_LIMIT-th failure for one username, alternating servers, locks
    # the pair out; the right password is refused too.
    person = Browser()
    limit = settings.AXES_FAILURE_LIMIT
    statuses = [person.post(f"http://{servers[n % 2]}/accounts/login/",
                            {"username": "ana", "password": "wrong"})[0] for n in range(limit)]
    assert statuses == [200] * (limit - 1) + [429]
    status, html = person.post(f"http://{servers[limit % 2]}/accounts/login/",
                               {"username": "ana", "password": "pw-anaana"})
    assert status == 429, html[:500]

    # Wrong invite codes: CODE_FAILURES_LIMIT wrong codes in all, alternating, then refused.
    guesser = Browser()
    guesser.jar.set_cookie(_cookie("sessionid", made["session"]))
    for attempt in range(CODE_FAILURES_LIMIT):
        status, _html = guesser.post(f"http://{servers[attempt % 2]}/", {"code": "ZZZZZZ"})
        assert status == 200, attempt
    status, html = guesser.post(f"http://{servers[CODE_FAILURES_LIMIT % 2]}/",
                                {"code": "ZZZZZZ"})
    assert status == 429, f"each process counted on its own: {html[:300]}"

    # Chat: the host's two tabs, one on each server; the sixth message in 10 s is refused.
    cookie = f"sessionid={made['session']}"
    path = f"/ws/table/{made['table']}/"
    with contextlib.ExitStack() as stack:
        tabs = [stack.enter_context(connect(f"ws://{url}{path}", origin=f"http://{url}",
                                            open_timeout=15,
                                            additional_headers={"Cookie": cookie}))
                for url in servers]
        for tab in tabs:
            _until(tab, lambda m: m["type"] == "state")
        outcomes = []
        for n in range(CHAT_LIMIT + 1):
            tab, text = tabs[n % 2], f"message {n}"
            tab.send(json.dumps({"type": "chat", "text": text, "id": n}))
            got = _until(tab, lambda m, n=n, text=text: (
                m["type"] == "error" and m["id"] == n) or (
                m["type"] == "state" and any(c["text"] == text for c in m["state"]["chat"])))
            outcomes.append(got.get("code", "sent"))
        assert outcomes == ["sent"] * CHAT_LIMIT + ["rate_limited"]


def _cookie(name: str, value: str) -> http.cookiejar.Cookie:
    return http.cookiejar.Cookie(
        0, name, value, None, False, "127.0.0.1", False, False, "/", True, False, None, False,
        None, None, {})


def _until(ws, pred, timeout: float = 15) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        msg = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        if pred(msg):
            return msg

