"""Pairs: naming a partner. The registrant pays the pair's two entries, and too few coins for
both says what the pair needs and what the person has."""

from __future__ import annotations

import pytest
from django.utils import translation

from apps.club.models import Wallet
from apps.core.errors import ServiceError
from apps.tournaments import services
from apps.tournaments.models import Entrant

from .conftest import new_tournament

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
