"""The friends page (three languages) and the host's friends on the table page."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from apps.friends import selectors, services
from apps.friends.models import Block, Friendship
from apps.tables import services as tables
from apps.tables.models import Invitation

from .conftest import at_table, make_guest

pytestmark = pytest.mark.django_db


def client_for(user, language: str | None = None) -> Client:
    if language is not None:
        user.profile.language = language
        user.profile.save(update_fields=["language"])
    client = Client()
    client.force_login(user)
    return client


def befriend(a, b) -> None:
    row = services.request_friend(user=a, display_name=b.username)
    services.accept_request(user=b, request_id=row.pk)


def text_of(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


def test_signed_out_people_sign_in_and_guests_sign_up_first(people):
    assert Client().get("/friends/").url.startswith("/accounts/login/")
    make_guest(people["bea"])
    response = client_for(people["bea"]).get("/friends/")
    assert response.status_code == 302 and response.url.startswith("/accounts/signup/")


#: A few words of the page, by language.
WORDS = {
    "es": ["Amigos", "Solicitudes de amistad", "Te lo pidieron", "Esperando respuesta",
           "Bloqueados", "Compañero habitual", "en línea", "desconectado"],
    "pt-br": ["Amigos", "Pedidos de amizade", "Pediram a você", "Esperando resposta",
              "Bloqueados", "Parceiro de sempre", "online", "offline"],
    "en": ["Friends", "Friend requests", "Asked of you", "Waiting for an answer", "Blocked",
           "Usual partner", "online", "offline"],
}


@pytest.mark.parametrize("language", list(WORDS))
def test_the_page_shows_friends_online_and_where_requests_both_ways_and_blocks(
        language, people):
    ana, bea, caio, dani, host = (people[n] for n in ("ana", "bea", "caio", "dani", "host"))
    eva = get_user_model().objects.create_user(username="eva", password="pw-evaeva")
    befriend(ana, bea)
    befriend(ana, caio)
    services.request_friend(user=dani, display_name="ana")  # asked of ana
    services.request_friend(user=ana, display_name="host")  # asked by ana
    table = tables.create_table(host=host, preset="partners", public=True, name="Mesa Sol")
    at_table(bea, table)
    services.block(user=ana, person_id=eva.pk)
    response = client_for(ana, language).get("/friends/")
    assert response.status_code == 200
    page = text_of(response)
    for word in WORDS[language]:
        assert word in page, (language, word)
    # bea is online at a public table: a link to it; caio is offline.
    assert f'href="/t/{table.code}/"' in page and "Mesa Sol" in page
    friends = page.split('id="friend-list"')[1].split("</ul>")[0]
    assert friends.index("bea") < friends.index("caio")
    assert 'id="outgoing"' in page and "host" in page.split('id="outgoing"')[1]
    assert "dani" in page.split('id="incoming"')[1].split("</ul>")[0]
    assert "eva" in page.split('id="blocked"')[1]


def test_incoming_requests_are_listed_with_accept_decline_and_block(people):
    ana = people["ana"]
    row = services.request_friend(user=people["dani"], display_name="ana")
    page = text_of(client_for(ana, "en").get("/friends/"))
    incoming = page.split('id="incoming"')[1].split("</ul>")[0]
    assert "dani" in incoming
    for action in (f"/friends/requests/{row.pk}/accept/", f"/friends/requests/{row.pk}/decline/",
                   f"/friends/people/{people['dani'].pk}/block/"):
        assert f'action="{action}"' in incoming


def test_adding_accepting_partnering_removing_and_blocking_through_the_page(people):
    ana, bea = people["ana"], people["bea"]
    as_ana, as_bea = client_for(ana, "en"), client_for(bea, "en")
    response = as_ana.post("/friends/add/", {"display_name": "Bea"}, follow=True)
    assert "Friend request sent." in text_of(response)
    row = Friendship.objects.get()
    response = as_bea.post(f"/friends/requests/{row.pk}/accept/", follow=True)
    assert "You are friends now." in text_of(response)
    as_ana.post("/friends/partner/", {"partner": str(bea.pk)})
    assert selectors.usual_partner_of(ana) == bea
    assert "usual partner" in text_of(as_ana.get("/friends/"))
    as_ana.post("/friends/partner/", {"partner": ""})
    assert selectors.usual_partner_of(ana) is None
    as_ana.post(f"/friends/people/{bea.pk}/remove/")
    assert not Friendship.objects.exists()
    as_ana.post(f"/friends/people/{bea.pk}/block/")
    assert Block.objects.filter(blocker=ana, blocked=bea).exists()
    as_ana.post(f"/friends/people/{bea.pk}/unblock/")
    assert not Block.objects.exists()


def test_a_refused_form_says_why_in_the_persons_language_and_changes_nothing(people):
    response = client_for(people["ana"], "es").post("/friends/add/",
                                                    {"display_name": "nadie"}, follow=True)
    assert "Nadie se llama nadie." in text_of(response)
    assert not Friendship.objects.exists()
    response = client_for(people["ana"], "pt-br").post("/friends/partner/", {"partner": "x"},
                                                       follow=True)
    assert "Só um amigo pode ser seu parceiro de sempre." in text_of(response)


def test_the_name_search_lists_people_with_add_and_block(people):
    page = text_of(client_for(people["ana"], "en").get("/friends/?q=ca"))
    results = page.split('id="results"')[1].split("</ul>")[0]
    assert "caio" in results and 'action="/friends/add/"' in results
    assert f'action="/friends/people/{people["caio"].pk}/block/"' in results
    page = text_of(client_for(people["ana"], "en").get("/friends/?q=zz"))
    assert "Nobody’s name starts with “zz”." in page or "Nobody's name starts with" in page


# -- the table page -------------------------------------------------------------------------

def test_the_host_sees_their_friends_and_invites_one_in_one_click(people):
    host, ana, bea, caio = people["host"], people["ana"], people["bea"], people["caio"]
    for friend in (ana, bea, caio):
        befriend(host, friend)
    table = tables.create_table(host=host, preset="partners")
    other = tables.create_table(host=people["dani"], preset="draw", players=2)
    at_table(bea, other)  # online (at some table)
    tables.join_table(user=caio, table_id=table.pk, code=table.code)
    as_host = client_for(host, "en")
    page = text_of(as_host.get(f"/t/{table.code}/"))
    invites = page.split('class="friend-invites"')[1].split("</section>")[0]
    # Online first; caio sits here already, so he has no button.
    assert invites.index("bea") < invites.index("ana")
    assert "Invite bea" in invites and "Invite ana" in invites and "Invite caio" not in invites
    assert "seated here" in invites and "online" in invites and "offline" in invites
    response = as_host.post(f"/t/{table.code}/invite/", {"display_name": "ana"}, follow=True)
    assert response.status_code == 200
    assert Invitation.objects.filter(table=table, invitee=ana, inviter=host).exists()
    assert "Invite ana again" in text_of(response)


def test_only_the_host_sees_the_friends_list(people):
    host, ana = people["host"], people["ana"]
    befriend(ana, people["bea"])
    table = tables.create_table(host=host, preset="partners", public=True)
    tables.join_table(user=ana, table_id=table.pk)
    page = text_of(client_for(ana, "en").get(f"/t/{table.code}/"))
    assert "friend-invites" not in page
    befriend(host, people["caio"])
    page = text_of(client_for(host, "en").get(f"/t/{table.code}/"))
    assert "friend-invites" in page


def test_a_host_without_friends_is_pointed_to_the_friends_page(people):
    table = tables.create_table(host=people["host"], preset="partners")
    page = text_of(client_for(people["host"], "pt-br").get(f"/t/{table.code}/"))
    invites = page.split('class="friend-invites"')[1].split("</section>")[0]
    assert 'href="/friends/"' in invites and "Nenhum amigo ainda." in invites
