"""Registrations are rate limited per person, as the chat and the reviews are: ten in ten
minutes (inviting a partner included), counted in the shared cache (a registration taken back
leaves no row to count). The next one is refused with a message that says so, and changes
nothing; only what went through counts, and withdrawing is never refused."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import translation

from apps.club.models import LedgerEntry
from apps.core.errors import ServiceError
from apps.tournaments import services
from apps.tournaments.models import Entrant, PartnerInvitation, Tournament

from .conftest import new_tournament

pytestmark = pytest.mark.usefixtures("books")

#: ``services.REGISTRATIONS_LIMIT``, as docs/tournaments.md gives it.
LIMIT = 10


def world():
    return (Entrant.objects.count(), PartnerInvitation.objects.count(),
            LedgerEntry.objects.count(), list(Tournament.objects.values_list("version",
                                                                              flat=True)))


def test_registering_and_withdrawing_over_and_over_is_limited(people):
    ana = people["ana"]
    t = new_tournament(people, entry=100)
    pairs = new_tournament(people, preset="partners", players=4, target=50, entry=100)
    # Refusals cost nothing: they are not counted.
    for _attempt in range(LIMIT + 2):
        with pytest.raises(ServiceError):
            services.register(user=ana, tournament_id=pairs.pk, partner="nobody")
    for _cycle in range(LIMIT - 1):
        services.register(user=ana, tournament_id=t.pk)
        services.withdraw(user=ana, tournament_id=t.pk)
    services.register(user=ana, tournament_id=t.pk)  # the tenth
    services.withdraw(user=ana, tournament_id=t.pk)  # getting out is never refused
    before = world()
    with translation.override("en"), pytest.raises(ServiceError) as err:
        services.register(user=ana, tournament_id=t.pk)
    assert err.value.code == "rate_limited"
    assert err.value.message == ("You can register 10 times in 10 minutes: wait a few "
                                 "minutes before registering again.")
    with pytest.raises(ServiceError) as err:
        services.register(user=ana, tournament_id=pairs.pk, partner="bea")
    assert err.value.code == "rate_limited"
    assert world() == before
    # Someone else is not held back by ana's changes.
    services.register(user=people["bea"], tournament_id=t.pk)


def test_the_page_says_so(people):
    ana = people["ana"]
    t = new_tournament(people)
    for _cycle in range(LIMIT):
        services.register(user=ana, tournament_id=t.pk)
        services.withdraw(user=ana, tournament_id=t.pk)
    ana.profile.language = "en"
    ana.profile.save()
    client = Client()
    client.force_login(ana)
    html = client.post(f"/tournaments/{t.pk}/register/", follow=True).content.decode()
    assert "wait a few minutes before registering again" in html
    assert not Entrant.objects.exists()
