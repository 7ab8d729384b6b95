"""``python -m tools.loadtest``: the table socket under load, and a bare relay beside it.

    DATABASE_URL=postgres://... REDIS_URL=redis://... \\
        python -m tools.loadtest --tables N --think 2 --seconds 45 [--webs 2] \\
        [--steps 10,50,100,200,400]

Starts its own Daphne process(es) on a fresh database (created on DATABASE_URL's server, and
dropped at the end) and REDIS_URL, opens N started ``partners`` tables with four socket clients
each (with ``--webs 2`` two Daphnes, each table's seats split 2+2 across them), and has the
seat to play send a random legal move after about ``--think`` seconds. Then the same clients
play the same way against a bare Channels relay (``tools.relay``) in the same Daphnes,
on the same channel layer, with frames of the same size. Each step prints one row; the run
stops after the first step whose p99 passes 2 s and ends with a markdown table.

Clients run in separate processes (``--clients``, by default one per 800 sockets), so the
load generator's CPU is measured apart from the server's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from tools import probe, procs

PREFIX = "load"
P99_LIMIT = 2.0
SOCKETS_PER_CLIENT_PROCESS = 800
#: A client process above this share of one core is itself a bottleneck.
CLIENT_SATURATED = 0.85
#: After "stop": moves already sent still land before the final sync.
DRAIN_SECONDS = 2.0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tools.loadtest",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--steps", type=lambda s: [int(x) for x in s.split(",") if x],
                        help="table counts to step through (overrides --tables), e.g. "
                             "10,50,100,200,400; stops after the first p99 above 2 s")
    parser.add_argument("--think", type=float, default=2.0, help="seconds before a move")
    parser.add_argument("--seconds", type=float, default=45.0, help="measured window")
    parser.add_argument("--webs", type=int, default=1, choices=(1, 2, 4))
    parser.add_argument("--turn-seconds", type=int, default=45,
                        help="the tables' clock (quick play's 45 s by default: every move sets "
                             "a timer, as at a real table); 0 for none")
    parser.add_argument("--clients", type=int, default=0,
                        help="client processes (0: one per 800 sockets)")
    parser.add_argument("--no-relay", action="store_true", help="skip the relay comparison")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep-db", action="store_true")
    parser.add_argument("--client-worker", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


# -- the client processes ----------------------------------------------------------------------

class ClientProcess:
    """A child running :func:`client_worker`: one JSON command a line in, one answer out."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tools.loadtest", "--client-worker"],
            cwd=procs.ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send(self, command: dict) -> None:
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()

    def answer(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"client process {self.pid} exited ({self.proc.wait()})")
        return json.loads(line)

    def close(self) -> None:
        try:
            self.send({"cmd": "close"})
            self.answer()
            self.proc.wait(timeout=30)
        except (OSError, RuntimeError, subprocess.TimeoutExpired, ValueError):
            self.proc.kill()
            self.proc.wait()


async def client_worker() -> int:
    """Holds the sockets of whole tables, so a move and its four receipts share one clock."""
    loop = asyncio.get_running_loop()
    commands: asyncio.Queue = asyncio.Queue()

    def read() -> None:
        for line in sys.stdin:
            loop.call_soon_threadsafe(commands.put_nowait, json.loads(line))
        loop.call_soon_threadsafe(commands.put_nowait, {"cmd": "close"})

    threading.Thread(target=read, daemon=True).start()

    def answer(payload: dict) -> None:
        sys.stdout.write(json.dumps(payload) + "\n")
        sys.stdout.flush()

    clients: list[probe.SeatClient] = []
    watches: dict[int, probe.TableWatch] = {}
    marks: dict[str, float] = {}
    counts: dict[str, tuple[int, int, int]] = {}

    def totals() -> tuple[int, int, int]:
        return (sum(c.stats.frames for c in clients),
                sum(c.stats.state_frames for c in clients),
                sum(c.stats.state_bytes for c in clients))

    while True:
        cmd = await commands.get()
        kind = cmd["cmd"]
        if kind == "connect":
            for raw in cmd["seats"]:
                spec = probe.SeatSpec(**raw)
                watch = watches.setdefault(spec.table_id,
                                           probe.TableWatch(spec.table_id, [0, 1, 2, 3]))
                rng = random.Random(f"{cmd['seed']}-{spec.table_id}-{spec.seat}")
                clients.append(probe.SeatClient(spec, watch, rng))
            # Open in batches: a thousand handshakes at once measure only the accept queue.
            for start in range(0, len(clients), 50):
                batch = clients[start:start + 50]
                for client in batch:
                    client.start()
                await asyncio.gather(*(c.wait_state(30) for c in batch))
            answer({"event": "connected", "ok": sum(c.state is not None for c in clients),
                    "of": len(clients)})
        elif kind == "play":
            for client in clients:
                client.playing = True
                client._consider()
            answer({"event": "playing"})
        elif kind == "mark":
            marks["from"] = loop.time()
            counts["from"] = totals()
            for watch in watches.values():
                watch.recording = True
            answer({"event": "marked"})
        elif kind == "stop":
            marks["until"] = loop.time()
            counts["until"] = totals()
            for client in clients:
                client.playing = False
            answer({"event": "stopped"})
        elif kind == "sync":
            await asyncio.gather(*(c.sync(10) for c in clients))
            expected = {int(k): v for k, v in cmd.get("versions", {}).items()}
            if not expected:  # the relay keeps no table: its newest frame is the reference
                for c in clients:
                    expected[c.spec.table_id] = max(expected.get(c.spec.table_id, -1),
                                                    c.version)
            deadline = loop.time() + 10
            while loop.time() < deadline and any(
                    c.version < expected.get(c.spec.table_id, -1) for c in clients):
                await asyncio.sleep(0.1)
            answer({"event": "report", **report(clients, watches, marks, counts, expected)})
        elif kind == "close":
            await asyncio.gather(*(c.stop() for c in clients))
            answer({"event": "closed"})
            return 0


def report(clients, watches, marks, counts, expected) -> dict:
    since, until = marks["from"], marks["until"]
    latencies, unseen, sent, seen = [], 0, 0, 0
    conflicts: list[str] = []
    missed_pairs, seats_missing = 0, 0
    for watch in watches.values():
        got, lost = watch.latencies(since, until)
        latencies += got
        unseen += lost
        sent += sum(1 for t in watch.sent.values() if since <= t <= until)
        seen += watch.moves_first_seen(since, until)
        conflicts += watch.conflicts
        for missing in watch.missed_versions().values():
            missed_pairs += missing
            seats_missing += missing > 0
    errors: dict[str, int] = {}
    closes: dict[str, int] = {}
    for c in clients:
        for code, n in c.stats.errors.items():
            errors[code] = errors.get(code, 0) + n
        for code, n in c.stats.closes.items():
            closes[str(code)] = closes.get(str(code), 0) + n
    (f0, s0, b0), (f1, s1, b1) = counts["from"], counts["until"]
    return {
        "latencies": latencies, "unseen": unseen, "sent": sent, "seen": seen,
        "conflicts": conflicts[:5], "conflict_count": len(conflicts),
        "missed_pairs": missed_pairs, "seats_missing": seats_missing,
        "behind": [c.summary() for c in clients
                   if c.version < expected.get(c.spec.table_id, -1)][:5],
        "behind_count": sum(c.version < expected.get(c.spec.table_id, -1) for c in clients),
        "frames": f1 - f0, "state_frames": s1 - s0, "state_bytes": b1 - b0,
        "window": until - since, "errors": errors, "closes": closes,
        "reconnects": sum(max(0, c.stats.opens - 1) for c in clients),
        "failed_opens": sum(c.stats.failed_opens for c in clients),
        "open_at_end": sum(c.is_open for c in clients),
    }


# -- one phase ---------------------------------------------------------------------------------

@dataclass
class Phase:
    kind: str
    tables: int
    sockets: int
    window: float = 0.0
    db_moves: int | None = None
    client_moves: int = 0
    sent: int = 0
    latencies: list[float] = field(default_factory=list)
    unseen: int = 0
    frames: int = 0
    frame_bytes: float = 0.0
    lost: int = 0
    missed_pairs: int = 0
    seats_missing: int = 0
    twice: int = 0
    gaps: int = 0
    conflicts: list[str] = field(default_factory=list)
    errors: dict = field(default_factory=dict)
    closes: dict = field(default_factory=dict)
    reconnects: int = 0
    log_errors: dict = field(default_factory=dict)
    log_examples: list[str] = field(default_factory=list)
    cpu: dict = field(default_factory=dict)
    #: Cores used by each Redis server during the window, by the roles it serves.
    redis_roles: dict = field(default_factory=dict)
    machine: float = 0.0
    behind: list = field(default_factory=list)

    @property
    def moves_per_s(self) -> float:
        n = self.db_moves if self.db_moves is not None else self.client_moves
        return n / self.window if self.window else 0.0

    def ms(self, p: float) -> float:
        return pct(self.latencies, p) * 1000

    @property
    def max_ms(self) -> float:
        return max(self.latencies) * 1000 if self.latencies else float("nan")

    @property
    def p99(self) -> float:
        return pct(self.latencies, 0.99)

    @property
    def frames_per_s(self) -> float:
        return self.frames / self.window if self.window else 0.0

    def web_cpu(self) -> float:
        return sum(v["cpu"] for k, v in self.cpu.items() if k.startswith("daphne"))

    def cpu_per_frame(self) -> float:
        return self.web_cpu() / self.frames_per_s if self.frames_per_s else float("nan")

    def client_cpu(self) -> list[float]:
        return [v["cpu"] for k, v in self.cpu.items() if k.startswith("client")]

    def server_parts(self) -> dict[str, float]:
        """Cores used by each part of the site (web processes together), during the window:
        the relay needs only its web processes and Redis; the club all of them."""
        parts = {"web": self.web_cpu()}
        names = ("redis",) if self.kind == "relay" else ("postgres", "redis", "worker", "beat")
        parts.update({name: self.cpu[name]["cpu"] for name in names if name in self.cpu})
        return parts

    def ms_per_move(self, part: str | None = None) -> float:
        """CPU milliseconds per applied move (the relay's: per move relayed), of one part of
        the site or (None) of all of it."""
        parts = self.server_parts()
        used = sum(parts.values()) if part is None else parts.get(part, 0.0)
        return used / self.moves_per_s * 1000 if self.moves_per_s else float("nan")


class LoadTest:
    def __init__(self, args: argparse.Namespace, env: dict[str, str], log_dir: Path) -> None:
        self.args = args
        self.env = env
        self.log_dir = log_dir
        self.webs: list[procs.Proc] = []
        self.ports: list[int] = []
        #: The worker (the tables' timers) and beat (the sweep), as on a real site.
        self.celery: list[procs.Proc] = []
        self.step_no = 0
        self.sessions: dict[int, str] = {}

    def start_webs(self) -> None:
        for i in range(self.args.webs):
            port = procs.free_port()
            web = procs.daphne(port, self.env, self.log_dir, name=f"daphne-{i + 1}",
                               app="tools.relay:application")
            web.start()
            self.webs.append(web)
            self.ports.append(port)
        for web, port in zip(self.webs, self.ports, strict=True):
            if not procs.wait_http(f"http://127.0.0.1:{port}/healthz", 60, web):
                raise SystemExit(f"{web.name} did not start; see {web.stderr_path}")
        self.celery = [procs.worker(self.env, self.log_dir), procs.beat(self.env, self.log_dir)]
        marks = [proc.log_size() for proc in self.celery]
        for proc in self.celery:
            proc.start()
        if not (self.celery[0].wait_log(" ready.", marks[0], 60)
                and self.celery[1].wait_log("beat: Starting", marks[1], 60)):
            raise SystemExit(f"the worker or beat did not start; see {self.log_dir}")
        procs.log(f"{len(self.webs)} Daphne on ports {self.ports}, a worker and beat")

    def stop(self) -> None:
        for proc in (*self.celery, *self.webs):
            proc.stop()

    def open_tables(self, count: int) -> list[probe.OpenTable]:
        from django.db import close_old_connections

        self.step_no += 1
        began = time.monotonic()
        people = probe.make_players(4 * count, f"{PREFIX}{self.step_no}-")
        self.sessions = {p.pk: probe.session_cookie(p) for p in people}
        tables = [probe.open_table(people=people[4 * t:4 * t + 4], preset="partners",
                                   options={"turn_seconds": self.args.turn_seconds or None})
                  for t in range(count)]
        procs.analyze()
        close_old_connections()
        procs.log(f"{count} tables open in {time.monotonic() - began:.1f} s")
        return tables

    def seat_specs(self, tables: list[probe.OpenTable], kind: str, size: int) -> list[list[dict]]:
        from django.conf import settings

        specs = []
        for table in tables:
            seats = []
            for seat, user_id in enumerate(table.seats):
                port = self.ports[seat * len(self.ports) // 4]
                path = (f"/ws/table/{table.table_id}/" if kind == "product"
                        else f"/ws/relay/{table.table_id}/?seat={seat}&size={size}")
                seats.append(probe.SeatSpec(
                    table_id=table.table_id, seat=seat, session=self.sessions[user_id],
                    urls=[f"ws://127.0.0.1:{port}{path}"], origin=f"http://127.0.0.1:{port}",
                    think=self.args.think, host=seat == 0, deal=True, rematch=True,
                    cookie_name=settings.SESSION_COOKIE_NAME).to_json())
            specs.append(seats)
        return specs

    def run_phase(self, kind: str, tables: list[probe.OpenTable], size: int = 0) -> Phase:
        from django.conf import settings
        from django.db import close_old_connections
        from django.utils import timezone

        args = self.args
        phase = Phase(kind, len(tables), 4 * len(tables))
        specs = self.seat_specs(tables, kind, size)
        n_clients = args.clients or max(1, math.ceil(phase.sockets / SOCKETS_PER_CLIENT_PROCESS))
        n_clients = min(n_clients, len(tables))
        workers = [ClientProcess() for _ in range(n_clients)]
        try:
            for i, worker in enumerate(workers):
                seats = [s for table in specs[i::n_clients] for s in table]
                worker.send({"cmd": "connect", "seats": seats, "seed": args.seed})
            ok = [w.answer() for w in workers]
            connected = sum(a["ok"] for a in ok)
            if connected < phase.sockets:
                procs.log(f"{kind}: only {connected} of {phase.sockets} sockets got a state")
            for worker in workers:
                worker.send({"cmd": "play"})
            for worker in workers:
                worker.answer()
            time.sleep(args.think)  # the first moves of every table would all start at once
            offsets = {web.name: web.log_size() for web in self.webs}
            database = settings.DATABASES["default"]["NAME"]
            pids = {web.name: [web.pid] for web in self.webs}
            pids.update({proc.name: [proc.pid] for proc in self.celery})
            pids.update({f"client-{i + 1}": [w.pid] for i, w in enumerate(workers)})
            pids["postgres"] = procs.postgres_backends(database)
            window = procs.CpuWindow()
            postmaster = procs.parent_pid(pids["postgres"][0]) if pids["postgres"] else None
            if postmaster is not None:
                window.reapers["postgres"] = postmaster
            servers = redis_servers(self.env)
            redis0 = {role: procs.redis_cpu(url) for role, url in servers.items()}
            window.begin(pids)
            t0 = timezone.now()
            for worker in workers:
                worker.send({"cmd": "mark"})
            for worker in workers:
                worker.answer()
            time.sleep(args.seconds)
            for worker in workers:
                worker.send({"cmd": "stop"})
            for worker in workers:
                worker.answer()
            t1 = timezone.now()
            phase.cpu = window.end({"postgres": procs.postgres_backends(database)})
            phase.machine = window.machine
            seconds = (t1 - t0).total_seconds()
            for role, url in servers.items():
                (redis_pid, before), (_pid, after) = redis0[role], procs.redis_cpu(url)
                if before is None or after is None:
                    continue
                part = {"cpu": (after - before) / seconds,
                        "rss_mb": procs.rss_mb(redis_pid) or 0.0}
                phase.redis_roles[role] = part["cpu"]
                total = phase.cpu.setdefault("redis", {"cpu": 0.0, "rss_mb": 0.0})
                total["cpu"] += part["cpu"]
                total["rss_mb"] += part["rss_mb"]
            time.sleep(DRAIN_SECONDS)
            versions = self.versions(tables) if kind == "product" else {}
            for worker in workers:
                worker.send({"cmd": "sync", "versions": versions})
            reports = [w.answer() for w in workers]
        finally:
            for worker in workers:
                worker.close()
        for rep in reports:
            phase.latencies += rep["latencies"]
            phase.unseen += rep["unseen"]
            phase.sent += rep["sent"]
            phase.client_moves += rep["seen"]
            phase.frames += rep["frames"]
            phase.frame_bytes += rep["state_bytes"]
            phase.lost += rep["behind_count"]
            phase.behind += rep["behind"]
            phase.missed_pairs += rep["missed_pairs"]
            phase.seats_missing += rep["seats_missing"]
            phase.twice += rep["conflict_count"]
            phase.conflicts += rep["conflicts"]
            phase.reconnects += rep["reconnects"]
            for key in ("errors", "closes"):
                for code, n in rep[key].items():
                    getattr(phase, key)[code] = getattr(phase, key).get(code, 0) + n
        phase.window = statistics.mean(r["window"] for r in reports)
        states = sum(r["state_frames"] for r in reports)
        phase.frame_bytes = phase.frame_bytes / states if states else 0.0
        for web in self.webs:
            count, examples = web.errors(offsets[web.name])
            phase.log_errors[web.name] = count
            phase.log_examples += [f"{web.name}: {line}" for line in examples]
        if kind == "product":
            self.check_database(phase, tables, t0, t1)
        close_old_connections()
        return phase

    def versions(self, tables: list[probe.OpenTable]) -> dict[int, int]:
        from apps.tables.models import Table

        ids = [t.table_id for t in tables]
        return dict(Table.objects.filter(pk__in=ids).values_list("pk", "version"))

    def check_database(self, phase: Phase, tables, t0, t1) -> None:
        from django.db.models import Count

        from apps.tables.models import Move

        ids = [t.table_id for t in tables]
        moves = Move.objects.filter(round__match__table_id__in=ids)
        phase.db_moves = moves.filter(created_at__gte=t0, created_at__lt=t1).count()
        phase.twice += (moves.values("round_id", "ply").annotate(n=Count("id"))
                        .filter(n__gt=1).count())
        plies: dict[int, list[int]] = {}
        for round_id, ply in moves.order_by("round_id", "ply").values_list("round_id", "ply"):
            plies.setdefault(round_id, []).append(ply)
        phase.gaps = sum(p != list(range(len(p))) for p in plies.values())


# -- output ------------------------------------------------------------------------------------

def fmt_cpu(phase: Phase) -> str:
    parts = [f"{name} {v['cpu'] * 100:.0f}% {v['rss_mb']:.0f}MB"
             for name, v in phase.cpu.items()]
    return ", ".join(parts) + f"; machine {phase.machine * 100:.0f}% of 2 cores"


def redis_servers(env: dict[str, str]) -> dict[str, str]:
    """One URL per Redis server the site uses, named by the roles it serves (the settings
    REDIS_LAYER_URL, REDIS_STATE_URL and CELERY_BROKER_URL may put a role on a server of its
    own; docs/capacity.md), so each server's CPU is read once and told apart."""
    base = env["REDIS_URL"]
    roles = {"cache": base, "broker": env.get("CELERY_BROKER_URL") or base,
             "layer": env.get("REDIS_LAYER_URL") or base,
             "state": env.get("REDIS_STATE_URL") or base}
    servers: dict[str, tuple[str, list[str]]] = {}
    for role, url in roles.items():
        parts = urlsplit(url)
        key = parts.path if parts.scheme == "unix" else f"{parts.hostname}:{parts.port or 6379}"
        servers.setdefault(key, (url, []))[1].append(role)
    return {"+".join(names): url for url, names in servers.values()}


def print_phase(phase: Phase) -> None:
    db = f"{phase.moves_per_s:.1f}" if phase.db_moves is not None else "-"
    print(f"{phase.tables:>5} {phase.kind:<7} moves/s {db:>6} (clients saw "
          f"{phase.client_moves / phase.window:.1f}, sent {phase.sent / phase.window:.1f}) | "
          f"move->every seat p50 {phase.ms(0.5):.0f} p99 {phase.ms(0.99):.0f} "
          f"max {phase.max_ms:.0f} ms (never reached all 4: {phase.unseen}) | "
          f"frames/s {phase.frames_per_s:.0f} ({phase.frame_bytes:.0f} B) | "
          f"lost {phase.lost}, versions missed {phase.missed_pairs} on {phase.seats_missing} "
          f"seats | twice {phase.twice}, gaps {phase.gaps} | "
          f"log errors {sum(phase.log_errors.values())}", flush=True)
    print(f"      cpu/rss: {fmt_cpu(phase)}", flush=True)
    parts = ", ".join(f"{name} {phase.ms_per_move(name):.2f}" for name in phase.server_parts())
    print(f"      CPU ms per move: all {phase.ms_per_move():.2f} ({parts})", flush=True)
    if len(phase.redis_roles) > 1 and phase.moves_per_s:
        roles = ", ".join(f"{role} {cores / phase.moves_per_s * 1000:.3f}"
                          for role, cores in phase.redis_roles.items())
        print(f"      Redis CPU ms per move by server: {roles}", flush=True)
    extra = []
    if phase.errors:
        extra.append(f"error frames {phase.errors}")
    if phase.reconnects or set(phase.closes) - {"1000"}:
        extra.append(f"reconnects {phase.reconnects}, closes {phase.closes}")
    if extra:
        print("      " + "; ".join(extra), flush=True)
    for line in phase.log_examples[:5]:
        print(f"      log: {line[:200]}", flush=True)
    for line in phase.conflicts[:3]:
        print(f"      conflict: {line}", flush=True)
    for row in phase.behind[:3]:
        print(f"      behind: {row}", flush=True)
    saturated = [c for c in phase.client_cpu() if c > CLIENT_SATURATED]
    if saturated:
        print(f"      WARNING: a client process used {max(saturated) * 100:.0f}% of a core; "
              f"rerun with --clients {len(phase.client_cpu()) + 1}", flush=True)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.1f}x" if b and not math.isnan(a) and not math.isnan(b) else "-"


def summary(rows: list[tuple[Phase, Phase | None]]) -> str:
    head = ("| tables | sockets | moves/s (DB) | move → every seat p50 / p99 / max ms | frames/s "
            "| states lost | applied twice | log errors | web CPU | client CPU "
            "| relay moves/s | relay p50 / p99 / max ms | relay web CPU "
            "| ratio p50 / p99 | ratio web CPU per frame "
            "| CPU ms per move: web / all (relay) | ratio web / all |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for product, relay in rows:
        line = (f"| {product.tables} | {product.sockets} | {product.moves_per_s:.1f} | "
                f"{product.ms(0.5):.0f} / {product.ms(0.99):.0f} / {product.max_ms:.0f} | "
                f"{product.frames_per_s:.0f} | {product.lost + product.seats_missing} | "
                f"{product.twice + product.gaps} | {sum(product.log_errors.values())} | "
                f"{product.web_cpu() * 100:.0f}% | "
                f"{max(product.client_cpu(), default=0) * 100:.0f}% | ")
        if relay is not None:
            line += (f"{relay.moves_per_s:.1f} | "
                     f"{relay.ms(0.5):.0f} / {relay.ms(0.99):.0f} / {relay.max_ms:.0f} | "
                     f"{relay.web_cpu() * 100:.0f}% | "
                     f"{ratio(product.ms(0.5), relay.ms(0.5))} / "
                     f"{ratio(product.p99, relay.p99)} | "
                     f"{ratio(product.cpu_per_frame(), relay.cpu_per_frame())} | "
                     f"{product.ms_per_move('web'):.2f} / {product.ms_per_move():.2f} "
                     f"({relay.ms_per_move('web'):.2f} / {relay.ms_per_move():.2f}) | "
                     f"{ratio(product.ms_per_move('web'), relay.ms_per_move('web'))} / "
                     f"{ratio(product.ms_per_move(), relay.ms_per_move())} |")
        else:
            line += (f"- | - | - | - | - | {product.ms_per_move('web'):.2f} / "
                     f"{product.ms_per_move():.2f} | - |")
        lines.append(line)
    return "\n".join(lines)


def run(args: argparse.Namespace, env: dict[str, str], log_dir: Path) -> int:
    test = LoadTest(args, env, log_dir)
    steps = args.steps or [args.tables]
    rows: list[tuple[Phase, Phase | None]] = []
    print(f"think {args.think} s, window {args.seconds} s, {args.webs} Daphne, "
          f"turn clock {args.turn_seconds or 'none'}, channel layer {layer_name()}, "
          f"redis {env['REDIS_URL']}, loop {procs.loop_seconds():.2f} s", flush=True)
    try:
        test.start_webs()
        for count in steps:
            tables = test.open_tables(count)
            product = test.run_phase("product", tables)
            print_phase(product)
            relay = None
            if not args.no_relay:
                relay = test.run_phase("relay", tables, size=round(product.frame_bytes))
                print_phase(relay)
            rows.append((product, relay))
            if not product.p99 <= P99_LIMIT:  # NaN too: no move reached every seat
                print(f"p99 {product.p99 * 1000:.0f} ms passed {P99_LIMIT:.0f} s at {count} "
                      "tables: stopping", flush=True)
                break
    finally:
        test.stop()
    print()
    print(summary(rows))
    print(f"\nserver logs: {log_dir}")
    return 0


def layer_name() -> str:
    from django.conf import settings

    return settings.CHANNEL_LAYERS["default"]["BACKEND"].rsplit(".", 1)[-1]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.client_worker:
        return asyncio.run(client_worker())
    database_url = procs.require_postgres(os.environ.get("DATABASE_URL"))
    redis_url = os.environ.get("REDIS_URL", "")
    if urlsplit(redis_url).scheme not in ("redis", "rediss", "unix"):
        raise SystemExit("REDIS_URL must point at Redis (redis://host:port/db); use a Redis of "
                         "the load test's own: other Celery workers on it would take its timers")
    procs.raise_open_files()
    log_dir = Path(tempfile.mkdtemp(prefix="loadtest-"))
    with procs.fresh_database(database_url, PREFIX, keep=args.keep_db) as db_url:
        env = procs.site_env(db_url, redis_url, log_dir)
        os.environ.update(env)
        import django

        django.setup()
        try:
            return run(args, env, log_dir)
        finally:
            from django.db import connections

            connections.close_all()


if __name__ == "__main__":
    sys.exit(main())
