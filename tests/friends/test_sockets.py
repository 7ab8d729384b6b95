"""A blocked person's chat never reaches the blocker's socket, and a block acts at once: the
real ASGI stack and Redis channel layer."""

from __future__ import annotations

import pytest

from apps.friends import services
from tests.moderation.conftest import make_people, seat_table
from tests.socket_client import Socket, db

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def people(transactional_db):
    return make_people()


def texts(frame: dict) -> list[str]:
    return [line["text"] for line in frame["state"]["chat"]]


async def test_a_blocked_persons_lines_do_not_reach_the_blocker(people):
    table = await db(seat_table)(people)
    socks = {name: Socket(f"/ws/table/{table.pk}/", people[name])
             for name in ("ana", "bea", "caio")}
    for sock in socks.values():
        assert await sock.connect()
        await sock.state()
    await socks["bea"].send({"type": "chat", "text": "hola"})
    for sock in socks.values():
        await sock.until(lambda m: m["type"] == "state" and "hola" in texts(m))

    # ana blocks bea: her table moves on at once, and bea's line leaves her chat only.
    await db(services.block)(user=people["ana"], person_id=people["bea"].pk)
    got = await socks["ana"].until(lambda m: m["type"] == "state"
                                   and {"kind": "chat_view"} in m["events"])
    assert texts(got) == []
    got = await socks["caio"].until(lambda m: m["type"] == "state"
                                    and {"kind": "chat_view"} in m["events"])
    assert texts(got) == ["hola"]

    await socks["bea"].send({"type": "chat", "text": "¿me oyes?"})
    await socks["bea"].send({"type": "phrase", "phrase": "lucky"})
    await socks["caio"].send({"type": "chat", "text": "yo sí"})
    last = await socks["caio"].until(lambda m: m["type"] == "state" and "yo sí" in texts(m))
    seen = await socks["ana"].until(lambda m: m["type"] == "state"
                                    and m["version"] >= last["version"])
    assert texts(seen) == ["yo sí"]
    # Nothing bea said reached ana's socket after the block, in any frame (the raw text).
    first = next(i for i, raw in enumerate(socks["ana"].raw) if '"chat_view"' in raw)
    after_block = socks["ana"].raw[first:]
    assert not any(words in raw for raw in after_block
                   for words in ("hola", "¿me oyes?", "¡Qué suerte!", "What luck!"))
    for sock in socks.values():
        await sock.close()


async def test_a_watchers_blocks_apply_to_the_chat_they_watch(people):
    """As at a seat (docs/friends.md): from the moment the socket opens, and at once when the
    watcher blocks someone while watching."""
    from apps.tables import selectors

    table = await db(seat_table)(people)
    await db(services.block)(user=people["outsider"], person_id=people["bea"].pk)
    socks = {name: Socket(f"/ws/table/{table.pk}/", people[name])
             for name in ("bea", "caio", "outsider")}
    for sock in socks.values():
        assert await sock.connect()
        await sock.state()
    await socks["bea"].send({"type": "chat", "text": "hola"})
    await socks["caio"].send({"type": "chat", "text": "buenas"})
    await socks["bea"].send({"type": "phrase", "phrase": "lucky"})
    done = await socks["caio"].until(lambda m: m["type"] == "state" and len(texts(m)) == 3)
    seen = await socks["outsider"].until(lambda m: m["type"] == "state"
                                         and m["version"] >= done["version"])
    assert seen["state"]["you"]["watching"] and texts(seen) == ["buenas"]
    page = await db(selectors.table_state)(table_id=table.pk, user=people["outsider"])
    assert [line["text"] for line in page["chat"]] == ["buenas"]

    # Blocked while watching: caio's lines leave the watcher's chat at once, nobody else's.
    await db(services.block)(user=people["outsider"], person_id=people["caio"].pk)
    got = await socks["outsider"].until(lambda m: m["type"] == "state"
                                        and {"kind": "chat_view"} in m["events"])
    assert texts(got) == []
    other = await socks["caio"].until(lambda m: m["type"] == "state"
                                      and m["version"] >= got["version"])
    assert len(texts(other)) == 3
    assert not any(words in raw for raw in socks["outsider"].raw
                   for words in ("hola", "¡Qué suerte!", "What luck!"))
    for sock in socks.values():
        await sock.close()
