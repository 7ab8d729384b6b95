"""``python -m tools.chaos``: tables keep their promises while processes die.

    DATABASE_URL=postgres://... python -m tools.chaos --tables 50 --minutes 3 \\
        [--faults daphne:2,celery:1,redis:1] [--seed S]

Creates a fresh database on DATABASE_URL's server (dropped at the end) and starts a site of its
own: a redis-server (so it may restart it), two Daphne processes, a Celery worker and beat, with
the commands of ``scripts/run.py``. It opens tables of every preset, with bots in some seats and
scripted socket clients (``tools.probe``) in the others (every fifth table is a stake
table of ``apps.club``: people only, each paying an entry, the pot to the winners): most play a
random legal move after a think time, some never move, so short turn times (3-5 s) make the
table play for them.
Each client holds one socket and reconnects as the table page does, to either Daphne in turn.

Meanwhile, at random times, the driver kills a Daphne with SIGKILL and restarts it, kills the
worker and beat and restarts them, and restarts Redis; with ``postgres`` among the faults (not
by default: it restarts this machine's PostgreSQL server under everything else using it, and
needs root) it restarts PostgreSQL too, cutting every connection of every process. After the
last recovery it checks that every client caught up with its table within 10 s; at the end a
third of the clients close their pages and, once the server has had up to ``--settle``
seconds, that every seat's ``connected`` matches the sockets actually open. No frame may be
answered ``internal`` (an outage is ``unavailable``). Then, from the database: every match's
moves replay through the harness to its stored scores, and no round skips or repeats a ply;
and the club's books hold: every wallet equals its ledger rows, every stake's escrow its
entries, all wallets plus all escrow equal the coins ever minted, and no stake table's pot was
paid twice or lost.

Every check prints PASS or FAIL; the exit status is 1 when any fails.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from tools import probe, procs

PREFIX = "chaos"
KINDS = ("daphne", "celery", "redis", "postgres")
#: (preset, players): every preset, two- to four-handed.
MIX = [("partners", 4), ("draw", 2), ("all-fives", 4), ("tranca", 4), ("block", 3),
       ("draw", 4), ("all-fives", 2), ("partners-66", 4), ("tranca", 2), ("pairs-series", 4)]
CATCH_UP_SECONDS = 10.0
#: Every STAKE_EVERY-th table is a stake table with this entry (people in every seat).
STAKE_EVERY = 5
STAKE_ENTRY = 100


def parse_faults(text: str) -> dict[str, int]:
    """``daphne:2,celery,redis`` -> {"daphne": 2, "celery": 1, "redis": 1}."""
    out: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        kind, _sep, count = item.partition(":")
        if kind not in KINDS:
            raise argparse.ArgumentTypeError(f"unknown fault {kind!r}; faults: {', '.join(KINDS)}")
        out[kind] = out.get(kind, 0) + (int(count) if count else 1)
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tools.chaos",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--minutes", type=float, default=3.0, help="how long the tables play")
    parser.add_argument("--faults", type=parse_faults, default=parse_faults(
        "daphne:2,celery:1,redis:1"), help="kinds and counts (default daphne:2,celery:1,redis:1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--settle", type=float, default=30.0,
                        help="seconds the server gets for presence to settle")
    parser.add_argument("--keep-db", action="store_true")
    return parser.parse_args(argv)


@dataclass
class Fault:
    kind: str
    target: str
    at: float
    recovered: float | None = None

    @property
    def down(self) -> float | None:
        return None if self.recovered is None else self.recovered - self.at


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    lines: list[str] = field(default_factory=list)


class Site:
    """Two Daphne, a worker, beat, and the Redis they share."""

    def __init__(self, env: dict[str, str], log_dir: Path, redis: procs.RedisServer) -> None:
        self.redis = redis
        self.database_url = env["DATABASE_URL"]
        self.ports = procs.free_ports(2)
        self.webs = [procs.daphne(port, env, log_dir, name=f"daphne-{i + 1}")
                     for i, port in enumerate(self.ports)]
        self.worker = procs.worker(env, log_dir)
        self.beat = procs.beat(env, log_dir)
        #: Processes a fault is killing and restarting right now.
        self.busy: set[str] = set()
        self.deaths: dict[tuple[str, int], str] = {}
        self._lock = threading.Lock()  # a fault's kill is not a death

    @property
    def all(self) -> list[procs.Proc]:
        return [*self.webs, self.worker, self.beat, self.redis.proc]

    def start_web(self, i: int) -> bool:
        self.webs[i].start()
        return procs.wait_http(f"http://127.0.0.1:{self.ports[i]}/healthz", 60, self.webs[i])

    def start_celery(self) -> bool:
        marks = (self.worker.log_size(), self.beat.log_size())
        self.worker.start()
        self.beat.start()
        return (self.worker.wait_log(" ready.", marks[0], 60)
                and self.beat.wait_log("beat: Starting", marks[1], 60))

    def start(self) -> None:
        marks = (self.worker.log_size(), self.beat.log_size())
        for proc in (*self.webs, self.worker, self.beat):
            proc.start()
        for web, port in zip(self.webs, self.ports, strict=True):
            if not procs.wait_http(f"http://127.0.0.1:{port}/healthz", 60, web):
                raise SystemExit(f"{web.name} did not start; see {web.stderr_path}")
        if not (self.worker.wait_log(" ready.", marks[0], 60)
                and self.beat.wait_log("beat: Starting", marks[1], 60)):
            raise SystemExit(f"the worker or beat did not start; see {self.worker.stderr_path}")

    def look(self) -> None:
        """Note every process that exited by itself (the faults restart what they kill)."""
        with self._lock:
            for proc in self.all:
                key = (proc.name, proc.starts)
                if proc.name in self.busy or proc.alive() or key in self.deaths:
                    continue
                self.deaths[key] = (f"{proc.name} (start {proc.starts}) exited with "
                                    f"{proc.proc.returncode} at {time.strftime('%H:%M:%S')}: "
                                    f"{proc.last_line()[:160]}")

    def stop(self) -> None:
        for proc in (self.beat, self.worker, *self.webs):
            proc.stop()

    def inject(self, kind: str, rng: random.Random) -> Fault:
        now = time.monotonic()
        self.look()
        if kind == "postgres":
            # Not a process of this site: the machine's server, restarted under everyone.
            fault = Fault(kind, "postgresql", now)
            ok = procs.restart_postgres(self.database_url)
            fault.recovered = time.monotonic() if ok else None
            return fault
        if kind == "daphne":
            i = rng.randrange(len(self.webs))
            targets = [self.webs[i]]
        elif kind == "celery":
            targets = [self.worker, self.beat]
        else:
            targets = [self.redis.proc]
        fault = Fault(kind, "+".join(p.name for p in targets), now)
        with self._lock:
            self.busy = {p.name for p in targets}
            for proc in targets:
                proc.kill(signal.SIGKILL)
        try:
            if kind == "daphne":
                ok = self.start_web(i)
            elif kind == "celery":
                ok = self.start_celery()
            else:
                self.redis.proc.start()
                ok = self.redis.wait(10)
        finally:
            self.busy = set()
        fault.recovered = time.monotonic() if ok else None
        return fault


# -- setup -------------------------------------------------------------------------------------

@dataclass
class Seated:
    table: probe.OpenTable
    clients: dict[int, probe.SeatClient]
    watch: probe.TableWatch


def open_tables(count: int, rng: random.Random, site: Site,
                prefix: str = PREFIX) -> tuple[list[Seated], str]:
    """Tables of every preset, some seats bots; returns them and a staff session. People's
    names start with ``prefix``."""
    from django.conf import settings
    from django.contrib.auth import get_user_model

    urls_of = [f"ws://127.0.0.1:{port}" for port in site.ports]
    seated: list[Seated] = []
    for t in range(count):
        preset, players = MIX[t % len(MIX)]
        order = "".join("b" if rng.random() < 0.4 else "p" for _ in range(players - 1))
        stake = t % STAKE_EVERY == STAKE_EVERY - 1
        if stake:
            order = "p" * (players - 1)
        people = probe.make_players(1 + order.count("p"), f"{prefix}{t}-")
        sessions = {p.pk: probe.session_cookie(p) for p in people}
        options = {"turn_seconds": rng.choice([3, 4, 5])}
        think_ms = rng.choice([150, 300, 600])
        if stake:
            table = open_stake_table(people, preset, players, options, think_ms)
        else:
            table = probe.open_table(
                people=people, preset=preset, players=players, order=order, options=options,
                bot_level="easy", bot_think_ms=think_ms, next_round_seconds=2)
        person_seats = [i for i, user in enumerate(table.seats) if user is not None]
        watch = probe.TableWatch(table.table_id, person_seats)
        watch.recording = True
        clients = {}
        for seat in person_seats:
            silent = rng.random() < 0.25
            urls = [f"{base}/ws/table/{table.table_id}/" for base in urls_of]
            spec = probe.SeatSpec(
                table_id=table.table_id, seat=seat, session=sessions[table.seats[seat]],
                urls=urls, origin="http://127.0.0.1", mode="silent" if silent else "active",
                think=rng.uniform(0.3, 4.0), host=seat == 0, rematch=not stake,
                cookie_name=settings.SESSION_COOKIE_NAME)
            clients[seat] = probe.SeatClient(spec, watch, random.Random(rng.random()))
        seated.append(Seated(table, clients, watch))
    staff = get_user_model().objects.create_user(username=f"{prefix}-staff", is_staff=True,
                                                 is_superuser=True)
    return seated, probe.session_cookie(staff)


def open_stake_table(people: list, preset: str, players: int, options: dict,
                     think_ms: int) -> probe.OpenTable:
    """A started stake table: ``people[0]`` opens it (and pays), the others sit down (and pay)."""
    from apps.club.services import open_stake_table as open_one
    from apps.tables import services
    from apps.tables.models import Table

    host, others = people[0], people[1:]
    table = open_one(user=host, entry=STAKE_ENTRY, preset=preset, players=players,
                     options=options)
    # Setup, not play: as probe.open_table does.
    Table.objects.filter(pk=table.pk).update(next_round_seconds=2, bot_think_ms=think_ms)
    for person in others:
        services.join_table(user=person, table_id=table.pk)
    services.start_match(user=host, table_id=table.pk)
    return probe.OpenTable(table.pk, preset, [p.pk for p in people])


def check_coins(seated: list[Seated]) -> list[Check]:
    """The club's books after the run: the coin invariant, and each stake table's entries
    either all in its escrow or all paid out, exactly once."""
    from django.db.models import Sum

    from apps.club.models import LedgerEntry, Stake
    from apps.club.selectors import coin_totals, wallet_problems

    problems = wallet_problems()
    totals = coin_totals()
    checks = [Check("coins: wallets + escrow = minted, caches = ledger", not problems,
                    f"wallets {totals['wallets']} + escrow {totals['escrow']} = minted "
                    f"{totals['minted']}", problems)]
    ids = [s.table.table_id for s in seated]
    bad, states = [], {}
    for stake in Stake.objects.filter(table_id__in=ids):
        states[stake.state] = states.get(stake.state, 0) + 1
        rows = LedgerEntry.objects.filter(table_id=stake.table_id)
        paid_in = -(rows.filter(reason="stake").aggregate(s=Sum("coins"))["s"] or 0)
        out = rows.filter(reason__in=("pot", "refund")).aggregate(s=Sum("coins"))["s"] or 0
        seats = len(next(s.table.seats for s in seated if s.table.table_id == stake.table_id))
        if paid_in != seats * stake.entry or paid_in != out + stake.escrow \
                or (stake.state in ("paid", "cancelled")) != (stake.escrow == 0):
            bad.append(f"table {stake.table_id} ({stake.state}): in {paid_in}, out {out}, "
                       f"escrow {stake.escrow}")
    checks.append(Check("stake tables: no entry lost or paid twice", not bad and bool(states),
                        ", ".join(f"{n} {k}" for k, n in sorted(states.items())) or "none",
                        bad))
    return checks


def plan_faults(faults: dict[str, int], duration: float, rng: random.Random) -> list[tuple]:
    """(seconds after the start, kind), spread over the run with room to recover between,
    and the last early enough for the catch-up (20 s) to end before the tables stop."""
    kinds = [kind for kind, n in faults.items() for _ in range(n)]
    rng.shuffle(kinds)
    if not kinds:
        return []
    first, last = min(10.0, duration / 6), max(duration - 2.5 * CATCH_UP_SECONDS, 12.0)
    slot = (last - first) / len(kinds)
    return [(first + slot * (i + rng.uniform(0.1, 0.6)), kind) for i, kind in enumerate(kinds)]


# -- the run -----------------------------------------------------------------------------------

class Chaos:
    def __init__(self, args, site: Site, seated: list[Seated], staff_session: str,
                 cookie_name: str) -> None:
        self.args = args
        self.site = site
        self.seated = seated
        self.staff_session = staff_session
        self.cookie_name = cookie_name
        self.rng = random.Random(f"faults-{args.seed}")
        self.faults: list[Fault] = []
        self.samples: list[tuple[float, dict[int, int]]] = []
        self.checks: list[Check] = []
        self.quitters: set[tuple[int, int]] = set()
        self.started = 0.0
        self.progress: list[Check] = []

    @property
    def clients(self) -> list[probe.SeatClient]:
        return [c for s in self.seated for c in s.clients.values()]

    async def run(self) -> None:
        duration = self.args.minutes * 60
        for client in self.clients:
            client.start()
        opened = await asyncio.gather(*(c.wait_state(30) for c in self.clients))
        procs.log(f"{sum(opened)} of {len(opened)} clients have their table; playing")
        for client in self.clients:
            client.playing = True
            client._consider()
        self.started = time.monotonic()
        watcher = asyncio.get_running_loop().create_task(self.look_at_processes())
        plan = plan_faults(self.args.faults, duration, self.rng)
        for at, kind in plan:
            await asyncio.sleep(max(0.0, self.started + at - time.monotonic()))
            procs.log(f"fault: {kind}")
            fault = await asyncio.to_thread(self.site.inject, kind, self.rng)
            self.faults.append(fault)
            down = f"back after {fault.down:.1f} s" if fault.down is not None else "NOT BACK"
            procs.log(f"fault: {kind} ({fault.target}) {down}")
        recovered = max((f.recovered or f.at for f in self.faults), default=self.started)
        await self.sample_versions(recovered, recovered + CATCH_UP_SECONDS)
        # The last sample's version has 10 s to arrive too.
        until = max(self.started + duration, recovered + 2 * CATCH_UP_SECONDS + 0.5)
        await asyncio.sleep(max(0.0, until - time.monotonic()))
        self.check_catch_up(recovered)
        await self.quit_some()
        await self.check_presence()
        watcher.cancel()
        self.site.look()
        # While the pages are still open: once they close, their tables pause by themselves.
        self.progress = [await asyncio.to_thread(self.progress_since, recovered)]

    def progress_since(self, recovered: float) -> Check:
        from django.db import close_old_connections
        from django.utils import timezone

        try:
            since = timezone.now() - timedelta(seconds=time.monotonic() - recovered)
            return check_progress(self.seated, since)
        finally:
            close_old_connections()

    async def look_at_processes(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            self.site.look()

    async def sample_versions(self, since: float, until: float) -> None:
        """The tables' versions in the database, twice a second, from the last recovery."""
        from apps.tables.models import Table

        ids = [s.table.table_id for s in self.seated]

        def read() -> dict[int, int]:
            from django.db import close_old_connections

            try:
                return dict(Table.objects.filter(pk__in=ids).values_list("pk", "version"))
            finally:
                close_old_connections()

        await asyncio.sleep(max(0.0, since - time.monotonic()))
        while time.monotonic() <= until:
            at = time.monotonic()
            self.samples.append((at, await asyncio.to_thread(read)))
            await asyncio.sleep(max(0.0, at + 0.5 - time.monotonic()))

    def check_catch_up(self, recovered: float) -> None:
        """Every version a table had in the 10 s after the last recovery (sampled twice a
        second, from the moment of recovery) reached each of its clients within 10 s. The
        first sample is what the table did up to the recovery, the outage included; the later
        ones catch a page that stopped hearing its table. A page merely slow under load passes."""
        delays, late = [], []
        for client in self.clients:
            table = client.spec.table_id
            worst, why = 0.0, ""
            for at, versions in self.samples:
                want = versions.get(table, -1)
                seen = next((t for t, v in client.history if v >= want), None)
                delay = float("inf") if seen is None else max(0.0, seen - at)
                if delay > worst:
                    worst = delay
                    why = (f"version {want} (the table's {at - recovered:.1f} s after the "
                           f"recovery) " + ("never came" if seen is None
                                            else f"came {delay:.1f} s later"))
            delays.append(worst)
            if worst > CATCH_UP_SECONDS:
                late.append(f"table {table} seat {client.spec.seat}: {why}; holds "
                            f"{client.version}; socket {'open' if client.is_open else 'closed'}"
                            f", opened {client.stats.opens}x, closes {dict(client.stats.closes)}")
        finite = sorted(d for d in delays if d != float("inf"))
        detail = (f"{len(delays) - len(late)} of {len(delays)} clients got every version within "
                  f"{CATCH_UP_SECONDS:.0f} s, {len(delays) - len(finite)} never got one")
        if finite:
            detail += (f" (worst delay per client: p50 {finite[len(finite) // 2]:.1f} s, "
                       f"max {finite[-1]:.1f} s)")
        self.checks.append(Check("clients reach the latest version", not late, detail, late))

    async def quit_some(self) -> None:
        """A third of the people close their page: presence must drop for them."""
        people = [(s.table.table_id, seat) for s in self.seated for seat in s.clients]
        rng = random.Random(f"quit-{self.args.seed}")
        self.quitters = set(rng.sample(people, max(1, len(people) // 3)))
        stopping = [s.clients[seat].stop() for s in self.seated for seat in s.clients
                    if (s.table.table_id, seat) in self.quitters]
        await asyncio.gather(*stopping)
        procs.log(f"{len(stopping)} clients closed their page; waiting for presence")

    async def check_presence(self) -> None:
        deadline = time.monotonic() + self.args.settle
        while True:
            wrong = await self.presence_mismatches()
            if not wrong or time.monotonic() >= deadline:
                break
            await asyncio.sleep(2)
        waited = self.args.settle - max(0.0, deadline - time.monotonic())
        people = sum(len(s.clients) for s in self.seated)
        rows = await asyncio.to_thread(self.connection_rows)
        self.checks.append(Check(
            "presence matches the open sockets", not wrong,
            f"{people - len(wrong)} of {people} seated people right after {waited:.0f} s "
            f"({len(self.quitters)} closed their page; {rows} Connection rows for "
            f"{sum(c.is_open for c in self.clients)} open sockets)", wrong))

    def connection_rows(self) -> int:
        from django.db import close_old_connections

        from apps.tables.models import Connection

        try:
            return Connection.objects.filter(
                table_id__in=[s.table.table_id for s in self.seated]).count()
        finally:
            close_old_connections()

    async def presence_mismatches(self) -> list[str]:
        wrong = []
        states = await asyncio.gather(*(self.fresh_state(s) for s in self.seated))
        for s, state in zip(self.seated, states, strict=True):
            if state is None:
                wrong.append(f"table {s.table.table_id}: no fresh state could be read")
                continue
            for seat, client in s.clients.items():
                shown = state["seats"][seat].get("connected")
                if shown != client.is_open:
                    wrong.append(f"table {s.table.table_id} seat {seat}: connected={shown}, "
                                 f"socket {'open' if client.is_open else 'closed'}")
        return wrong

    async def fresh_state(self, s: Seated) -> dict | None:
        """A state read now: a sync on a page still open, else a silent staff observer."""
        for client in s.clients.values():
            if client.is_open and await client.sync(5):
                return client.state
        spec = probe.SeatSpec(
            table_id=s.table.table_id, seat=0, session=self.staff_session,
            urls=[f"ws://127.0.0.1:{port}/ws/observe/{s.table.table_id}/"
                  for port in self.site.ports],
            origin="http://127.0.0.1", mode="silent", cookie_name=self.cookie_name)
        observer = probe.SeatClient(spec)
        observer.start()
        try:
            return observer.state if await observer.wait_state(10) else None
        finally:
            await observer.stop()

    async def stop_clients(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.clients))


# -- the database's verdict --------------------------------------------------------------------

def check_records(seated: list[Seated]) -> list[Check]:
    from apps.rules import harness
    from apps.tables import game
    from apps.tables.models import Match, Move

    ids = [s.table.table_id for s in seated]
    bad, matches, finished = [], 0, 0
    for match in Match.objects.filter(table_id__in=ids).order_by("table_id", "number"):
        matches += 1
        record = game.record_of(match)
        whole = harness.replay(record)
        if not whole.get("ok"):
            bad.append(f"table {match.table_id} match {match.number}: {whole.get('error')}")
            continue
        # Match.scores is written when a round ends: compare with the finished rounds only
        # (fives scored in a round still being played are not in it yet).
        done = [r for r, stored in zip(record["rounds"], match.rounds.filter(voided=False)
                                       .order_by("number"), strict=True) if stored.result]
        finished += len(done)
        replayed = harness.replay({**record, "rounds": done}) if done else {"scores": None}
        expected = replayed["scores"] if done else [0] * len(match.scores)
        if replayed.get("ok", True) is False or expected != match.scores:
            bad.append(f"table {match.table_id} match {match.number}: stored scores "
                       f"{match.scores}, replayed {expected}")
    checks = [Check("stored moves replay to the stored scores", not bad,
                    f"{matches} matches, {finished} finished rounds", bad)]

    plies: dict[int, list[int]] = {}
    for round_id, ply in (Move.objects.filter(round__match__table_id__in=ids)
                          .order_by("round_id", "ply").values_list("round_id", "ply")):
        plies.setdefault(round_id, []).append(ply)
    broken = [f"round {rid}: plies {p}" for rid, p in plies.items() if p != list(range(len(p)))]
    seen_twice = [line for s in seated for line in s.watch.conflicts]
    moves = sum(len(p) for p in plies.values())
    checks.append(Check("no ply applied twice or skipped", not broken and not seen_twice,
                        f"{moves} moves in {len(plies)} rounds; {len(broken)} rounds with a gap "
                        f"or repeat; {len(seen_twice)} positions seen with two moves",
                        broken + seen_twice))
    return checks


#: A deadline this much in the past, with the worker and beat up, was missed.
OVERDUE = timedelta(seconds=5)


def check_progress(seated: list[Seated], since_wall) -> Check:
    """Run while the site is still up: every table still being played made a move after the
    last recovery, and none has a deadline the table should have acted on seconds ago."""
    from django.utils import timezone

    from apps.tables.models import Move, Table

    stuck = []
    now = timezone.now()
    for table in Table.objects.filter(pk__in=[s.table.table_id for s in seated]):
        match = table.current_match
        if table.state != Table.State.PLAYING or table.paused or match is None \
                or match.finished_at is not None:
            continue
        if not Move.objects.filter(round__match__table=table, created_at__gte=since_wall).exists():
            stuck.append(f"table {table.pk} ({table.preset}): no move since the last recovery; "
                         f"version {table.version}, deadline {table.turn_deadline}")
        elif table.turn_deadline is not None and table.turn_deadline < now - OVERDUE:
            late = (now - table.turn_deadline).total_seconds()
            stuck.append(f"table {table.pk} ({table.preset}): its deadline passed {late:.0f} s "
                         f"ago; version {table.version}")
    return Check("tables kept playing after the last recovery", not stuck,
                 f"{len(stuck)} stuck", stuck)


def check_faults(faults: list[Fault], wanted: dict[str, int]) -> Check:
    counts = {kind: sum(f.kind == kind for f in faults) for kind in KINDS}
    missing = [f"{f.kind} ({f.target}) did not come back" for f in faults if f.recovered is None]
    short = [f"{kind}: {counts[kind]} of {n} injected" for kind, n in wanted.items()
             if counts[kind] < n]
    downs = ", ".join(f"{f.kind} {f.down:.1f} s" for f in faults if f.down is not None)
    detail = (f"{len(faults)} injected: " + ", ".join(f"{k} {counts[k]}" for k in KINDS)
              + (f"; down for {downs}" if downs else ""))
    return Check("faults injected and recovered", not missing and not short, detail,
                 missing + short)


def error_frames(clients: list[probe.SeatClient]) -> dict[str, int]:
    """How many ``error`` frames of each code the clients got, together."""
    errors: dict[str, int] = {}
    for client in clients:
        for code, n in client.stats.errors.items():
            errors[code] = errors.get(code, 0) + n
    return errors


def check_answers(clients: list[probe.SeatClient]) -> Check:
    """No frame was answered as a failure of ours: a fault is an outage (``unavailable``, try
    again), never an ``internal`` error, and every frame the server sent could be read."""
    errors = error_frames(clients)
    bad = {code: errors.get(code, 0) for code in ("internal", "unreadable") if errors.get(code)}
    return Check("no frame answered as a failure of ours", not bad,
                 f"error frames {errors or 'none'}",
                 [f"{n} answered '{code}'" for code, n in bad.items()])


def print_checks(checks: list[Check]) -> None:
    for check in checks:
        print(f"{'PASS' if check.ok else 'FAIL'}  {check.name}: {check.detail}", flush=True)
        for line in check.lines[:8]:
            print(f"        {line}", flush=True)
        if len(check.lines) > 8:
            print(f"        ... and {len(check.lines) - 8} more", flush=True)


def print_run(chaos: Chaos, site: Site) -> None:
    clients = chaos.clients
    closes: dict[int, int] = {}
    for c in clients:
        for code, n in c.stats.closes.items():
            closes[code] = closes.get(code, 0) + n
    errors = error_frames(clients)
    print(f"clients: {len(clients)}; socket opens {sum(c.stats.opens for c in clients)}, "
          f"failed opens {sum(c.stats.failed_opens for c in clients)}, closes {closes}, "
          f"moves sent {sum(c.stats.moves_sent for c in clients)}, error frames {errors}",
          flush=True)
    for proc in site.all:
        count, examples = proc.errors()
        print(f"server log {proc.name}: {count} error lines (started {proc.starts}x)", flush=True)
        for line in examples[:3]:
            print(f"        {line[:200]}", flush=True)


def run(args: argparse.Namespace, env: dict[str, str], log_dir: Path,
        redis: procs.RedisServer) -> int:
    from django.conf import settings
    from django.db import close_old_connections

    site = Site(env, log_dir, redis)
    rng = random.Random(args.seed)
    chaos = None
    try:
        site.start()
        began = time.monotonic()
        seated, staff = open_tables(args.tables, rng, site)
        close_old_connections()
        procs.log(f"{len(seated)} tables, {sum(len(s.clients) for s in seated)} people, "
                  f"open in {time.monotonic() - began:.1f} s; Daphne on {site.ports}")
        chaos = Chaos(args, site, seated, staff, settings.SESSION_COOKIE_NAME)

        async def drive() -> None:
            try:
                await chaos.run()
            finally:
                await chaos.stop_clients()

        asyncio.run(drive())
    finally:
        site.stop()
    deaths = list(site.deaths.values())
    died = Check("no server process exited by itself", not deaths, f"{len(deaths)} exited",
                 deaths)
    checks = [*chaos.checks, check_faults(chaos.faults, args.faults), died,
              check_answers(chaos.clients),
              *chaos.progress, *check_records(seated), *check_coins(seated)]
    print()
    print_run(chaos, site)
    print()
    print_checks(checks)
    print(f"\nserver logs: {log_dir}", flush=True)
    return 0 if all(c.ok for c in checks) else 1


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    database_url = procs.require_postgres(os.environ.get("DATABASE_URL"))
    log_dir = Path(tempfile.mkdtemp(prefix="chaos-"))
    redis = procs.RedisServer(log_dir)
    redis.start()
    try:
        with procs.fresh_database(database_url, PREFIX, keep=args.keep_db) as db_url:
            env = procs.site_env(db_url, redis.url, log_dir)
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
