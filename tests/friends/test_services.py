"""Friends services: requests accepted both ways, the refusals (each changes nothing), blocks
(which end a friendship, hide invitations and chat at once) and the usual partner."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser

from apps.core.errors import ServiceError
from apps.friends import selectors, services
from apps.friends.models import Block, Friendship, UsualPartner
from apps.moderation import services as moderation
from apps.tables import hooks
from apps.tables import selectors as table_selectors
from apps.tables import services as tables
from apps.tables.models import Invitation, Table, TableEvent
from apps.tables.services import seats

from .conftest import at_table, make_guest

pytestmark = pytest.mark.django_db


def names(rows) -> list[str]:
    return [r.name for r in rows]


def befriend(a, b) -> Friendship:
    row = services.request_friend(user=a, display_name=b.username)
    return services.accept_request(user=b, request_id=row.pk)


def world() -> tuple:
    """Everything the friends services may change, and every table's version."""
    return (sorted(Friendship.objects.values_list("first_id", "second_id", "asked_by_id",
                                                  "status")),
            sorted(Block.objects.values_list("blocker_id", "blocked_id")),
            sorted(UsualPartner.objects.values_list("user_id", "partner_id")),
            sorted(Table.objects.values_list("pk", "version")))


def seated_table(people, *, public: bool = True) -> Table:
    """host, ana, bea, caio at a partners table that has started."""
    table = tables.create_table(host=people["host"], preset="partners", public=public,
                                options={"turn_seconds": None})
    for name in ("ana", "bea", "caio"):
        tables.join_table(user=people[name], table_id=table.pk, code=table.code)
    tables.start_match(user=people["host"], table_id=table.pk)
    return Table.objects.get(pk=table.pk)


# -- requests -----------------------------------------------------------------------------------

def test_a_request_once_accepted_makes_friends_both_ways(people):
    ana, bea = people["ana"], people["bea"]
    row = services.request_friend(user=ana, display_name="  BEA ")  # a name as typed
    assert row.status == Friendship.Status.PENDING and row.asked_by == ana
    assert (names(selectors.requests_of(bea)[0]), names(selectors.requests_of(ana)[1])) \
        == (["ana"], ["bea"])
    assert selectors.friends_of(ana) == selectors.friends_of(bea) == []
    services.accept_request(user=bea, request_id=row.pk)
    assert names(selectors.friends_of(ana)) == ["bea"]
    assert names(selectors.friends_of(bea)) == ["ana"]
    assert selectors.requests_of(ana) == selectors.requests_of(bea) == ([], [])


def test_asking_someone_who_asked_you_accepts_their_request(people):
    ana, bea = people["ana"], people["bea"]
    services.request_friend(user=ana, display_name="bea")
    row = services.request_friend(user=bea, display_name="ana")
    assert row.status == Friendship.Status.ACCEPTED and Friendship.objects.count() == 1
    assert selectors.are_friends(ana.pk, bea.pk)


def test_decline_cancel_and_remove(people):
    ana, bea, caio = people["ana"], people["bea"], people["caio"]
    asked = services.request_friend(user=ana, display_name="bea")
    services.decline_request(user=bea, request_id=asked.pk)
    assert not Friendship.objects.exists()
    asked = services.request_friend(user=ana, display_name="bea")  # may ask again later
    services.cancel_request(user=ana, request_id=asked.pk)
    assert not Friendship.objects.exists()
    befriend(ana, caio)
    services.set_usual_partner(user=ana, partner_id=caio.pk)
    services.set_usual_partner(user=caio, partner_id=ana.pk)
    services.remove_friend(user=caio, friend_id=ana.pk)
    assert selectors.friends_of(ana) == [] and not Friendship.objects.exists()
    assert selectors.usual_partner_of(ana) is None and selectors.usual_partner_of(caio) is None


def _guest_bea(p):
    make_guest(p["bea"])


def _guest_ana(p):
    make_guest(p["ana"])


def _ask(p):
    return services.request_friend(user=p["ana"], display_name="bea")


def _friends(p):
    return befriend(p["ana"], p["bea"])


def _bea_blocks_ana(p):
    services.block(user=p["bea"], person_id=p["ana"].pk)


def _ana_blocks_bea(p):
    services.block(user=p["ana"], person_id=p["bea"].pk)


def _request(p, who: str = "ana", name: str = "bea"):
    return services.request_friend(user=p[who], display_name=name)


#: name -> (setup, the refused call (people, what setup returned), its code)
REFUSALS = {
    "request to oneself": (None, lambda p, s: _request(p, name="ANA"), "self"),
    "request twice": (_ask, lambda p, s: _request(p), "already_asked"),
    "request to a friend": (_friends, lambda p, s: _request(p), "already_friends"),
    "request to who blocked you": (_bea_blocks_ana, lambda p, s: _request(p), "refused"),
    "request to whom you blocked": (_ana_blocks_bea, lambda p, s: _request(p), "blocked"),
    "request to a guest": (_guest_bea, lambda p, s: _request(p), "guest"),
    "request from a guest": (_guest_ana, lambda p, s: _request(p), "guest"),
    "request to nobody": (None, lambda p, s: _request(p, name="nobody"), "no_such_player"),
    "request to an empty name": (None, lambda p, s: _request(p, name="   "), "empty"),
    "accept your own request": (_ask, lambda p, s: services.accept_request(
        user=p["ana"], request_id=s.pk), "no_request"),
    "accept another's request": (_ask, lambda p, s: services.accept_request(
        user=p["caio"], request_id=s.pk), "no_request"),
    "accept an accepted one": (_friends, lambda p, s: services.accept_request(
        user=p["bea"], request_id=s.pk), "no_request"),
    "decline your own request": (_ask, lambda p, s: services.decline_request(
        user=p["ana"], request_id=s.pk), "no_request"),
    "cancel a request made to you": (_ask, lambda p, s: services.cancel_request(
        user=p["bea"], request_id=s.pk), "no_request"),
    "remove a stranger": (_ask, lambda p, s: services.remove_friend(
        user=p["ana"], friend_id=p["bea"].pk), "not_friend"),
    "block oneself": (None, lambda p, s: services.block(user=p["ana"], person_id=p["ana"].pk),
                      "self"),
    "block twice": (_ana_blocks_bea, lambda p, s: services.block(
        user=p["ana"], person_id=p["bea"].pk), "already_blocked"),
    "block nobody": (None, lambda p, s: services.block(user=p["ana"], person_id=10**9),
                     "no_such_player"),
    "unblock who is not blocked": (_bea_blocks_ana, lambda p, s: services.unblock(
        user=p["ana"], person_id=p["bea"].pk), "not_blocked"),
    "partner who is no friend": (_ask, lambda p, s: services.set_usual_partner(
        user=p["ana"], partner_id=p["bea"].pk), "not_friend"),
    "partner oneself": (None, lambda p, s: services.set_usual_partner(
        user=p["ana"], partner_id=p["ana"].pk), "not_friend"),
    "clear no partner": (_friends, lambda p, s: services.set_usual_partner(
        user=p["ana"], partner_id=None), "no_partner"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_every_refusal_says_why_and_changes_nothing(case, people):
    setup, call, code = REFUSALS[case]
    made = setup(people) if setup else None
    before = world()
    with pytest.raises(ServiceError) as refused:
        call(people, made)
    assert refused.value.code == code
    assert str(refused.value.message)
    assert world() == before


def test_a_refusal_never_tells_someone_they_were_blocked(people):
    services.block(user=people["bea"], person_id=people["ana"].pk)
    with pytest.raises(ServiceError) as refused:
        services.request_friend(user=people["ana"], display_name="bea")
    assert "block" not in refused.value.message.lower()
    assert "bea" in refused.value.message


def test_anonymous_people_are_refused(people):
    with pytest.raises(ServiceError) as refused:
        services.request_friend(user=AnonymousUser(), display_name="bea")
    assert refused.value.code == "not_signed_in"


# -- blocks ---------------------------------------------------------------------------------------

def test_a_block_ends_the_friendship_the_requests_and_the_usual_partner(people):
    ana, bea, caio = people["ana"], people["bea"], people["caio"]
    befriend(ana, bea)
    services.set_usual_partner(user=ana, partner_id=bea.pk)
    services.set_usual_partner(user=bea, partner_id=ana.pk)
    services.request_friend(user=caio, display_name="ana")
    services.block(user=ana, person_id=bea.pk)
    services.block(user=ana, person_id=caio.pk)
    assert not Friendship.objects.exists()
    assert selectors.usual_partner_of(ana) is None and selectors.usual_partner_of(bea) is None
    assert names(selectors.blocked_people(ana)) == ["caio", "bea"]
    assert selectors.blocked_ids(ana.pk) == {bea.pk, caio.pk}
    assert hooks.hidden_from(ana.pk) == {bea.pk, caio.pk}  # what the tables ask
    assert hooks.hidden_from(bea.pk) == set()  # one way: bea blocked nobody
    services.unblock(user=ana, person_id=bea.pk)
    assert hooks.hidden_from(ana.pk) == {caio.pk}


def test_invitations_from_someone_blocked_are_kept_but_neither_listed_nor_rung(
        people, monkeypatch, django_capture_on_commit_callbacks):
    rung = []
    monkeypatch.setattr(seats, "user_notified", lambda user_id, event: rung.append(user_id))
    host, ana, bea = people["host"], people["ana"], people["bea"]
    table = tables.create_table(host=host, preset="partners")
    services.block(user=ana, person_id=host.pk)
    with django_capture_on_commit_callbacks(execute=True):
        tables.invite(user=host, table_id=table.pk, display_name="ana")
        tables.invite(user=host, table_id=table.pk, display_name="bea")
    assert Invitation.objects.filter(table=table).count() == 2
    assert rung == [bea.pk]
    assert table_selectors.invitations_for(ana) == []
    assert [i.invitee for i in table_selectors.invitations_for(bea)] == [bea]
    services.unblock(user=ana, person_id=host.pk)
    assert [i.table for i in table_selectors.invitations_for(ana)] == [table]


def chat_of(table, user) -> list[tuple]:
    state = table_selectors.table_state(table_id=table.pk, user=user)
    return [(line["name"], line["text"]) for line in state["chat"]]


def test_a_block_hides_their_chat_from_the_blocker_at_once_and_only_from_them(people):
    ana, bea = people["ana"], people["bea"]
    table = seated_table(people)
    moderation.post_chat(user=bea, table_id=table.pk, text="hola a todos")
    moderation.post_chat(user=ana, table_id=table.pk, text="buena suerte")
    version = Table.objects.get(pk=table.pk).version
    services.block(user=ana, person_id=bea.pk)
    # The blocker's table moved on, with an event that names nobody.
    assert Table.objects.get(pk=table.pk).version == version + 1
    assert TableEvent.objects.get(table=table, version=version + 1).events \
        == [{"kind": "chat_view"}]
    assert chat_of(table, ana) == [("ana", "buena suerte")]
    assert chat_of(table, people["caio"]) == [("bea", "hola a todos"), ("ana", "buena suerte")]
    assert chat_of(table, bea) == [("bea", "hola a todos"), ("ana", "buena suerte")]
    moderation.post_chat(user=bea, table_id=table.pk, text="¿me oyes?")
    assert chat_of(table, ana) == [("ana", "buena suerte")]
    services.unblock(user=ana, person_id=bea.pk)
    assert Table.objects.get(pk=table.pk).version == version + 3
    assert [text for _name, text in chat_of(table, ana)] \
        == ["hola a todos", "buena suerte", "¿me oyes?"]


def test_a_block_bumps_only_the_open_tables_the_blocker_sits_at(people):
    ana, bea = people["ana"], people["bea"]
    mine = seated_table(people)
    elsewhere = tables.create_table(host=people["dani"], preset="partners", public=True)
    closed = tables.create_table(host=ana, preset="partners")
    tables.cancel_waiting(table_id=closed.pk, reason="host_left")
    before = dict(Table.objects.values_list("pk", "version"))
    services.block(user=ana, person_id=bea.pk)
    after = dict(Table.objects.values_list("pk", "version"))
    assert after[mine.pk] == before[mine.pk] + 1
    assert after[elsewhere.pk] == before[elsewhere.pk]
    assert after[closed.pk] == before[closed.pk]


# -- the usual partner ----------------------------------------------------------------------------

def test_the_usual_partner_is_a_friend_set_and_cleared(people):
    ana, bea, caio = people["ana"], people["bea"], people["caio"]
    assert selectors.usual_partner_of(ana) is None
    befriend(ana, bea)
    befriend(ana, caio)
    services.set_usual_partner(user=ana, partner_id=bea.pk)
    assert selectors.usual_partner_of(ana) == bea
    assert selectors.usual_partner_of(bea) is None  # kept per person
    services.set_usual_partner(user=ana, partner_id=caio.pk)
    assert selectors.usual_partner_of(ana) == caio
    assert [r.name for r in selectors.friends_of(ana) if r.usual_partner] == ["caio"]
    services.set_usual_partner(user=ana, partner_id=None)
    assert selectors.usual_partner_of(ana) is None


def test_usual_partner_of_nobody_signed_in_is_none(db):
    assert selectors.usual_partner_of(AnonymousUser()) is None
    assert selectors.usual_partner_of(None) is None


# -- online, and where ----------------------------------------------------------------------

def test_friends_online_first_with_the_public_table_they_are_at(people):
    ana, bea, caio, dani = people["ana"], people["bea"], people["caio"], people["dani"]
    for friend in (bea, caio, dani):
        befriend(ana, friend)
    public = tables.create_table(host=people["host"], preset="partners", public=True,
                                 name="Mesa 1")
    private = tables.create_table(host=people["host"], preset="draw", players=2)
    at_table(caio, public)  # watching a public table
    at_table(bea, private)  # at an invite-only one: online, but where is nobody's business
    rows = selectors.friends_of(ana)
    assert [(r.name, r.online, r.table) for r in rows] == [
        ("bea", True, None), ("caio", True, public), ("dani", False, None)]


def test_a_public_table_with_watching_off_is_not_offered(people):
    ana, bea = people["ana"], people["bea"]
    befriend(ana, bea)
    table = seated_table(people)
    tables.set_watching(user=people["host"], table_id=table.pk, allowed=False)
    at_table(people["dani"], table)
    befriend(ana, people["dani"])
    rows = {r.name: r for r in selectors.friends_of(ana)}
    assert rows["dani"].online and rows["dani"].table is None


def test_the_name_search_says_how_each_stands(people):
    ana = people["ana"]
    befriend(ana, people["bea"])
    services.request_friend(user=ana, display_name="caio")
    services.request_friend(user=people["dani"], display_name="ana")
    services.block(user=ana, person_id=people["host"].pk)
    make_guest(people["bea"])  # a friend who is a guest now is not found by search
    found = {r.name: r.relation for r in selectors.search(ana, "")}
    assert found == {}
    found = {r.name: r.relation for r in selectors.search(ana, "a")}
    assert found == {}  # starts with "a": ana herself only
    rows = {}
    for letter in "bcdh":
        rows.update({r.name: r.relation for r in selectors.search(ana, letter.upper())})
    assert rows == {"caio": "asked", "dani": "asking", "host": "blocked"}


# -- the rate limit ----------------------------------------------------------------------------

LIMIT = 10  # services.REQUESTS_LIMIT, as docs/friends.md gives it


def test_asking_and_withdrawing_over_and_over_is_limited(transactional_db, people):
    """Each request is counted after its commit in the shared cache (a withdrawn one leaves no
    row): the eleventh in ten minutes is refused, saying so, and changes nothing."""
    from django.utils import translation

    ana, bea, caio = people["ana"], people["bea"], people["caio"]
    for _attempt in range(LIMIT + 2):  # refusals are not counted
        with pytest.raises(ServiceError):
            services.request_friend(user=ana, display_name="nobody")
    for _cycle in range(LIMIT):
        row = services.request_friend(user=ana, display_name="bea")
        services.cancel_request(user=ana, request_id=row.pk)
    before = world()
    with translation.override("en"), pytest.raises(ServiceError) as err:
        services.request_friend(user=ana, display_name="caio")
    assert err.value.code == "rate_limited"
    assert err.value.message == ("You can send 10 friend requests in 10 minutes: wait a few "
                                 "minutes before the next.")
    assert world() == before
    services.request_friend(user=bea, display_name="caio")  # others are not held back
    services.request_friend(user=caio, display_name="ana")  # and ana may still be asked
