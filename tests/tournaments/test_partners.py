"""Pairs: naming a partner invites them, and the pair is registered only when they accept
(docs/tournaments.md, "Registration"). The inviter pays both entries when inviting; the place
is held, counted against the size, until the partner accepts, declines, the inviter withdraws,
or the tournament starts or is cancelled, when both entries go back. Too few coins for both
says what the pair needs and what the person has; a block either way refuses the name."""

from __future__ import annotations

import pytest
from django.utils import translation

from apps.club.models import Wallet
from apps.core.errors import ServiceError
from apps.tournaments import events, services
from apps.tournaments.models import Entrant, PartnerInvitation, Team

from .conftest import new_tournament, register_pair, start

pytestmark = pytest.mark.usefixtures("books")


def coins(user) -> int:
    return Wallet.objects.get(pk=user.pk).coins


def pairs_tournament(people, **options):
    return new_tournament(people, preset="partners", players=4, target=50, **options)


def test_too_few_coins_for_a_pair_gives_the_pairs_entries_and_the_whole_balance(people):
    t = pairs_tournament(people, entry=600)
    ana = people["ana"]
    assert coins(ana) == 1000
    with translation.override("en"), pytest.raises(ServiceError) as err:
        services.register(user=ana, tournament_id=t.pk, partner="bea")
    assert err.value.code == "short"
    assert err.value.message == "A pair's entries are 1200 coins (600 each) and you have 1000."
    assert coins(ana) == 1000 and not Entrant.objects.exists()
    # Alone, the one entry and the balance, as before.
    dear = new_tournament(people, entry=1500)
    with translation.override("en"), pytest.raises(ServiceError) as err:
        services.register(user=ana, tournament_id=dear.pk)
    assert err.value.message == "The entry is 1500 coins and you have 1000."


def test_a_block_either_way_refuses_naming_that_partner_neutrally(people):
    from apps.friends import services as friends

    ana, bea, caio = people["ana"], people["bea"], people["caio"]
    t = pairs_tournament(people, entry=100)
    friends.block(user=bea, person_id=ana.pk)  # bea does not want to hear from ana
    with translation.override("en"), pytest.raises(ServiceError) as err:
        services.register(user=ana, tournament_id=t.pk, partner="bea")
    assert err.value.code == "refused"
    assert err.value.message == "You cannot name bea as your partner."  # says nothing of why
    friends.block(user=ana, person_id=caio.pk)  # ana's own block: nothing to hide
    with translation.override("en"), pytest.raises(ServiceError) as err:
        services.register(user=ana, tournament_id=t.pk, partner="caio")
    assert err.value.code == "blocked" and "unblock" in err.value.message
    assert coins(ana) == 1000 and not Entrant.objects.exists()


def pairs_of(t) -> list[list[str]]:
    return [[e.user.username for e in team.members.order_by("created_at", "pk")]
            for team in Team.objects.filter(tournament=t).order_by("pk")]


def page(client_user, t) -> str:
    from django.test import Client

    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.cookies["django_language"] = "en"
    client.force_login(client_user)
    client_user.profile.language = "en"
    client_user.profile.save()
    return client.get(f"/tournaments/{t.pk}/").content.decode()


def test_naming_a_partner_invites_them_and_the_pair_is_registered_when_they_accept(people):
    from django.test import Client

    ana, bea = people["ana"], people["bea"]
    t = pairs_tournament(people, entry=100)
    heard = []

    def listener(sender, **kwargs):
        heard.append(kwargs)

    events.partner_invited.connect(listener)
    try:
        invitation = services.register(user=ana, tournament_id=t.pk, partner="bea")
    finally:
        events.partner_invited.disconnect(listener)
    # Nobody is registered yet: the place is held and ana paid both entries.
    assert not Entrant.objects.filter(tournament=t).exists()
    assert isinstance(invitation, PartnerInvitation) and invitation.invitee == bea
    assert (coins(ana), coins(bea)) == (800, 1000)
    assert heard == [{"signal": events.partner_invited, "invitation_id": invitation.pk,
                      "tournament_id": t.pk, "inviter_id": ana.pk, "invitee_id": bea.pk}]
    # bea sees it on the tournament page and on the home page; ana sees that she waits.
    html = page(bea, t)
    assert "ana invites you to play this tournament as their partner" in html
    assert f"/invitations/{invitation.pk}/accept/" in html
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(bea)
    home = client.get("/").content.decode()
    assert "ana invites you to play Copa as their partner." in home
    assert f"/tournaments/{t.pk}/invitations/{invitation.pk}/accept/" in home
    assert "You invited bea to play as your partner" in page(people["ana"], t)
    # bea accepts (from the page's button): the pair is registered, ana first, paid by ana.
    response = client.post(f"/tournaments/{t.pk}/invitations/{invitation.pk}/accept/",
                           follow=True)
    assert "You are registered as a pair." in response.content.decode()
    assert pairs_of(t) == [["ana", "bea"]]
    assert set(Entrant.objects.values_list("paid_by", flat=True)) == {ana.pk}
    assert not PartnerInvitation.objects.exists()
    assert (coins(ana), coins(bea)) == (800, 1000)
    assert "ana invites you" not in client.get("/").content.decode()


def test_a_held_place_counts_against_the_size_until_the_answer(people):
    t = pairs_tournament(people, entry=100, max_teams=2)
    services.register(user=people["ana"], tournament_id=t.pk, partner="bea")
    services.register(user=people["caio"], tournament_id=t.pk, partner="dani")
    with translation.override("en"), pytest.raises(ServiceError) as err:
        services.register(user=people["eva"], tournament_id=t.pk, find_partner=True)
    assert err.value.code == "full"
    services.decline_partner(user=people["dani"],
                             invitation_id=PartnerInvitation.objects.get(invitee=people["dani"]).pk)
    assert coins(people["caio"]) == 1000  # both entries back to who paid them
    services.register(user=people["eva"], tournament_id=t.pk, find_partner=True)


def test_the_hold_ends_when_the_inviter_withdraws_or_the_tournament_starts(people):
    ana, bea, caio, dani = (people[n] for n in ("ana", "bea", "caio", "dani"))
    t = pairs_tournament(people, entry=100, rounds=1)
    services.register(user=ana, tournament_id=t.pk, partner="bea")
    assert services.withdraw(user=ana, tournament_id=t.pk).invitee == bea
    assert coins(ana) == 1000 and not PartnerInvitation.objects.exists()
    # Invited again, then the start comes before bea answers: ana is not registered, and
    # gets both entries back; the tournament goes on with the pairs that are.
    invitation = services.register(user=ana, tournament_id=t.pk, partner="bea")
    register_pair(t, caio, dani)
    register_pair(t, people["eva"], people["fabio"])
    t = start(t)
    assert t.state == "running"
    assert coins(ana) == 1000 and not PartnerInvitation.objects.exists()
    assert not Entrant.objects.filter(user__in=[ana, bea]).exists()
    with translation.override("en"), pytest.raises(ServiceError) as err:
        services.accept_partner(user=bea, invitation_id=invitation.pk)
    assert err.value.code == "no_invitation"


def test_a_cancelled_tournament_ends_the_holds_and_refunds(people):
    t = pairs_tournament(people, entry=100)
    services.register(user=people["ana"], tournament_id=t.pk, partner="bea")
    services.cancel(user=people["root"], tournament_id=t.pk)
    assert coins(people["ana"]) == 1000 and not PartnerInvitation.objects.exists()


def test_who_is_invited_answers_first_and_is_not_invited_twice(people):
    ana, bea, caio = people["ana"], people["bea"], people["caio"]
    t = pairs_tournament(people, entry=100)
    invitation = services.register(user=ana, tournament_id=t.pk, partner="bea")
    before = (coins(ana), coins(bea), coins(caio), PartnerInvitation.objects.count())
    with translation.override("en"):
        for code, call in (
                ("invited", lambda: services.register(user=bea, tournament_id=t.pk,
                                                      find_partner=True)),
                ("partner_invited", lambda: services.register(user=caio, tournament_id=t.pk,
                                                              partner="bea")),
                ("partner_registered", lambda: services.register(
                    user=caio, tournament_id=t.pk, partner="ana")),
                ("registered", lambda: services.register(user=ana, tournament_id=t.pk,
                                                         partner="caio")),
                ("no_invitation", lambda: services.accept_partner(
                    user=caio, invitation_id=invitation.pk)),
                ("no_invitation", lambda: services.decline_partner(
                    user=ana, invitation_id=invitation.pk))):
            with pytest.raises(ServiceError) as err:
                call()
            assert err.value.code == code, (code, err.value.message)
    with translation.override("en"), pytest.raises(ServiceError) as err:
        services.register(user=bea, tournament_id=t.pk, partner="caio")
    assert err.value.message == "ana has invited you to play as a pair: accept or decline first."
    assert (coins(ana), coins(bea), coins(caio), PartnerInvitation.objects.count()) == before


def test_a_block_made_after_the_invitation_keeps_it_from_becoming_a_pair(people):
    from apps.friends import services as friends

    ana, bea = people["ana"], people["bea"]
    t = pairs_tournament(people, entry=100)
    invitation = services.register(user=ana, tournament_id=t.pk, partner="bea")
    friends.block(user=ana, person_id=bea.pk)
    with pytest.raises(ServiceError) as err:
        services.accept_partner(user=bea, invitation_id=invitation.pk)
    assert err.value.code == "no_invitation" and not Entrant.objects.exists()
    services.decline_partner(user=bea, invitation_id=invitation.pk)  # she may still say no
    assert coins(ana) == 1000
    # bea's own block hides the invitation from her and holds her no more.
    friends.unblock(user=ana, person_id=bea.pk)
    services.register(user=ana, tournament_id=t.pk, partner="bea")
    friends.block(user=bea, person_id=ana.pk)
    assert "ana invites you" not in page(bea, t)
    services.register(user=bea, tournament_id=t.pk, find_partner=True)
