"""Fair-play fixtures: people, short matches played through the real table services, and
records set by hand where a test needs a share."""

from __future__ import annotations

import random
from datetime import datetime

import pytest
from django.contrib.auth import get_user_model

from apps.accounts.services import set_language
from apps.fairplay.models import Record, Stint
from apps.rules.engine import legal_dict
from apps.tables import game, services
from apps.tables.models import Table

NAMES = ("host", "ana", "bea", "caio", "dani", "outsider")


def make_people() -> dict:
    """Everyone reads English unless a test says otherwise (the site's default is Spanish)."""
    User = get_user_model()
    people = {n: User.objects.create_user(username=n, password="pw-" + n * 2) for n in NAMES}
    for user in people.values():
        set_language(user=user, language="en")
    return people


@pytest.fixture
def people(db):
    return make_people()


def block_table(people: dict, names=("host", "ana", "bea"), *, target: int = 1,
                start: bool = True, **fields) -> Table:
    """A public "block" table (passes write themselves) of these people, host first; target 1
    ends the match with its first round that scores, a high one keeps it going."""
    table = services.create_table(host=people[names[0]], preset="block", players=len(names),
                                  public=True, options={"turn_seconds": None, "target": target},
                                  **fields)
    for name in names[1:]:
        services.join_table(user=people[name], table_id=table.pk)
    if start:
        services.start_match(user=people[names[0]], table_id=table.pk)
    return Table.objects.get(pk=table.pk)


def engine_of(table: Table):
    return game.load(Table.objects.get(pk=table.pk).current_match)


def play_one(table: Table, rng: random.Random) -> None:
    """The move of whoever is to play: the person, or the table for a bot or a stand-in."""
    engine = engine_of(table)
    rnd = engine.current
    seat = table.seats.get(index=rnd.turn)
    if seat.played_by_bot:
        fresh = Table.objects.get(pk=table.pk)
        services.act_on_deadline(table_id=table.pk, now=fresh.turn_deadline)
        return
    move = legal_dict(*rng.choice(rnd.legal()))
    services.play_move(user=seat.user, table_id=table.pk, round_number=len(engine.rounds) - 1,
                       ply=len(rnd.history), tile=move.get("play"), end=move.get("end"),
                       is_pass=bool(move.get("pass")))


def finish_round(table: Table, seed: int = 1) -> None:
    rng = random.Random(seed)
    while engine_of(table).current is not None:
        play_one(table, rng)


def finish_match(table: Table, seed: int = 1) -> None:
    rng = random.Random(seed)
    while True:
        engine = engine_of(table)
        if engine.over:
            return
        if engine.current is None:
            host = Table.objects.get(pk=table.pk).host
            services.next_round(user=host, table_id=table.pk)
        else:
            play_one(table, rng)


def counts(user) -> tuple[int, int, int]:
    """(started, finished, abandoned)."""
    record = Record.objects.filter(user=user).first()
    return (0, 0, 0) if record is None else (record.started, record.finished, record.abandoned)


def stint_states(table: Table) -> dict[str, str]:
    match = Table.objects.get(pk=table.pk).current_match
    return {s.user.username: s.state
            for s in Stint.objects.filter(match=match).select_related("user")}


def set_record(user, *, finished: int, abandoned: int, times: list[datetime] = ()) -> Record:
    record, _created = Record.objects.update_or_create(
        user=user, defaults={"started": finished + abandoned, "finished": finished,
                             "abandoned": abandoned,
                             "abandoned_at": [t.isoformat() for t in times]})
    return record
