"""The seats' shares reach every page through the table socket, in each person's language,
and follow the match: the state of the version that ends it counts it."""

from __future__ import annotations

import pytest

from apps.accounts.services import set_language
from tests.socket_client import Socket, db

from .conftest import block_table, finish_match, make_people, set_record

pytestmark = pytest.mark.django_db(transaction=True)


def _setup():
    people = make_people()
    set_language(user=people["ana"], language="es")
    set_record(people["host"], finished=4, abandoned=0)
    set_record(people["ana"], finished=9, abandoned=1)
    table = block_table(people, ("host", "ana"))
    return people, table


async def test_the_seats_carry_the_shares_and_follow_the_match():
    people, table = await db(_setup)()
    host = Socket(f"/ws/table/{table.pk}/", people["host"])
    ana = Socket(f"/ws/table/{table.pk}/", people["ana"])
    assert await host.connect() and await ana.connect()
    first = (await host.state())["state"]["seats"]
    assert first[0]["fairplay"] is None and first[1]["fairplay"] == 90
    assert first[1]["fairplay_label"] == "Fair play: finished 90% of 10 matches."
    theirs = (await ana.state())["state"]["seats"]
    assert theirs[1]["fairplay_label"] == "Juego limpio: terminó el 90% de 10 partidas."

    await db(finish_match)(table)
    over = await host.until(lambda m: m["type"] == "state" and m["state"]["match"]["over"])
    assert over["state"]["seats"][0]["fairplay"] == 100  # 5 of 5: judged now
    assert over["state"]["seats"][1]["fairplay"] == 90   # 10 of 11
    over = await ana.until(lambda m: m["type"] == "state" and m["state"]["match"]["over"])
    assert "11 partidas" in over["state"]["seats"][1]["fairplay_label"]
    for sock in (host, ana):
        await sock.close()
