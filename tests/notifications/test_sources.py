"""What makes a notification: a table's events through the tables' hook (in the table's
transaction), the signals of the apps below, beat's look at tournaments about to start. Each
fact makes one row per person however often it is heard."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.friends import services as friends
from apps.notifications import sources
from apps.notifications.models import Notification
from apps.tables import services as tables
from apps.tables.models import Connection, Table
from apps.tournaments.events import table_ready

from .conftest import started_pair_table

pytestmark = pytest.mark.django_db


def made(kind: str | None = None) -> list[tuple[str, int]]:
    rows = Notification.objects.all() if kind is None else Notification.objects.filter(kind=kind)
    return sorted((n.kind, n.recipient_id) for n in rows)


def test_the_turn_based_tables_events_notify_through_the_tables_hook(people):
    """The events of the persistent-matches issue, fed through a real table version (the
    tables' on_change hook): whose turn it is, a rematch offered, a match resumed. They work
    as soon as the tables send them."""
    ana, bea = people["ana"], people["bea"]
    table = started_pair_table(ana, bea)
    deadline = (timezone.now() + timedelta(days=2)).isoformat()
    tables.touch(table_id=table.pk, events=[{"kind": "turn", "seat": 1, "deadline": deadline}])
    assert made("turn") == [("turn", bea.pk)]
    turn = Notification.objects.get(kind="turn")
    assert turn.table_id == table.pk and turn.data["code"] == table.code
    assert turn.data["deadline"] == deadline

    tables.touch(table_id=table.pk, events=[{"kind": "rematch_offered", "seat": 0}])
    assert made("rematch_offered") == [("rematch_offered", bea.pk)]  # not the one who offered

    Connection.objects.create(table=table, user=ana, channel_name="test.ana")
    tables.touch(table_id=table.pk, events=[{"kind": "resumed"}])
    assert made("resumed") == [("resumed", bea.pk)]  # ana is at the table and sees it


def test_a_new_version_is_a_new_turn_and_the_same_one_is_not(people):
    ana, bea = people["ana"], people["bea"]
    table = started_pair_table(ana, bea)
    for _ in range(2):
        tables.touch(table_id=table.pk, events=[{"kind": "turn", "seat": 1}])
    assert made("turn") == [("turn", bea.pk)] * 2
    # The same version heard again (a hook called twice) writes nothing more.
    table = Table.objects.get(pk=table.pk)
    table.version -= 1
    sources.table_changing(table=table, seats=list(table.seats.all()),
                           events=[{"kind": "turn", "seat": 1}], now=timezone.now())
    assert made("turn") == [("turn", bea.pk)] * 2


def test_a_match_over_tells_everyone_seated_once(people):
    ana, bea = people["ana"], people["bea"]
    table = started_pair_table(ana, bea)
    for _ in range(2):  # the same match's end, heard twice
        tables.touch(table_id=table.pk, events=[{"kind": "match_over", "winner": None}])
    assert made() == [("match_over", ana.pk), ("match_over", bea.pk)]
    assert Notification.objects.filter(kind="match_over").first().data["number"] == 1


def test_a_version_without_those_events_writes_nothing(people):
    table = started_pair_table(people["ana"], people["bea"])
    tables.touch(table_id=table.pk, events=[{"kind": "chat_view"}])
    assert made() == []


def test_arriving_at_the_table_reads_what_was_said_about_it(people):
    ana, bea = people["ana"], people["bea"]
    table = started_pair_table(ana, bea)
    tables.touch(table_id=table.pk, events=[{"kind": "turn", "seat": 1}])
    tables.touch(table_id=table.pk, events=[{"kind": "presence", "seat": 1, "connected": True}])
    assert Notification.objects.get(kind="turn").read_at is not None


def test_an_invitation_notifies_the_invitee_unless_they_blocked_the_host(
        people, django_capture_on_commit_callbacks):
    ana, bea, caio = people["ana"], people["bea"], people["caio"]
    table = tables.create_table(host=ana, preset="partners", public=False, name="Mesa de Ana")
    with django_capture_on_commit_callbacks(execute=True):
        tables.invite(user=ana, table_id=table.pk, display_name="bea")
        tables.invite(user=ana, table_id=table.pk, display_name="bea")  # again: one row
    n = Notification.objects.get(kind="invitation")
    assert (n.recipient_id, n.data["name"], n.data["table"]) == (bea.pk, "ana", "Mesa de Ana")
    friends.block(user=caio, person_id=ana.pk)
    with django_capture_on_commit_callbacks(execute=True):
        tables.invite(user=ana, table_id=table.pk, display_name="caio")
    assert made("invitation") == [("invitation", bea.pk)]


def test_a_friend_request_notifies_the_person_asked(people, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        friends.request_friend(user=people["ana"], display_name="bea")
    n = Notification.objects.get(kind="friend_request")
    assert (n.recipient_id, n.data["name"]) == (people["bea"].pk, "ana")


def test_a_partner_invitation_and_a_tournament_table_notify(people):
    from apps.tournaments.events import partner_invited

    partner_invited.send(sender=None, invitation_id=5, tournament_id=77,
                         inviter_id=people["ana"].pk, invitee_id=people["bea"].pk)
    table_ready.send(sender=None, tournament_id=77, game_id=3, table_id=9, code="ABCDEF",
                     name="Copa 1.1", user_ids=[people["ana"].pk, people["caio"].pk])
    table_ready.send(sender=None, tournament_id=77, game_id=3, table_id=9, code="ABCDEF",
                     name="Copa 1.1", user_ids=[people["ana"].pk, people["caio"].pk])
    assert made() == sorted([("partner_invitation", people["bea"].pk),
                             ("tournament_table", people["ana"].pk),
                             ("tournament_table", people["caio"].pk)])


def test_a_tournament_starting_within_the_lead_tells_its_entrants_once(people, settings):
    from apps.tournaments import services as tournaments

    settings.TOURNAMENT_MEMBER_LEVEL = None
    people["ana"].is_staff = True
    people["ana"].save()
    from django.contrib.auth.models import Permission

    from apps.moderation.services import grant_moderators  # noqa: F401 (rights from migrations)

    people["ana"].user_permissions.add(Permission.objects.get(codename="create_tournament"))
    now = timezone.now()
    t = tournaments.create_tournament(user=people["ana"], name="Copa", preset="draw",
                                      players=2, format="swiss", rounds=1,
                                      starts_at=now + timedelta(minutes=4))
    tournaments.register(user=people["bea"], tournament_id=t.pk)
    assert sources.tournaments_soon(now=now - timedelta(minutes=2)) == 0  # 6 minutes before
    assert sources.tournaments_soon(now=now) == 1
    assert sources.tournaments_soon(now=now) == 1  # asked again: the same row
    n = Notification.objects.get(kind="tournament_soon")
    assert (n.recipient_id, n.data["minutes"]) == (people["bea"].pk, 4)
    assert Notification.objects.count() == 1


def test_a_review_done_tells_who_asked(people):
    from apps.reviews.events import review_done

    review_done.send(sender=None, review_id=4, table_id=1, code="ABCDEF", number=2,
                     requested_by_id=people["dani"].pk)
    n = Notification.objects.get(kind="review_ready")
    assert (n.recipient_id, n.data["number"]) == (people["dani"].pk, 2)


def test_a_move_at_a_turn_based_table_tells_the_next_person_once(people):
    """Real play, not an event fed by hand: the tables add ``turn`` to the version after the
    clock is armed, and the hook must hear it (it ran before, and no move ever notified). The
    same turn told again, a vacation moving its deadline, is not a second notification."""
    import random

    from apps.rules.engine import legal_dict
    from apps.tables import game

    ana, bea, caio, dani = (people[n] for n in ("ana", "bea", "caio", "dani"))
    table = tables.create_table(host=ana, preset="partners", pace="turn", move_seconds=86400)
    for person in (bea, caio, dani):
        tables.join_table(user=person, table_id=table.pk, code=table.code)
    tables.start_match(user=ana, table_id=table.pk)
    by_seat = {s.index: s.user for s in Table.objects.get(pk=table.pk).seats.all()}
    engine = game.restore(Table.objects.get(pk=table.pk).current_match)
    first = by_seat[engine.current.turn]
    assert made("turn") == [("turn", first.pk)]
    move = legal_dict(*random.Random(2).choice(engine.current.legal()))
    tables.play_move(user=first, table_id=table.pk, round_number=0, ply=0,
                     tile=move.get("play"), end=move.get("end"), is_pass=bool(move.get("pass")))
    engine = game.restore(Table.objects.get(pk=table.pk).current_match)
    second = by_seat[engine.current.turn]
    assert made("turn") == sorted([("turn", first.pk), ("turn", second.pk)])
    tables.start_vacation(user=second, days=2)  # their clock stops: the turn is told again
    assert made("turn") == sorted([("turn", first.pk), ("turn", second.pk)])
