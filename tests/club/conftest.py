from __future__ import annotations

import random

import pytest

from apps.club.selectors import wallet_problems
from apps.tables import services
from apps.tables.models import Table
from tests.tables import conftest as tables_conftest
from tests.tables.conftest import play_random_move, position

# The same people as the tables tests (each new account gets the welcome grant).
make_user = tables_conftest.make_user
people = tables_conftest.people


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
