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


async def test_a_ring_lost_while_the_subscription_was_down_is_caught_up(live_people, settings):
    """The page's socket stops hearing its group (as across a Redis restart): the next change
    reaches the page at the web process's next beat anyway, and a ring heard is told once."""
    from channels.layers import get_channel_layer

    from apps.realtime.hub import hub
    from apps.tournaments.notify import group

    settings.PRESENCE_HEARTBEAT_SECONDS = 0.3
    t = await db(new_tournament)(live_people)
    sock = Socket(f"/ws/tournament/{t.pk}/", live_people["ana"])
    assert await sock.connect()
    assert await sock.recv() == {"type": "changed"}
    assert await sock.quiet(1.0) == []  # beats come and go: nothing changed, nothing said
    layer = get_channel_layer()
    channel, = layer.groups[layer._get_group_channel_name(group(t.pk))]
    await layer.group_discard(group(t.pk), channel)
    await db(services.register)(user=live_people["ana"], tournament_id=t.pk)
    assert await sock.recv(timeout=3) == {"type": "changed"}
    assert await sock.quiet(1.0) == []

    await layer.group_add(group(t.pk), channel)  # subscribed again
    await db(services.register)(user=live_people["bea"], tournament_id=t.pk)
    assert await sock.recv(timeout=3) == {"type": "changed"}
    assert await sock.quiet(1.0) == []  # the beat knows the page read it already
    await sock.close()
    assert t.pk not in hub().followers


def test_what_the_page_shows_without_a_version_changes_its_mark(people):
    """A match starting or a round ending at a live table rings without bumping the
    tournament's version: the beat's mark sees those too."""
    from apps.realtime.tournament import live_mark
    from apps.tables.models import Match, Table

    from .conftest import one_on_one, show_up

    t, game = one_on_one(people)
    waiting = live_mark(t.pk)
    show_up(game)
    assert Table.objects.get(pk=game.table_id).state == Table.State.PLAYING
    started = live_mark(t.pk)
    assert started != waiting
    Match.objects.filter(table_id=game.table_id).update(scores=[7, 0])  # a round's end
    scored = live_mark(t.pk)
    assert scored != started and scored[0] == started[0]  # the same tournament version
    assert live_mark(10**9) is None


def changes(page, count: int, within: float = 10) -> None:
    """Wait until the page's socket has said ``changed`` ``count`` times in all."""
    import time

    deadline = time.monotonic() + within
    while sum(f.get("type") == "changed" for f in page.frames) < count:
        assert time.monotonic() < deadline, page.frames
        time.sleep(0.1)


@pytest.mark.postgres
@pytest.mark.slow
def test_a_page_open_through_a_redis_restart_hears_what_changed_meanwhile(live_people, tmp_path,
                                                                         settings):
    """Daphne on PostgreSQL and a redis-server of its own, the page's socket open: Redis is
    killed, the tournament changes while it is down (the ring goes nowhere), Redis comes back
    empty. The page hears "changed" within a few seconds, without reconnecting."""
    from apps.core import doorbell
    from config.env import channel_layers
    from tools.procs import RedisServer

    from ..live import Client, Stack, session_of

    redis = RedisServer(tmp_path)
    redis.start()
    site = Stack(tmp_path / "site", {"REDIS_URL": redis.url,
                                     "PRESENCE_HEARTBEAT_SECONDS": "1"})
    # This process rings the site's layer, as the site's own processes would.
    settings.REDIS_LAYER_URL = redis.url
    settings.CHANNEL_LAYERS = channel_layers(redis.url, prefix=site.prefix)
    doorbell._client = None
    try:
        t = new_tournament(live_people)
        url = site.web("web1")
        page = Client(f"{url}/ws/tournament/{t.pk}/", session_of(live_people["ana"]),
                      url.replace("ws:", "http:"))
        page.wait(lambda f: f.get("type") == "changed", timeout=10)
        services.register(user=live_people["ana"], tournament_id=t.pk)  # heard as ever
        changes(page, 2)

        redis.proc.kill()
        told = len(page.frames)
        services.register(user=live_people["bea"], tournament_id=t.pk)  # rung into the void
        redis.start()
        changes(page, told + 1, within=6)
        assert page.closed is None
        page.close()
    finally:
        doorbell._client = None
        site.stop()
        redis.stop()
