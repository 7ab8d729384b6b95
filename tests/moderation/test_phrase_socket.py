"""The "phrase" frame over the real ASGI stack and Redis channel layer: every seat reads the
phrase in its own language; refusals are error frames that change nothing."""

from __future__ import annotations

import pytest

from apps.moderation import quick_chat
from apps.tables.models import Table
from tests.socket_client import Socket, db

from .conftest import make_people, seat_table

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def people(transactional_db):
    return make_people()


def _speak(people, languages: dict) -> None:
    for name, language in languages.items():
        profile = people[name].profile
        profile.language = language
        profile.save(update_fields=["language"])


async def test_two_seats_read_the_same_phrase_each_in_their_own_language(people):
    table = await db(seat_table)(people)
    await db(_speak)(people, {"ana": "es", "bea": "pt-br", "caio": "en"})
    socks = {name: Socket(f"/ws/table/{table.pk}/", people[name])
             for name in ("ana", "bea", "caio")}
    for sock in socks.values():
        assert await sock.connect()
        await sock.state()
    await socks["caio"].send({"type": "phrase", "phrase": "thanks_partner", "id": 3})
    heard = {}
    for name, sock in socks.items():
        got = await sock.until(lambda m: m["type"] == "state" and m["state"]["chat"])
        line = got["state"]["chat"][-1]
        heard[name] = (line["text"], line["phrase"], line["seat"], line["name"])
        assert {"kind": "chat", "id": line["id"], "seat": 3, "phrase": "thanks_partner"} \
            in got["events"]
    assert heard == {"ana": ("Gracias, compañero", "thanks_partner", 3, "caio"),
                     "bea": ("Obrigado, parceiro", "thanks_partner", 3, "caio"),
                     "caio": ("Thanks, partner", "thanks_partner", 3, "caio")}
    for sock in socks.values():
        await sock.close()


async def test_refused_phrases_are_error_frames_and_change_nothing(people):
    table = await db(seat_table)(people)
    await db(_speak)(people, {"ana": "en", "outsider": "es"})
    ana = Socket(f"/ws/table/{table.pk}/", people["ana"])
    outsider = Socket(f"/ws/table/{table.pk}/", people["outsider"])
    for sock in (ana, outsider):
        assert await sock.connect()
        await sock.state()
    version = (await db(Table.objects.get)(pk=table.pk)).version
    await ana.send({"type": "phrase", "phrase": "no_such", "id": 1})
    err = await ana.until(lambda m: m["type"] == "error")
    assert (err["code"], err["message"], err["id"]) == ("unknown_phrase",
                                                        "There is no such phrase.", 1)
    await ana.send({"type": "phrase", "phrase": 7, "id": 2})
    err = await ana.until(lambda m: m["type"] == "error")
    assert (err["code"], err["id"]) == ("malformed", 2)
    await outsider.send({"type": "phrase", "phrase": "good_one", "id": 4})
    err = await outsider.until(lambda m: m["type"] == "error")
    assert err["code"] == "not_seated" and "anfitrión" in err["message"]
    assert (await db(Table.objects.get)(pk=table.pk)).version == version
    # The host lets watchers speak: the same frame goes through.
    await db(quick_chat.set_watcher_phrases)(user=people["host"], table_id=table.pk,
                                             allowed=True)
    await outsider.until(lambda m: m["type"] == "state"
                         and m["state"]["you"]["can_phrase"] is True)
    await outsider.send({"type": "phrase", "phrase": "laugh"})
    got = await ana.until(lambda m: m["type"] == "state" and m["state"]["chat"])
    assert got["state"]["chat"][-1]["text"] == "😂" and got["state"]["chat"][-1]["seat"] is None
    for sock in (ana, outsider):
        await sock.close()
