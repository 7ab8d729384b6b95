"""``python -m tools.soak``: a day at the club, compressed.

    DATABASE_URL=postgres://... python -m tools.soak --hours 12 [--tables 20] \\
        [--quiet 25] [--burst 60] [--seed S]

The site's life, not only its busy minutes. On a fresh database and a redis-server of its own
(as ``tools.chaos``: two Daphne processes, a worker and beat, DEBUG off), each "hour" of
the day is:

1. **a quiet spell**: no socket open anywhere for ``--quiet`` seconds, longer than every lease
   and expiry of the site (the presence lease, the away and empty limits, the snapshots in
   Redis and idle guests, the last three shortened here: :data:`SITE_ENV`). In some hours the
   quiet is also when something happens to the site: Redis restarts, PostgreSQL restarts
   (where the tool may: root and a Debian cluster), the worker and beat are killed and
   restarted, or the whole site is stopped and started again.
2. **lone visitors** arrive one after another, as a browser does (the pages over HTTP, then
   the table's socket): a new guest opens a practice table from the home page, a member uses
   "play now", a member creates a table of their own, adds bots and starts it. Each must get
   the table's state within 2 s of opening the table page, and their first move is applied.
   Then they close their page.
3. **the evening burst**: ``--tables`` tables of every preset at once, people and bots, short
   clocks, played by scripted pages (``tools.probe``), while one fault of the chaos
   tool strikes (a Daphne, the worker and beat, Redis, or PostgreSQL).
4. **the tables empty**: half the people close their pages; the other half lose theirs with
   the web process holding them, SIGKILLed (and restarted). Within 30 s every seat must show
   who is still there (nobody).

After the last hour a final quiet spell, and visitors again. Checks, each PASS or FAIL (exit
status 1 on any FAIL): every visitor got a state within 2 s and their first move applied;
presence right within 30 s after each emptying; no ERROR line in any process's log outside a
fault's window (the fault and :data:`FAULT_GRACE` seconds after its recovery); no server
process exited by itself; no frame answered as a failure of ours; the tables kept playing
after each burst's fault; stored moves replay to the stored scores and no ply was applied
twice or skipped; the club's coins add up.
"""

from __future__ import annotations

import argparse
import asyncio
import http.cookiejar
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from tools import chaos, probe, procs
from tools.chaos import Check, Seated, Site

PREFIX = "soak"
#: Expiries shortened so that a quiet spell of ``--quiet`` seconds outlasts every one of them.
#: The presence lease (15 s) and its heartbeat (5 s) keep their production lengths.
SITE_ENV = {
    "PRESENCE_AWAY_LIMIT_SECONDS": "10",
    "PRESENCE_EMPTY_LIMIT_SECONDS": "10",
    "SNAPSHOT_TTL_SECONDS": "10",
    "GUEST_IDLE_SECONDS": "15",
    "QUICK_PLAY_FILL_SECONDS": "2",
    # Every visitor comes from 127.0.0.1: one address, many guests in a day.
    "GUESTS_PER_ADDRESS_PER_HOUR": "1000",
}
#: What happens during the quiet spell of each hour, in turn (``None``: nothing; the day's
#: last quiet spell is always a full restart). A web process is SIGKILLed every hour as the
#: tables empty; so two hours see every fault the chaos tool knows, and a restart.
QUIET_FAULTS = (None, "postgres", "restart", "redis", "celery")
#: The fault of each hour's burst, in turn.
BURST_FAULTS = ("celery", "redis", "postgres", "daphne")
VISITOR_STATE_SECONDS = 2.0
FIRST_MOVE_SECONDS = 30.0
PRESENCE_SECONDS = 30.0
#: Error lines this long after a fault's recovery are still the fault's (a worker reconnecting
#: to its broker, a socket that met the outage and says so).
FAULT_GRACE = 10.0
LOG_TIME = re.compile(r"^\[?(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})")
ERROR = re.compile(r"\b(ERROR|CRITICAL)\b|^Traceback")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tools.soak",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--hours", type=int, default=12, help="hours of the day to live")
    parser.add_argument("--tables", type=int, default=20, help="tables in each burst")
    parser.add_argument("--quiet", type=float, default=25.0,
                        help="seconds with no socket open anywhere, each hour")
    parser.add_argument("--burst", type=float, default=60.0, help="seconds each burst plays")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-postgres", action="store_true",
                        help="never restart PostgreSQL, even where the tool may")
    parser.add_argument("--keep-db", action="store_true")
    return parser.parse_args(argv)


@dataclass
class Window:
    """When a fault was under way: error lines in it are the fault's."""

    kind: str
    start: float
    end: float | None = None

    def covers(self, at: float) -> bool:
        return self.start - 1.0 <= at <= (self.end or float("inf")) + FAULT_GRACE


@dataclass
class Visit:
    kind: str
    hour: int
    #: The web process the visitor's pages and socket go to.
    web: int = 0
    state_after: float | None = None
    first_move_after: float | None = None
    problem: str = ""


# -- a visitor's browser -----------------------------------------------------------------------

class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Browser:
    """The HTTP half of a browser: cookies, the CSRF token in forms, redirects followed by
    hand (so that opening the table page is timed on its own)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar),
                                                  _NoRedirect())

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.jar if c.name == name), None)

    def set_cookie(self, name: str, value: str) -> None:
        host = urllib.parse.urlsplit(self.base).hostname
        self.jar.set_cookie(http.cookiejar.Cookie(
            0, name, value, None, False, host, False, False, "/", True, False, None, False,
            None, None, {}))

    def request(self, path: str, data: dict | None = None) -> tuple[int, str, str | None]:
        """(status, body, the redirect's target path or None)."""
        body = None
        headers = {"Accept-Language": "es"}
        if data is not None:
            data = {**data, "csrfmiddlewaretoken": self.cookie("csrftoken") or ""}
            body = urllib.parse.urlencode(data).encode()
            headers.update({"Origin": self.base, "Referer": self.base + "/"})
        req = urllib.request.Request(self.base + path, data=body, headers=headers)
        try:
            with self.opener.open(req, timeout=20) as resp:
                return resp.status, resp.read().decode("utf-8", "replace"), None
        except urllib.error.HTTPError as err:
            location = err.headers.get("Location")
            target = urllib.parse.urlsplit(location).path if location else None
            return err.code, err.read().decode("utf-8", "replace"), target


# -- the day -----------------------------------------------------------------------------------

class Day:
    def __init__(self, args, site: Site, cookie_name: str, staff_session: str,
                 postgres: bool) -> None:
        self.args = args
        self.site = site
        self.cookie_name = cookie_name
        self.staff_session = staff_session
        self.postgres = postgres
        self.rng = random.Random(args.seed)
        self.windows: list[Window] = []
        self.visits: list[Visit] = []
        self.presence: list[Check] = []
        self.progress: list[Check] = []
        self.seated: list[Seated] = []
        self.clients: list[probe.SeatClient] = []
        self.faults: list[chaos.Fault] = []
        self.members = 0

    def base(self, web: int) -> str:
        return f"http://127.0.0.1:{self.site.ports[web]}"

    def urls(self, table_id: int, web: int = 0) -> list[str]:
        """The table's socket on each web process, ``web``'s first."""
        ports = self.site.ports[web:] + self.site.ports[:web]
        return [f"ws://127.0.0.1:{port}/ws/table/{table_id}/" for port in ports]

    async def run(self) -> None:
        for hour in range(self.args.hours):
            await self.quiet(hour, QUIET_FAULTS[hour % len(QUIET_FAULTS)])
            await self.visitors(hour)
            await self.burst(hour, BURST_FAULTS[hour % len(BURST_FAULTS)])
            await self.empty(hour)
        await self.quiet(self.args.hours, "restart")
        await self.visitors(self.args.hours)

    # -- 1. quiet ----------------------------------------------------------------------------

    async def quiet(self, hour: int, fault: str | None) -> None:
        if fault == "postgres" and not self.postgres:
            fault = "redis"
        procs.log(f"hour {hour}: quiet for {self.args.quiet:.0f} s"
                  + (f", during which: {fault}" if fault else ""))
        began = time.monotonic()
        if fault is not None:
            await asyncio.sleep(self.args.quiet / 3)
            await asyncio.to_thread(self.strike, fault)
        await asyncio.sleep(max(0.0, began + self.args.quiet - time.monotonic()))
        left = await asyncio.to_thread(_open_connections)
        if left:
            self.presence.append(Check(f"hour {hour}: nobody connected after the quiet spell",
                                       False, f"{left} Connection rows with no page open"))

    def strike(self, kind: str) -> None:
        """A fault, its window noted; a full restart is one too."""
        window = Window(kind, time.time())
        self.windows.append(window)
        if kind == "restart":
            self.site.busy = {p.name for p in self.site.all}
            try:
                self.site.stop()
                self.site.start()
            finally:
                self.site.busy = set()
        else:
            self.faults.append(self.site.inject(kind, self.rng))
        window.end = time.time()
        procs.log(f"  {kind}: back after {window.end - window.start:.1f} s")

    # -- 2. visitors -------------------------------------------------------------------------

    async def visitors(self, hour: int) -> None:
        """One after another, each to the next web process in turn, so that every process
        meets a lone visitor after every quiet spell (a process restarted since has nothing
        to forget; one that went quiet is what must hold)."""
        for kind in ("practice", "quick", "own"):
            visit = Visit(kind, hour, web=len(self.visits) % len(self.site.webs))
            self.visits.append(visit)
            try:
                await self.visit(visit)
            except Exception as exc:  # a visit that could not even be made fails the check
                visit.problem = visit.problem or f"{type(exc).__name__}: {exc}"
            procs.log(f"hour {hour}: {kind} visitor on {self.site.webs[visit.web].name}: "
                      f"state after "
                      f"{_seconds(visit.state_after)}, first move after "
                      f"{_seconds(visit.first_move_after)} {visit.problem}")

    async def visit(self, visit: Visit) -> None:
        browser = Browser(self.base(visit.web))
        if visit.kind == "practice":
            await asyncio.to_thread(browser.request, "/")
            form = {"preset": "partners", "players": "4", "bot_level": "easy",
                    "turn_seconds": ""}
            path = "/practice/"
        else:
            browser.set_cookie(self.cookie_name, await asyncio.to_thread(self.member_session))
            await asyncio.to_thread(browser.request, "/")
            if visit.kind == "quick":
                form, path = {"preset": "draw", "players": "2"}, "/play/"
            else:
                form = {"name": "", "preset": "all-fives", "players": "2", "target": "",
                        "hand_size": "", "best_of": "", "tie": "", "turn_seconds": "",
                        "public": "on", "watchers_allowed": "on", "allow_bots": "on",
                        "bot_level": "easy", "bot_think_ms": "300"}
                path = "/tables/new/"
        status, body, target = await asyncio.to_thread(browser.request, path, form)
        if status != 302 or not target or not target.startswith("/t/"):
            refused = re.findall(r'class="errorlist[^"]*">(.*?)</ul>', body, re.S)
            visit.problem = (f"{path} answered {status} (to {target}): "
                             f"{_text_of(' '.join(refused) or body)[:160]}")
            return
        opened = time.monotonic()
        status, body, _target = await asyncio.to_thread(browser.request, target)
        found = re.search(r'data-socket="/ws/table/(\d+)/"', body)
        if status != 200 or not found:
            visit.problem = f"the table page answered {status}"
            return
        table_id = int(found.group(1))
        spec = probe.SeatSpec(table_id=table_id, seat=0,
                              session=browser.cookie(self.cookie_name) or "",
                              urls=self.urls(table_id, visit.web),
                              origin=self.base(visit.web), think=0.3,
                              cookie_name=self.cookie_name)
        client = probe.SeatClient(spec, rng=random.Random(self.rng.random()))
        self.clients.append(client)
        client.start()
        try:
            if not await client.wait_state(10):
                visit.problem = "no state within 10 s"
                return
            visit.state_after = time.monotonic() - opened
            if client.stats.opens != 1 or client.stats.closes or client.stats.failed_opens:
                # Another web process answered the page's reconnect: the one it first reached
                # failed it (the page said "Connection lost; reconnecting…").
                visit.problem = (f"the first socket did not serve: {client.stats.opens} opens, "
                                 f"{client.stats.failed_opens} failed, closes "
                                 f"{dict(client.stats.closes)}")
            if visit.kind == "own":  # the host fills the table with a bot and starts
                for action in ("add_bot", "start"):
                    await client._send({"type": "host", "action": action})
            client.playing = True
            client._consider()
            deadline = time.monotonic() + FIRST_MOVE_SECONDS
            while time.monotonic() < deadline:
                if _own_move_in(client.state):
                    visit.first_move_after = time.monotonic() - opened
                    if client.stats.closes and not visit.problem:
                        visit.problem = f"the socket closed: {dict(client.stats.closes)}"
                    return
                await asyncio.sleep(0.1)
            visit.problem = (f"no move of theirs applied within {FIRST_MOVE_SECONDS:.0f} s "
                             f"(sent {client.stats.moves_sent}, errors "
                             f"{dict(client.stats.errors)})")
        finally:
            await client.stop()

    def member_session(self) -> str:
        from django.db import close_old_connections

        try:
            self.members += 1
            person = probe.make_players(1, f"{PREFIX}-member{self.members}-")[0]
            return probe.session_cookie(person)
        finally:
            close_old_connections()

    # -- 3. the burst ------------------------------------------------------------------------

    async def burst(self, hour: int, fault: str) -> None:
        if fault == "postgres" and not self.postgres:
            fault = "redis"
        seated, _staff = await asyncio.to_thread(self.open_tables, hour)
        self.seated += seated
        clients = [c for s in seated for c in s.clients.values()]
        self.clients += clients
        for client in clients:
            client.start()
        await asyncio.gather(*(c.wait_state(30) for c in clients))
        for client in clients:
            client.playing = True
            client._consider()
        procs.log(f"hour {hour}: burst of {len(seated)} tables, {len(clients)} pages, "
                  f"{self.args.burst:.0f} s; fault: {fault}")
        began = time.monotonic()
        await asyncio.sleep(self.args.burst / 3)
        await asyncio.to_thread(self.strike, fault)
        recovered = time.monotonic()
        await asyncio.sleep(max(chaos.CATCH_UP_SECONDS, began + self.args.burst
                                - time.monotonic()))
        self.progress.append(await asyncio.to_thread(self.progress_of, seated, recovered, hour))

    def open_tables(self, hour: int):
        from django.db import close_old_connections

        try:
            return chaos.open_tables(self.args.tables, self.rng, self.site,
                                     prefix=f"{PREFIX}{hour}-")
        finally:
            close_old_connections()

    def progress_of(self, seated: list[Seated], recovered: float, hour: int) -> Check:
        from datetime import timedelta

        from django.db import close_old_connections
        from django.utils import timezone

        try:
            since = timezone.now() - timedelta(seconds=time.monotonic() - recovered)
            check = chaos.check_progress(seated, since)
        finally:
            close_old_connections()
        check.name = f"hour {hour}: {check.name}"
        return check

    # -- 4. the tables empty -----------------------------------------------------------------

    async def empty(self, hour: int) -> None:
        """Half the pages close; the web process holding the other half is SIGKILLed with
        them (and restarted, as a supervisor would). Then presence must say so."""
        seated = [s for s in self.seated if any(not c.done for c in s.clients.values())]
        clients = [c for s in seated for c in s.clients.values() if not c.done]
        rng = random.Random(f"empty-{self.args.seed}-{hour}")
        rng.shuffle(clients)
        staying = clients[len(clients) // 2:]

        def held_by(i: int) -> list[probe.SeatClient]:
            port = str(self.site.ports[i])
            return [c for c in staying if c.is_open and port in c.spec.urls[c._url]]

        victim = max(range(len(self.site.webs)), key=lambda i: len(held_by(i)))
        on_victim = held_by(victim)
        closing = [c for c in clients if c not in on_victim]
        await asyncio.gather(*(c.stop() for c in closing))
        window = Window("daphne (emptying)", time.time())
        self.windows.append(window)
        self.site.busy = {self.site.webs[victim].name}
        for client in on_victim:  # the page goes with it: no close, no reconnect
            client._stopping = True
        self.site.webs[victim].kill()
        await asyncio.gather(*(c.stop() for c in on_victim))
        ok = await asyncio.to_thread(self.site.start_web, victim)
        self.site.busy = set()
        window.end = time.time()
        procs.log(f"hour {hour}: {len(closing)} pages closed, {len(on_victim)} went with "
                  f"{self.site.webs[victim].name} (back: {ok}); waiting for presence")
        deadline = time.monotonic() + PRESENCE_SECONDS
        while True:
            wrong = await self.presence_mismatches(seated)
            if not wrong or time.monotonic() >= deadline:
                break
            await asyncio.sleep(2)
        waited = PRESENCE_SECONDS - max(0.0, deadline - time.monotonic())
        self.presence.append(Check(
            f"hour {hour}: presence right within {PRESENCE_SECONDS:.0f} s", not wrong,
            f"{len(closing)} closed, {len(on_victim)} lost with a killed web process; "
            f"right after {waited:.0f} s", wrong))

    async def presence_mismatches(self, seated: list[Seated]) -> list[str]:
        wrong = []
        for s in seated:
            state = await self.observe(s.table.table_id)
            if state is None:
                wrong.append(f"table {s.table.table_id}: no state could be read")
                continue
            for seat in s.clients:
                if state["seats"][seat].get("connected"):
                    wrong.append(f"table {s.table.table_id} seat {seat}: shown connected, "
                                 "no page open")
        return wrong

    async def observe(self, table_id: int) -> dict | None:
        spec = probe.SeatSpec(
            table_id=table_id, seat=0, session=self.staff_session,
            urls=[f"ws://127.0.0.1:{port}/ws/observe/{table_id}/" for port in self.site.ports],
            origin="http://127.0.0.1", mode="silent", cookie_name=self.cookie_name)
        observer = probe.SeatClient(spec)
        observer.start()
        try:
            return observer.state if await observer.wait_state(10) else None
        finally:
            await observer.stop()


# -- the checks --------------------------------------------------------------------------------

def _open_connections() -> int:
    from django.db import close_old_connections

    from apps.tables.models import Connection

    try:
        return Connection.objects.count()
    finally:
        close_old_connections()


def _own_move_in(state: dict | None) -> bool:
    """Whether the state shows a move this person made (not the table nor a bot for them)."""
    if not state or not state.get("view"):
        return False
    seat = (state.get("you") or {}).get("seat")
    return any(m.get("seat") == seat and m.get("by", "player") == "player"
               for m in state["view"].get("moves", []))


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def _text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def check_visits(visits: list[Visit]) -> Check:
    bad = [f"hour {v.hour} {v.kind} (web {v.web + 1}): state after {_seconds(v.state_after)}, "
           f"first move after "
           f"{_seconds(v.first_move_after)} {v.problem}".rstrip() for v in visits
           if v.problem or v.state_after is None or v.state_after > VISITOR_STATE_SECONDS
           or v.first_move_after is None]
    states = sorted(v.state_after for v in visits if v.state_after is not None)
    detail = f"{len(visits) - len(bad)} of {len(visits)} visitors"
    if states:
        detail += (f"; state after p50 {states[len(states) // 2]:.2f} s, "
                   f"max {states[-1]:.2f} s")
    return Check(f"every visitor got a state within {VISITOR_STATE_SECONDS:.0f} s and their "
                 "first move applied", not bad, detail, bad)


def log_errors(site: Site, windows: list[Window]) -> Check:
    """Error lines of every process (Django's and Celery's formats, tracebacks), each taken at
    the time of the last timestamped line before it, outside every fault's window."""
    outside, inside = [], 0
    for proc in site.all:
        if proc is site.redis.proc:
            continue
        try:
            text = proc.stderr_path.read_text(errors="replace")
        except OSError:
            continue
        at = 0.0
        for line in text.splitlines():
            stamp = LOG_TIME.match(line)
            if stamp:
                at = datetime.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S").timestamp() \
                    + int(stamp.group(2)) / 1000
            if not ERROR.search(line):
                continue
            if any(w.covers(at) for w in windows):
                inside += 1
            else:
                outside.append(f"{proc.name} {time.strftime('%H:%M:%S', time.localtime(at))}:"
                               f" {line[:200]}")
    return Check("no ERROR line outside a fault's window", not outside,
                 f"{len(outside)} outside, {inside} within the {len(windows)} faults' windows",
                 outside)


def run(args: argparse.Namespace, env: dict[str, str], log_dir: Path,
        redis: procs.RedisServer) -> int:
    from django.conf import settings
    from django.contrib.auth import get_user_model

    collected = subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput"],
                               cwd=procs.ROOT, env=env, capture_output=True, text=True)
    if collected.returncode:
        raise SystemExit(f"collectstatic failed:\n{collected.stderr}")
    site = Site(env, log_dir, redis)
    postgres = not args.no_postgres and procs.postgres_cluster(env["DATABASE_URL"]) is not None
    day = None
    began = time.monotonic()
    try:
        site.start()
        staff = get_user_model().objects.create_user(username=f"{PREFIX}-staff",
                                                     is_staff=True, is_superuser=True)
        day = Day(args, site, settings.SESSION_COOKIE_NAME, probe.session_cookie(staff),
                  postgres)

        async def live() -> None:
            watcher = asyncio.get_running_loop().create_task(_look(site))
            try:
                await day.run()
            finally:
                watcher.cancel()
                await asyncio.gather(*(c.stop() for c in day.clients))

        asyncio.run(live())
        site.look()
    finally:
        site.stop()
    from django.db import connections

    connections.close_all()  # this process's own, cut by a PostgreSQL restart
    deaths = list(site.deaths.values())
    checks = [
        check_visits(day.visits),
        *day.presence,
        log_errors(site, day.windows),
        Check("no server process exited by itself", not deaths, f"{len(deaths)} exited",
              deaths),
        chaos.check_answers(day.clients),
        *day.progress,
        *chaos.check_records(day.seated),
        *chaos.check_coins(day.seated),
    ]
    print()
    print(f"a day of {args.hours} hours in {(time.monotonic() - began) / 60:.1f} min: "
          f"{len(day.visits)} visitors, {len(day.seated)} burst tables, "
          f"{len(day.windows)} faults ({', '.join(w.kind for w in day.windows)})", flush=True)
    chaos.print_run(day, site)
    print()
    chaos.print_checks(checks)
    print(f"\nserver logs: {log_dir}", flush=True)
    return 0 if all(c.ok for c in checks) else 1


async def _look(site: Site) -> None:
    while True:
        await asyncio.sleep(0.5)
        site.look()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    database_url = procs.require_postgres(os.environ.get("DATABASE_URL"))
    procs.raise_open_files()
    log_dir = Path(tempfile.mkdtemp(prefix="soak-"))
    redis = procs.RedisServer(log_dir)
    redis.start()
    try:
        with procs.fresh_database(database_url, PREFIX, keep=args.keep_db) as db_url:
            env = procs.site_env(db_url, redis.url, log_dir)
            env.update(SITE_ENV)
            os.environ.update(env)
            import django

            django.setup()
            try:
                return run(args, env, log_dir, redis)
            finally:
                from django.db import connections

                connections.close_all()
    finally:
        redis.stop()


if __name__ == "__main__":
    sys.exit(main())
