""""Start with bots" over the table socket: the host's frame, and the refusals."""

from __future__ import annotations

import pytest

from apps.tables import services
from apps.tables.models import Table
from tests.socket_client import Socket, db

pytestmark = pytest.mark.django_db(transaction=True)


async def test_the_host_starts_with_a_second_person_and_bots_take_the_other_seats(people):
    table = await db(services.create_table)(host=people["host"], preset="partners",
                                            allow_bots=True, public=True, bot_level="easy")
    host = Socket(f"/ws/table/{table.pk}/", people["host"])
    assert await host.connect()
    before = (await host.state())["version"]
    # Alone, the host is refused with the reason, and nothing changes.
    await host.send({"type": "host", "action": "start_with_bots", "id": 1})
    error = await host.until(lambda m: m["type"] == "error")
    assert error["code"] == "too_few_people" and error["message"] and error["id"] == 1
    assert (await db(Table.objects.get)(pk=table.pk)).version == before
    await db(services.join_table)(user=people["ana"], table_id=table.pk)
    ana = Socket(f"/ws/table/{table.pk}/", people["ana"])
    assert await ana.connect()
    await ana.state()
    await ana.send({"type": "host", "action": "start_with_bots"})
    assert (await ana.until(lambda m: m["type"] == "error"))["code"] == "not_host"
    await host.send({"type": "host", "action": "start_with_bots"})
    frame = await host.until(lambda m: m["type"] == "state"
                             and m["state"]["table"]["state"] == "playing")
    state = frame["state"]
    assert [s["bot"] for s in state["seats"]] == [False, False, True, True]
    assert state["table"]["bot_filled"] is True and len(state["view"]["hand"]) == 7
    assert any(e["kind"] == "bot_filled" for e in frame["events"])
    seen = await ana.until(lambda m: m["type"] == "state"
                           and m["state"]["table"]["state"] == "playing")
    assert seen["state"]["table"]["bot_filled"] is True
    await host.send({"type": "host", "action": "start_with_bots"})
    assert (await host.until(lambda m: m["type"] == "error"))["code"] == "started"
    await ana.close()
    await host.close()
