"""Who may call each moderation service: anonymous, player, host, moderator, superuser.

Every refused call changes nothing and writes no log row; every allowed staff action writes
exactly one.
"""

from __future__ import annotations

import io
import re
from datetime import timedelta
from urllib.parse import quote

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.utils import timezone

from apps.moderation import quick_chat
from apps.moderation import services as mod
from apps.moderation.models import Ban, ChatMessage, ModerationLog, Mute, Report
from apps.tables import services as tables
from apps.tables.services import ServiceError
from apps.tournaments import services as tournaments
from apps.tournaments.models import Tournament
from tests.socket_client import Socket, db

from .conftest import ROLES, actor_for, make_people

STAFF = {"moderator", "superuser"}
PLAYERS = {"player", "host"}


def _chat(ctx):
    return ChatMessage.objects.create(table=ctx["table"], user=ctx["people"]["caio"],
                                      text="hello")


def _phrase(ctx):
    return ChatMessage.objects.create(table=ctx["table"], user=ctx["people"]["caio"],
                                      text="Good one!", phrase="good_one")


def _report(ctx):
    return Report.objects.create(reporter=ctx["people"]["bea"], table=ctx["table"],
                                 reported_user=ctx["people"]["caio"], reason="spam")


def _mute_caio(ctx):
    mod.mute(actor=ctx["people"]["root"], user_id=ctx["people"]["caio"].pk, minutes=10,
             reason="noise")


def _ban_caio(ctx, by: str = "root", days: int | None = 3):
    mod.ban(actor=ctx["people"][by], user_id=ctx["people"]["caio"].pk, days=days,
            reason="abuse")


def _ban(days: int | None):
    return lambda c, a: mod.ban(actor=a, user_id=c["people"]["caio"].pk, days=days,
                                reason="abuse")


def _lift_ban(c, a):
    return mod.lift_ban(actor=a, user_id=c["people"]["caio"].pk)


def _create_tournament(c, a):
    return tournaments.create_tournament(
        user=a, name="Copa", preset="partners", players=4, format="swiss",
        starts_at=timezone.now() + timedelta(hours=1))


def _a_tournament(c):
    return _create_tournament(c, c["people"]["root"])


#: action -> (setup, call, roles allowed, the log row's action or None)
ACTIONS = {
    "post_chat": (None, lambda c, a: mod.post_chat(user=a, table_id=c["table"].pk, text="hi"),
                  PLAYERS, None),
    "report": (_chat, lambda c, a: mod.report(user=a, table_id=c["table"].pk, reason="abuse",
                                              message_id=c["setup"].pk), PLAYERS, None),
    "host_names_the_table": (None, lambda c, a: tables.rename_table(
        user=a, table_id=c["table"].pk, name="Mesa de Ana"), {"host"}, None),
    # Quick phrases: the players' (staff hold no seat, nor the page); the host's switch.
    "post_phrase": (None, lambda c, a: quick_chat.post_phrase(
        user=a, table_id=c["table"].pk, phrase="good_one"), PLAYERS, None),
    "host_lets_watchers_phrase": (None, lambda c, a: quick_chat.set_watcher_phrases(
        user=a, table_id=c["table"].pk, allowed=True), {"host"}, None),
    "hide_phrase": (_phrase, lambda c, a: mod.hide_message(actor=a, message_id=c["setup"].pk),
                    STAFF, "hide_message"),
    "delete_phrase": (_phrase, lambda c, a: mod.delete_message(actor=a,
                                                               message_id=c["setup"].pk),
                      STAFF, "delete_message"),
    "hide_message": (_chat, lambda c, a: mod.hide_message(actor=a, message_id=c["setup"].pk),
                     STAFF, "hide_message"),
    "delete_message": (_chat, lambda c, a: mod.delete_message(actor=a,
                                                              message_id=c["setup"].pk),
                       STAFF, "delete_message"),
    "mute": (None, lambda c, a: mod.mute(actor=a, user_id=c["people"]["caio"].pk, minutes=5,
                                         reason="spam"), STAFF, "mute"),
    "lift_mute": (_mute_caio, lambda c, a: mod.lift_mute(actor=a,
                                                         user_id=c["people"]["caio"].pk),
                  STAFF, "lift_mute"),
    "ban_7_days": (None, _ban(7), STAFF, "ban"),
    "ban_30_days": (None, _ban(30), STAFF, "ban"),
    "ban_31_days": (None, _ban(31), {"superuser"}, "ban"),
    "ban_forever": (None, _ban(None), {"superuser"}, "ban"),
    "lift_own_ban": (lambda c: _ban_caio(c, by="mod"), _lift_ban, STAFF, "lift_ban"),
    "lift_anothers_ban": (_ban_caio, _lift_ban, {"superuser"}, "lift_ban"),
    "lift_ban_forever": (lambda c: _ban_caio(c, days=None), _lift_ban, {"superuser"},
                         "lift_ban"),
    "close_table": (None, lambda c, a: mod.close_table(actor=a, table_id=c["table"].pk,
                                                       reason="abuse"), STAFF, "close_table"),
    "hide_table": (None, lambda c, a: mod.hide_table(actor=a, table_id=c["table"].pk),
                   STAFF, "hide_table"),
    "rename_table": (None, lambda c, a: mod.rename_by_staff(actor=a, table_id=c["table"].pk,
                                                         name="Table 1"), STAFF,
                     "rename_table"),
    "remove_player": (None, lambda c, a: mod.remove_player(actor=a, table_id=c["table"].pk,
                                                           seat_index=3, reason="abuse"),
                      STAFF, "remove_player"),
    "close_report": (_report, lambda c, a: mod.close_report(actor=a, report_id=c["setup"].pk,
                                                            resolution="warned"),
                     STAFF, "close_report"),
    # Tournaments (apps.tournaments: rights of its own, granted to the moderator group).
    "create_tournament": (None, _create_tournament, STAFF, None),
    "cancel_tournament": (_a_tournament, lambda c, a: tournaments.cancel(
        user=a, tournament_id=c["setup"].pk), STAFF, None),
}


def _snapshot(table):
    table.refresh_from_db()
    return (table.version, table.state, table.hidden, table.name,
            ChatMessage.objects.filter(hidden=False, deleted=False).count(),
            Mute.objects.filter(lifted_at__isnull=True).count(),
            Ban.objects.filter(lifted_at__isnull=True).count(),
            Report.objects.filter(status="open").count(),
            list(table.seats.values_list("user_id", "leaving")),
            list(Tournament.objects.order_by("pk").values_list("pk", "state")))


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("action", list(ACTIONS))
def test_permission_matrix(action, role, people, table):
    setup, call, allowed, logged = ACTIONS[action]
    ctx = {"people": people, "table": table}
    ctx["setup"] = setup(ctx) if setup else None
    logs = ModerationLog.objects.count()
    before = _snapshot(table)
    actor = actor_for(people, role)
    if role in allowed:
        call(ctx, actor)
        assert ModerationLog.objects.count() == logs + (1 if logged else 0)
        if logged:
            entry = ModerationLog.objects.order_by("-pk").first()
            assert entry.actor == actor and entry.action == logged
            assert entry.before != entry.after
        assert _snapshot(table) != before
    else:
        with pytest.raises(ServiceError) as err:
            call(ctx, actor)
        assert err.value.code in {"not_signed_in", "forbidden", "not_seated", "not_host"}
        assert str(err.value.message)
        assert ModerationLog.objects.count() == logs
        assert _snapshot(table) == before


@pytest.mark.parametrize("made", ["by the migrations", "again, by make_moderator"])
def test_moderator_group_rights(db, made):
    if made != "by the migrations":
        # An operator removed it: made again, it holds the same rights.
        Group.objects.filter(name="moderator").delete()
    rights = mod.moderator_group().permissions
    codenames = set(rights.filter(content_type__app_label="moderation")
                    .values_list("codename", flat=True))
    assert codenames == set(mod.MODERATOR_RIGHTS)
    assert set(rights.filter(content_type__app_label="tournaments")
               .values_list("codename", flat=True)) == {"create_tournament",
                                                        "cancel_tournament"}
    assert {"ban_user", "lift_ban", "delete_message"} <= codenames
    assert "ban_user_forever" not in codenames


def test_staff_without_the_right_is_refused(people, table):
    people["mod"].groups.clear()
    from django.contrib.auth import get_user_model

    bare = get_user_model().objects.get(pk=people["mod"].pk)
    with pytest.raises(ServiceError) as err:
        mod.close_table(actor=bare, table_id=table.pk, reason="x")
    assert err.value.code == "forbidden"


def test_a_moderator_cannot_act_on_staff_or_themselves(people, table):
    with pytest.raises(ServiceError):
        mod.mute(actor=people["mod"], user_id=people["root"].pk, minutes=5, reason="x")
    with pytest.raises(ServiceError):
        mod.mute(actor=people["mod"], user_id=people["mod"].pk, minutes=5, reason="x")
    with pytest.raises(ServiceError):
        mod.ban(actor=people["root"], user_id=people["root"].pk, days=1, reason="x")


# -- making a moderator -----------------------------------------------------------------------

def test_the_group_alone_gives_nothing_make_moderator_does(people, table):
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    User = get_user_model()
    eva = User.objects.create_user(username="Eva", password="pw-evaeva")
    eva.groups.add(mod.moderator_group())
    fresh = lambda: User.objects.get(pk=eva.pk)  # noqa: E731 (a new permission cache each time)
    with pytest.raises(ServiceError) as err:
        mod.hide_table(actor=fresh(), table_id=table.pk)
    assert err.value.code == "forbidden"
    assert Client().get("/staff/").status_code == 302  # anonymous: the sign-in page

    out = io.StringIO()
    call_command("make_moderator", "eva", stdout=out)
    assert "eva" in out.getvalue().lower()
    assert fresh().is_staff
    mod.hide_table(actor=fresh(), table_id=table.pk)
    mod.ban(actor=fresh(), user_id=people["caio"].pk, days=3, reason="abuse")
    client = Client()
    client.force_login(fresh())
    assert client.get("/staff/").status_code == 200

    call_command("make_moderator", "Eva", "--remove", stdout=out)
    assert not fresh().is_staff and not fresh().groups.exists()
    with pytest.raises(ServiceError):
        mod.hide_table(actor=fresh(), table_id=table.pk, hidden=False)
    assert client.get("/staff/").status_code == 403


def test_removing_a_superusers_moderator_group_keeps_them_staff(people):
    from django.core.management import call_command

    call_command("make_moderator", "root", stdout=io.StringIO())
    call_command("make_moderator", "root", "--remove", stdout=io.StringIO())
    people["root"].refresh_from_db()
    assert people["root"].is_staff and people["root"].is_superuser


def test_make_moderator_names_an_unknown_user(db):
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="nobody"):
        call_command("make_moderator", "nobody")


# -- the staff pages over HTTP ----------------------------------------------------------------

def _client(people, role: str) -> Client:
    client = Client()
    if role != "anonymous":
        client.force_login(actor_for(people, role))
    return client


@pytest.mark.parametrize("role", ROLES)
def test_staff_pages_by_role(role, people, table):
    msg = mod.post_chat(user=people["caio"], table_id=table.pk, text="rude words")
    report = mod.report(user=people["ana"], table_id=table.pk, reason="abuse",
                        message_id=msg.pk)
    client = _client(people, role)
    pages = ["/staff/", f"/staff/tables/{table.pk}/", f"/staff/tables/{table.pk}/record/",
             "/staff/reports/",
             f"/staff/reports/{report.pk}/", f"/staff/users/{people['caio'].pk}/"]
    for url in pages:
        response = client.get(url)
        if role in STAFF:
            assert response.status_code == 200, url
        elif role == "anonymous":
            assert response.status_code == 302, url
            assert response["Location"] == f"/accounts/login/?next={quote(url)}", url
        else:
            # Signed in without the right: a plain 403 page, not the admin's sign-in.
            assert response.status_code == 403, url
            assert "/admin/" not in response.content.decode()
    if role in STAFF:
        page = client.get(f"/staff/reports/{report.pk}/").content.decode()
        assert "rude words" in page and table.code in page


@pytest.mark.parametrize("language,words", [("es", "No permitido"),
                                            ("pt-br", "Não permitido"),
                                            ("en", "Not allowed")])
def test_the_403_page_speaks_the_persons_language(people, language, words):
    from apps.accounts.services import set_language

    set_language(user=people["ana"], language=language)
    client = _client(people, "player")
    response = client.get("/staff/")
    html = response.content.decode()
    assert response.status_code == 403
    assert f'<html lang="{language}">' in html and words in html
    assert 'name="language"' in html  # the site's own page, with its header


@pytest.mark.parametrize("role", ROLES)
def test_banning_through_the_page_by_role(role, people):
    client = _client(people, role)
    caio = people["caio"].pk
    response = client.post("/staff/act/ban/", {"user": caio, "days": "7", "reason": "abuse"})
    banned = Ban.objects.filter(user_id=caio, lifted_at__isnull=True).exists()
    if role in STAFF:
        assert response.status_code == 302 and banned
    else:
        assert response.status_code in (302, 403) and not banned
        if role != "anonymous":
            assert response.status_code == 403


def test_the_person_page_offers_a_moderator_only_what_they_may_do(people):
    client = _client(people, "moderator")
    caio = people["caio"].pk
    html = client.get(f"/staff/users/{caio}/").content.decode()
    days = re.findall(r'<option value="(\w+)">', html.split('name="days"', 1)[1]
                      .split("</select>", 1)[0])
    assert days == ["1", "3", "7", "14", "30"]
    assert client.post("/staff/act/ban/", {"user": caio, "days": "365",
                                           "reason": "abuse"}).status_code == 403
    mod.ban(actor=people["root"], user_id=caio, days=3, reason="spam")
    html = client.get(f"/staff/users/{caio}/").content.decode()
    assert "/staff/act/lift_ban/" not in html  # root's ban: not theirs to lift
    root_html = _client(people, "superuser").get(f"/staff/users/{caio}/").content.decode()
    assert "/staff/act/lift_ban/" in root_html and 'value="forever"' in root_html


# -- the me socket ----------------------------------------------------------------------------

@pytest.fixture
def live_people(transactional_db):
    return make_people()


def _sign_in(username: str) -> bytes:
    """A real sign-in through the sign-in page (no page loaded after it)."""
    client = Client()
    response = client.post("/accounts/login/", {"username": username,
                                                "password": f"pw-{username * 2}"})
    assert response.status_code == 302, response.content
    return f"sessionid={client.cookies['sessionid'].value}".encode()


@pytest.mark.django_db(transaction=True)
async def test_a_banned_person_who_signs_in_again_cannot_open_the_me_socket(live_people):
    await db(mod.ban)(actor=live_people["mod"], user_id=live_people["caio"].pk, days=1,
                      reason="abuse")
    cookie = await db(_sign_in)("caio")
    sock = Socket("/ws/me/", cookie=cookie)
    assert await sock.connect()
    assert await sock.close_code() == 4403


@pytest.mark.django_db(transaction=True)
async def test_the_me_socket_closes_when_its_person_is_banned(live_people):
    sock = Socket("/ws/me/", live_people["caio"])
    assert await sock.connect()
    await sock.send({"type": "ping"})
    assert await sock.recv() == {"type": "pong"}
    await db(mod.ban)(actor=live_people["mod"], user_id=live_people["caio"].pk, days=1,
                      reason="abuse")
    assert await sock.close_code() == 4403
