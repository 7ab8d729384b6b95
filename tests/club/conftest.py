from __future__ import annotations

import random

import pytest
from django.contrib.auth import get_user_model

from apps.club.selectors import wallet_problems
from apps.tables import services
from apps.tables.models import Table
from tests.tables.conftest import play_random_move, position


@pytest.fixture
def make_user(db):
    def make(name: str):
        return get_user_model().objects.create_user(username=name, password="pw-" + name * 2)
    return make


@pytest.fixture
def people(make_user):
    """host, three friends and an outsider: each with the welcome grant."""
    return {name: make_user(name) for name in ("host", "ana", "bea", "caio", "outsider")}


def seat_all(table: Table, people: dict, names=("ana", "bea", "caio")) -> None:
    for name in names:
        services.join_table(user=people[name], table_id=table.pk, code=table.code)


def play_match(table: Table, host, seed: int = 3) -> None:
    """Play the table's match to its end with random legal moves."""
    rng = random.Random(seed)
    while True:
        engine, _, _ = position(table)
        if engine.current is not None:
            play_random_move(table, rng)
        elif engine.over:
            return
        else:
            services.next_round(user=host, table_id=table.pk)


@pytest.fixture
def sound_books(db):
    """Every test here ends with the ledger, the wallets and the escrow agreeing."""
    yield
    assert wallet_problems() == []
