"""The tournament page's socket, ``ws/tournament/<id>/``, as every socket of the site: a ban
closes it (4403), and a ring lost on the way (Redis restarting under the subscription) is
caught up within a few seconds, as at the tables (issue 36)."""

from __future__ import annotations

import pytest

from apps.moderation import services as moderation
from apps.moderation.models import Ban
from apps.tournaments import services
from tests.socket_client import Socket, db

from .conftest import make_people, new_tournament

pytestmark = pytest.mark.django_db(transaction=True)

#: The frame before a ban's close, in the person's language.
BANNED = {"type": "closing", "code": 4403,
          "message": "Tu cuenta está suspendida: por ahora no puedes jugar."}


@pytest.fixture
def live_people(transactional_db):
    from apps.accounts.services import set_language

    people = make_people(("ana", "bea"))
    set_language(user=people["bea"], language="es")
    return people


async def test_a_ban_closes_the_tournament_socket_and_a_banned_person_cannot_open_one(
        live_people):
    t = await db(new_tournament)(live_people)
    sock = Socket(f"/ws/tournament/{t.pk}/", live_people["bea"])
    assert await sock.connect()
    assert await sock.recv() == {"type": "changed"}
    await db(moderation.ban)(actor=live_people["root"], user_id=live_people["bea"].pk, days=1,
                             reason="abuse")
    assert await sock.closing() == (BANNED, 4403)

    # Signed in again before the page loads (the ban ended the sessions): still 4403.
    again = Socket(f"/ws/tournament/{t.pk}/", live_people["bea"])
    assert await again.connect()
    assert await again.closing() == (BANNED, 4403)
    assert await db(Ban.objects.filter(user=live_people["bea"]).exists)()


async def test_the_persons_notices_are_not_the_tournament_pages(live_people):
    """The socket hears its person's group for a ban: their other notices (an invitation)
    are for the other pages, and this one goes on."""
    from apps.core.doorbell import user_notified

    t = await db(new_tournament)(live_people)
    sock = Socket(f"/ws/tournament/{t.pk}/", live_people["ana"])
    assert await sock.connect()
    assert await sock.recv() == {"type": "changed"}
    await db(user_notified)(live_people["ana"].pk, {"kind": "invited", "table": 1})
    await db(services.register)(user=live_people["bea"], tournament_id=t.pk)
    assert await sock.recv() == {"type": "changed"}
    await sock.send({"type": "ping"})
    assert await sock.recv() == {"type": "pong"}
    await sock.close()
