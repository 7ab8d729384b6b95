"""Chat, mutes, bans, closing and the other staff actions: what each one does."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

from apps.moderation import services as mod
from apps.moderation.models import ChatMessage, ModerationLog, Report
from apps.rules.engine import legal_dict
from apps.tables import game, selectors, services
from apps.tables.models import Round, Table
from apps.tables.services import ServiceError

from .conftest import seat_table


def _play_one(table):
    table = Table.objects.get(pk=table.pk)
    engine = game.load(table.current_match)
    rnd = engine.current
    move = legal_dict(*random.Random(1).choice(rnd.legal()))
    user = table.seats.get(index=rnd.turn).user
    return services.play_move(user=user, table_id=table.pk, round_number=len(engine.rounds) - 1,
                              ply=len(rnd.history), tile=move.get("play"), end=move.get("end"),
                              is_pass=bool(move.get("pass")))


# -- chat -------------------------------------------------------------------------------------

def test_chat_reaches_the_table_state_and_bumps_the_version(people, table):
    version = Table.objects.get(pk=table.pk).version
    msg = mod.post_chat(user=people["ana"], table_id=table.pk, text="  good   luck  ")
    assert msg.text == "good luck"
    assert Table.objects.get(pk=table.pk).version == version + 1
    state = selectors.table_state(table_id=table.pk, user=people["bea"])
    assert state["chat"][-1] == {"id": msg.pk, "seat": 1, "name": "ana", "text": "good luck",
                                 "at": state["chat"][-1]["at"]}
    assert state["you"]["can_chat"] is True and state["you"]["muted"] is None


def test_chat_refuses_outsiders_empty_and_long_messages(people, table):
    with pytest.raises(ServiceError) as err:
        mod.post_chat(user=people["outsider"], table_id=table.pk, text="hi")
    assert err.value.code == "not_seated"
    with pytest.raises(ServiceError) as err:
        mod.post_chat(user=people["ana"], table_id=table.pk, text="   ")
    assert err.value.code == "empty"
    with pytest.raises(ServiceError) as err:
        mod.post_chat(user=people["ana"], table_id=table.pk, text="x" * 201)
    assert err.value.code == "too_long"
    assert not ChatMessage.objects.exists()


def test_chat_rate_limit(people, table):
    for i in range(mod.CHAT_LIMIT):
        mod.post_chat(user=people["ana"], table_id=table.pk, text=f"m{i}")
    with pytest.raises(ServiceError) as err:
        mod.post_chat(user=people["ana"], table_id=table.pk, text="one more")
    assert err.value.code == "rate_limited" and err.value.message
    mod.post_chat(user=people["bea"], table_id=table.pk, text="others still talk")
    ChatMessage.objects.filter(user=people["ana"]).update(
        created_at=timezone.now() - mod.CHAT_WINDOW - timedelta(seconds=1))
    mod.post_chat(user=people["ana"], table_id=table.pk, text="later")


def test_muted_user_is_refused_with_the_reason_and_end(people, table):
    row = mod.mute(actor=people["mod"], user_id=people["ana"].pk, minutes=15,
                   reason="insults")
    with pytest.raises(ServiceError) as err:
        mod.post_chat(user=people["ana"], table_id=table.pk, text="hello")
    assert err.value.code == "muted"
    assert "insults" in err.value.message
    assert str(timezone.localtime(row.until).year) in err.value.message
    muted = selectors.table_state(table_id=table.pk, user=people["ana"])["you"]["muted"]
    assert muted["reason"] == "insults"
    assert muted["until"] == int(row.until.timestamp() * 1000)
    mod.lift_mute(actor=people["mod"], user_id=people["ana"].pk, reason="apologised")
    mod.post_chat(user=people["ana"], table_id=table.pk, text="sorry")
    assert selectors.table_state(table_id=table.pk, user=people["ana"])["you"]["muted"] is None


def test_an_expired_mute_no_longer_applies(people, table):
    row = mod.mute(actor=people["mod"], user_id=people["ana"].pk, minutes=1, reason="x")
    row.until = timezone.now() - timedelta(seconds=1)
    row.save()
    mod.post_chat(user=people["ana"], table_id=table.pk, text="free again")


def test_hidden_and_deleted_messages_leave_the_state(people, table):
    a = mod.post_chat(user=people["ana"], table_id=table.pk, text="rude")
    b = mod.post_chat(user=people["bea"], table_id=table.pk, text="spam")
    mod.hide_message(actor=people["mod"], message_id=a.pk, reason="rude")
    mod.delete_message(actor=people["root"], message_id=b.pk, reason="spam")
    assert selectors.table_state(table_id=table.pk, user=people["caio"])["chat"] == []
    b.refresh_from_db()
    assert b.text == "" and b.deleted
    entry = ModerationLog.objects.get(action="delete_message")
    assert entry.before["text"] == "spam" and entry.after["text"] == ""


def test_report_a_message_and_a_seat(people, table):
    msg = mod.post_chat(user=people["caio"], table_id=table.pk, text="rude")
    r1 = mod.report(user=people["ana"], table_id=table.pk, reason="abuse", message_id=msg.pk,
                    note="  said   rude things ")
    assert (r1.reported_user, r1.message, r1.note, r1.status) == (people["caio"], msg,
                                                                 "said rude things", "open")
    r2 = mod.report(user=people["ana"], table_id=table.pk, reason="stalling", seat_index=2)
    assert r2.reported_user == people["bea"] and r2.message is None
    with pytest.raises(ServiceError) as err:
        mod.report(user=people["ana"], table_id=table.pk, reason="bad")
    assert err.value.code == "bad_reason"
    with pytest.raises(ServiceError) as err:
        mod.report(user=people["ana"], table_id=table.pk, reason="spam", seat_index=1)
    assert err.value.code == "self"
    closed = mod.close_report(actor=people["mod"], report_id=r1.pk, resolution="muted 1 h")
    assert (closed.status, closed.handled_by, closed.resolution) == ("closed", people["mod"],
                                                                    "muted 1 h")
    with pytest.raises(ServiceError):
        mod.close_report(actor=people["mod"], report_id=r1.pk, resolution="again")
    assert Report.objects.filter(status="open").count() == 1


# -- tables -----------------------------------------------------------------------------------

def test_a_closed_table_refuses_moves_and_its_round_is_voided(people, table):
    _play_one(table)
    version = Table.objects.get(pk=table.pk).version
    mod.close_table(actor=people["mod"], table_id=table.pk, reason="cheating ring")
    table.refresh_from_db()
    assert table.state == "closed" and table.version == version + 1
    assert table.turn_deadline is None
    rnd = Round.objects.get(match__table=table)
    assert rnd.voided and rnd.finished_at is not None and rnd.result is None
    assert game.record_of(table.current_match)["rounds"] == []
    with pytest.raises(ServiceError) as err:
        services.play_move(user=people["host"], table_id=table.pk, round_number=0, ply=1,
                           tile="6-6")
    assert err.value.code == "closed"
    with pytest.raises(ServiceError) as err:
        mod.post_chat(user=people["ana"], table_id=table.pk, text="hello?")
    assert err.value.code == "closed"
    state = selectors.table_state(table_id=table.pk, user=people["ana"])
    assert state["table"]["state"] == "closed"
    assert "cheating ring" in state["table"]["closed_reason"]
    assert state["view"] is None  # the voided round's hands are not shown
    entry = ModerationLog.objects.get(action="close_table")
    assert entry.before["state"] == "playing" and entry.after["state"] == "closed"
    assert entry.after["voided_rounds"] == [{"match": 1, "round": 0}]
    with pytest.raises(ServiceError):
        mod.close_table(actor=people["mod"], table_id=table.pk, reason="again")


def test_hide_and_rename_a_table(people):
    table = seat_table(people, start=False)
    services.leave_table(user=people["caio"], table_id=table.pk)
    assert table.pk in [t.pk for t in selectors.lobby_tables()]
    mod.hide_table(actor=people["mod"], table_id=table.pk, reason="offensive")
    assert table.pk not in [t.pk for t in selectors.lobby_tables()]
    mod.hide_table(actor=people["mod"], table_id=table.pk, hidden=False)
    assert table.pk in [t.pk for t in selectors.lobby_tables()]
    mod.rename_by_staff(actor=people["mod"], table_id=table.pk, name="", reason="offensive name")
    assert Table.objects.get(pk=table.pk).name == ""
    entry = ModerationLog.objects.get(action="rename_table")
    assert entry.before == {"name": ""} or "name" in entry.before


def test_remove_a_player_before_and_during_a_round(people):
    waiting = seat_table(people, start=False)
    mod.remove_player(actor=people["mod"], table_id=waiting.pk, seat_index=2, reason="name")
    assert waiting.seats.get(index=2).user is None
    playing = Table.objects.create(host=people["host"], preset="partners",
                                   options={"turn_seconds": None}, public=True)
    for i, name in enumerate(("host", "ana", "bea", "caio")):
        playing.seats.create(index=i, user=people[name])
    services.start_match(user=people["host"], table_id=playing.pk)
    mod.remove_player(actor=people["mod"], table_id=playing.pk, seat_index=3, reason="abuse")
    seat = playing.seats.get(index=3)
    assert seat.user == people["caio"] and seat.leaving and seat.standin
    entry = ModerationLog.objects.filter(action="remove_player").latest("pk")
    assert entry.target_user == people["caio"] and entry.after["leaving"] is True
    with pytest.raises(ServiceError) as err:
        mod.remove_player(actor=people["mod"], table_id=playing.pk, seat_index=3, reason="x")
    assert err.value.code == "leaving"


# -- bans -------------------------------------------------------------------------------------

def test_ban_ends_sessions_and_refuses_tables(people, table):
    client = Client()
    client.force_login(people["outsider"])
    other = Client()
    other.force_login(people["ana"])
    assert Session.objects.count() == 2
    mod.ban(actor=people["root"], user_id=people["outsider"].pk, days=2, reason="abuse")
    assert Session.objects.count() == 1  # only ana's is left
    page = client.get("/", follow=True)
    assert not page.context["user"].is_authenticated
    with pytest.raises(ServiceError) as err:
        services.create_table(host=people["outsider"], preset="partners")
    assert err.value.code == "banned" and "abuse" in err.value.message
    with pytest.raises(ServiceError) as err:
        services.join_table(user=people["outsider"], table_id=table.pk)
    assert err.value.code == "banned"
    mod.lift_ban(actor=people["root"], user_id=people["outsider"].pk, reason="appeal")
    services.create_table(host=people["outsider"], preset="partners")


def test_a_banned_session_is_signed_out_with_the_reason(people):
    from apps.moderation.models import Ban

    client = Client()
    client.force_login(people["outsider"])
    # A ban written without ending sessions (e.g. a cache session store): the middleware.
    Ban.objects.create(user=people["outsider"], reason="spam bot", by=people["root"])
    response = client.get("/lobby/", follow=True)
    assert not response.context["user"].is_authenticated
    assert any("spam bot" in str(m) for m in response.context["messages"])


def test_only_superusers_ban_for_good_even_with_the_permission(people):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    people["mod"].user_permissions.add(*Permission.objects.filter(
        codename__in=["ban_user", "ban_user_forever"]))
    mod_user = get_user_model().objects.get(pk=people["mod"].pk)
    mod.ban(actor=mod_user, user_id=people["caio"].pk, days=1, reason="x")
    with pytest.raises(ServiceError) as err:
        mod.ban(actor=mod_user, user_id=people["bea"].pk, days=None, reason="x")
    assert err.value.code == "forbidden"


# -- the log ----------------------------------------------------------------------------------

def test_the_log_records_every_action(people, table):
    msg = mod.post_chat(user=people["caio"], table_id=table.pk, text="rude")
    report = mod.report(user=people["ana"], table_id=table.pk, reason="abuse",
                        message_id=msg.pk)
    root, caio = people["root"], people["caio"]
    mod.hide_message(actor=root, message_id=msg.pk, reason="r1")
    mod.delete_message(actor=root, message_id=msg.pk, reason="r2")
    mod.mute(actor=root, user_id=caio.pk, minutes=5, reason="r3")
    mod.lift_mute(actor=root, user_id=caio.pk, reason="r4")
    mod.ban(actor=root, user_id=caio.pk, days=1, reason="r5")
    mod.lift_ban(actor=root, user_id=caio.pk, reason="r6")
    mod.hide_table(actor=root, table_id=table.pk, reason="r7")
    mod.rename_by_staff(actor=root, table_id=table.pk, name="x", reason="r8")
    mod.remove_player(actor=root, table_id=table.pk, seat_index=3, reason="r9")
    mod.close_table(actor=root, table_id=table.pk, reason="r10")
    mod.close_report(actor=root, report_id=report.pk, resolution="r11")
    entries = list(ModerationLog.objects.order_by("pk"))
    assert [e.action for e in entries] == [
        "hide_message", "delete_message", "mute", "lift_mute", "ban", "lift_ban", "hide_table",
        "rename_table", "remove_player", "close_table", "close_report"]
    assert [e.reason for e in entries] == [f"r{i}" for i in range(1, 12)]
    for e in entries:
        assert e.actor == root and e.created_at and e.before != e.after
        assert e.target_user or e.target_table
    assert entries[4].target_user == caio and entries[4].after["until"]


def test_refusals_are_translated(people, table):
    from django.utils import translation

    mod.mute(actor=people["mod"], user_id=people["ana"].pk, minutes=5, reason="gritos")
    for lang, words in (("es", "Estás silenciado"), ("pt-br", "Você está silenciado")):
        with translation.override(lang), pytest.raises(ServiceError) as err:
            mod.post_chat(user=people["ana"], table_id=table.pk, text="hola")
        assert words in err.value.message and "gritos" in err.value.message
