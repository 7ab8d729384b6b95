from __future__ import annotations

import random
import threading
from collections.abc import Callable

import pytest
from django.contrib.auth import get_user_model

from apps.rules.engine import legal_dict
from apps.tables import game, services
from apps.tables.models import Table
from apps.tables.services import ServiceError


@pytest.fixture
def make_user(db):
    def make(name: str):
        return get_user_model().objects.create_user(username=name, password="pw-" + name * 2)
    return make


@pytest.fixture
def people(make_user):
    """host, three friends and an outsider."""
    return {name: make_user(name) for name in ("host", "ana", "bea", "caio", "outsider")}


@pytest.fixture
def full_table(people):
    """A partners table with four people seated, not started."""
    table = services.create_table(host=people["host"], preset="partners", public=True)
    for name in ("ana", "bea", "caio"):
        services.join_table(user=people[name], table_id=table.pk)
    return table


def seat_user(table: Table, seat: int):
    return table.seats.get(index=seat).user


def position(table: Table):
    """The table's match, its current round's number and ply, where the services left it
    (``game.restore``, as they read it). Rebuilding it from every move instead (``game.load``)
    made each move of a test's match cost the whole match so far; test_positions.py compares
    the two on every table."""
    match = Table.objects.get(pk=table.pk).current_match
    engine = game.restore(match)
    return engine, len(engine.rounds) - 1, len(engine.rounds[-1].history)


def play_random_move(table: Table, rng: random.Random):
    engine, rnd_no, ply = position(table)
    rnd = engine.current
    move = legal_dict(*rng.choice(rnd.legal()))
    return services.play_move(user=seat_user(table, rnd.turn), table_id=table.pk,
                              round_number=rnd_no, ply=ply, tile=move.get("play"),
                              end=move.get("end"), is_pass=bool(move.get("pass")))


def race(*calls: tuple[str, Callable[[], object]]) -> list[str]:
    """Start every call at the same instant on its own thread and connection.

    Returns, per call, its name when it went through or the ServiceError code that refused it.
    """
    from django.db import connection

    barrier = threading.Barrier(len(calls))
    results: list[str] = []

    def run(name: str, fn: Callable[[], object]) -> None:
        try:
            barrier.wait()
            fn()
            results.append(name)
        except ServiceError as err:
            results.append(err.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=call) for call in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results
