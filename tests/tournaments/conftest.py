"""Tournament fixtures: people with accounts (each with the welcome grant), a staff member who
may run tournaments, a worker for what the tables tell them, and helpers that play a
tournament's tables through the real table services, the way people at the pages would (their
sockets' presence, legal moves)."""

from __future__ import annotations

import importlib
import json
import random
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from apps.club.selectors import wallet_problems
from apps.rules.engine import legal_dict
from apps.tables import game as table_game
from apps.tables import services as tables
from apps.tables.models import Table
from apps.tournaments import follow, selectors, services
from apps.tournaments.models import Game, Tournament
from config.celery import app as celery_app

NAMES = ("ana", "bea", "caio", "dani", "eva", "fabio", "gil", "hugo", "iris")


def make_people(names=NAMES) -> dict:
    User = get_user_model()
    people = {name: User.objects.create_user(username=name, password="pw-" + name * 2)
              for name in names}
    people["root"] = User.objects.create_superuser(username="root", password="pw-rootroot",
                                                   email="root@example.com")
    return people


@pytest.fixture
def people(transactional_db):
    """The tables' hooks run after each commit, as on the site: these tests commit."""
    return make_people()


class Worker:
    """The broker and a free worker, for the tasks ``apps.tournaments.follow`` sends: each
    message is what the broker would carry (its name and JSON arguments) and runs through the
    registered task, at once (a worker with nothing else to do) or, ``held``, when
    :meth:`run` is called (a busy worker)."""

    def __init__(self) -> None:
        self.held = False
        self.queued: list[dict] = []
        self.queues: list[str | None] = []

    def send_task(self, name: str, args=None, kwargs=None, **options) -> None:
        self.queues.append(options.get("queue"))
        self.queued.append(json.loads(json.dumps({"name": name, "kwargs": kwargs or {}})))
        if not self.held:
            self.run()

    def run(self) -> int:
        """Run what is queued, oldest first (and what that queues); how many tasks ran."""
        ran = 0
        while self.queued:
            message = self.queued.pop(0)
            # The worker's autodiscovery imports the apps' tasks modules: this one, here.
            importlib.import_module(message["name"].rpartition(".")[0])
            celery_app.tasks[message["name"]](**message["kwargs"])
            ran += 1
        return ran


@pytest.fixture(autouse=True)
def _fresh_limits():
    """Registrations are limited per person in the cache, which tests share: each starts
    with none counted."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def worker(monkeypatch) -> Worker:
    """What the tables tell a tournament is done by a worker (docs/architecture.md): here, by
    this one."""
    worker = Worker()
    monkeypatch.setattr(follow, "current_app", worker)
    return worker


@pytest.fixture
def books(transactional_db):
    """Every test that uses it ends with the ledger, wallets and escrow agreeing."""
    yield
    assert wallet_problems() == []


def new_tournament(people, **options) -> Tournament:
    now = timezone.now()
    fields = {"name": "Copa", "preset": "block", "players": 2, "format": "swiss",
              "starts_at": now + timedelta(minutes=5), "rounds": 3, "turn_seconds": None,
              "target": 1, "entry": 0, "prize_split": [100]}
    fields.update(options)
    return services.create_tournament(user=people["root"], now=now, **fields)


def register_pair(tournament: Tournament, user, partner) -> None:
    """``user`` names ``partner``, who accepts: the pair is registered (``user`` paid both)."""
    invitation = services.register(user=user, tournament_id=tournament.pk,
                                   partner=partner.profile.display_name)
    services.accept_partner(user=partner, invitation_id=invitation.pk)


def start(tournament: Tournament) -> Tournament:
    services.start(tournament_id=tournament.pk, now=tournament.starts_at)
    return Tournament.objects.get(pk=tournament.pk)


def current_games(tournament: Tournament) -> list[Game]:
    tournament.refresh_from_db()
    return list(Game.objects.filter(round__tournament=tournament,
                                    round__number=tournament.current_round)
                .select_related("table").order_by("position"))


def one_on_one(people, **options) -> tuple[Tournament, Game]:
    """A one-round tournament (``options`` as :func:`new_tournament`'s) that ana and bea
    registered for, started: the tournament and its one game."""
    t = new_tournament(people, rounds=1, **options)
    for person in (people["ana"], people["bea"]):
        services.register(user=person, tournament_id=t.pk)
    t = start(t)
    game, = current_games(t)
    return t, game


def socket_of(game: Game, user) -> str:
    """The channel name of ``user``'s socket at the game's table (:func:`show_up`)."""
    return f"test.{game.table_id}.{user.pk}"


def show_up(game: Game, users=None) -> None:
    """The game's people open its table's page (a socket each)."""
    users = users if users is not None else selectors.seat_order(game)
    for user in users:
        tables.connect(user=user, table_id=game.table_id, channel_name=socket_of(game, user))


def play_out(table_id: int, rng: random.Random) -> None:
    """Play the table's current match to its end with random legal moves (the host deals the
    next round when one ends, as the table would by itself)."""
    while True:
        table = Table.objects.get(pk=table_id)
        match = table.current_match
        engine = table_game.load(match)
        if engine.over:
            return
        rnd = engine.current
        if rnd is None:
            tables.next_round(user=table.host, table_id=table_id)
            continue
        move = legal_dict(*rng.choice(rnd.legal()))
        user = table.seats.get(index=rnd.turn).user
        tables.play_move(user=user, table_id=table_id, round_number=len(engine.rounds) - 1,
                         ply=len(rnd.history), tile=move.get("play"), end=move.get("end"),
                         is_pass=bool(move.get("pass")))


def later() -> object:
    """A moment past every break and limit, for the calls beat would make."""
    return timezone.now() + timedelta(hours=1)
