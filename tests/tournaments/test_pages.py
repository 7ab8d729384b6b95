"""The tournament pages (list, creation, one tournament and its live part) and the page's
socket, ``ws/tournament/<id>/``."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from apps.accounts.services import set_language
from apps.tournaments import services
from apps.tournaments.models import Entrant, Tournament
from tests.socket_client import Socket, db

from .conftest import current_games, make_people, new_tournament, play_out, show_up, start


def client_for(user=None, language: str = "en") -> Client:
    """A browser in ``language`` (a signed-in person's profile language wins, so it is set
    there too)."""
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.cookies["django_language"] = language
    if user is not None:
        set_language(user=user, language=language)
        client.force_login(user)
    return client


def test_staff_create_a_tournament_from_the_form(people):
    starts = (timezone.now() + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    data = {"name": "Copa de Verão", "preset": "partners", "players": "4", "format": "swiss",
            "rounds": "3", "best_of": "1", "starts_at": starts, "turn_seconds": "45",
            "target": "", "entry": "100", "prize_split": "60, 30, 10", "prize_added": "0",
            "max_teams": "8"}
    ana = client_for(people["ana"])
    assert ana.get("/tournaments/new/").status_code == 302  # not staff: sent back
    ana.post("/tournaments/new/", data)
    assert not Tournament.objects.exists()
    root = client_for(people["root"])
    page = root.get("/tournaments/new/").content.decode()
    assert 'name="prize_added"' in page and 'name="starts_at"' in page
    response = root.post("/tournaments/new/", data)
    t = Tournament.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/tournaments/{t.pk}/"
    assert (t.name, t.preset, t.players, t.entry, t.prize_split, t.max_teams, t.turn_seconds) \
        == ("Copa de Verão", "partners", 4, 100, [60, 30, 10], 8, 45)
    # A refusal comes back as the service's message, in the person's language.
    root = client_for(people["root"], "pt-br")
    page = root.post("/tournaments/new/", {**data, "prize_split": "50, 40"}, follow=True)
    assert "somando 100" in page.content.decode() and t.pk == Tournament.objects.get().pk


def test_registering_from_the_page_and_the_page_in_each_state(people):
    rng = random.Random(3)
    t = new_tournament(people, entry=100, prize_split=[100], rounds=1)
    anon = Client().get(f"/tournaments/{t.pk}/").content.decode()
    assert "Copa" in anon and "/accounts/login/" in anon
    for name in ("ana", "bea"):
        response = client_for(people[name]).post(f"/tournaments/{t.pk}/register/",
                                                 follow=True)
        assert "You are registered." in response.content.decode()
    html = client_for(people["caio"]).get(f"/tournaments/{t.pk}/").content.decode()
    assert "ana" in html and "bea" in html and "Pot: 200 coins." in html
    assert 'data-socket="/ws/tournament/' in html
    twice = client_for(people["ana"]).post(f"/tournaments/{t.pk}/register/", follow=True)
    assert "You are registered already." in twice.content.decode()
    t = start(t)
    game, = current_games(t)
    live = client_for(people["caio"]).get(f"/tournaments/{t.pk}/live/")
    assert live["Cache-Control"] == "no-store"
    html = live.content.decode()
    assert "Live tables" in html and f"/t/{game.table.code}/" in html  # a watchable link
    assert "Standings" in html and "Round 1" in html
    assert "Go to your table" not in html  # caio does not play
    mine = client_for(people["ana"]).get(f"/tournaments/{t.pk}/live/").content.decode()
    assert "Go to your table" in mine.split("Live tables")[0]
    assert f'href="/t/{game.table.code}/">Go to your table' in mine.replace("\n", "")
    show_up(game)
    play_out(game.table_id, rng)
    html = client_for().get(f"/tournaments/{t.pk}/live/").content.decode()
    assert "Finished" in html and "Prizes paid" in html and "200" in html
    listing = client_for().get("/tournaments/").content.decode()
    assert "Past tournaments" in listing and "Copa" in listing


def test_the_page_speaks_spanish_and_portuguese(people):
    t = new_tournament(people, format="knockout", best_of=3)
    for language, words in (("es", "Eliminatoria"), ("pt-br", "Mata-mata")):
        client = client_for(people["ana"], language)
        html = client.get(f"/tournaments/{t.pk}/").content.decode()
        assert words in html, language


def test_a_knockout_page_draws_its_bracket(people):
    t = new_tournament(people, format="knockout")
    for name in ("ana", "bea", "caio"):
        services.register(user=people[name], tournament_id=t.pk)
    start(t)
    html = client_for(people["ana"]).get(f"/tournaments/{t.pk}/live/").content.decode()
    assert 'class="bracket"' in html and "bye" in html


def test_withdraw_and_cancel_buttons(people):
    t = new_tournament(people, entry=10)
    ana = client_for(people["ana"])
    ana.post(f"/tournaments/{t.pk}/register/")
    assert "Withdraw" in ana.get(f"/tournaments/{t.pk}/").content.decode()
    ana.post(f"/tournaments/{t.pk}/withdraw/")
    assert not Entrant.objects.exists()
    assert "Cancel the tournament" not in ana.get(f"/tournaments/{t.pk}/").content.decode()
    root = client_for(people["root"])
    assert "Cancel the tournament" in root.get(f"/tournaments/{t.pk}/").content.decode()
    root.post(f"/tournaments/{t.pk}/cancel/")
    assert Tournament.objects.get(pk=t.pk).state == "cancelled"


# -- the socket ---------------------------------------------------------------------------

@pytest.fixture
def live_people(transactional_db):
    return make_people(("ana", "bea"))


@pytest.mark.django_db(transaction=True)
async def test_the_socket_rings_when_the_tournament_changes(live_people):
    t = await db(new_tournament)(live_people)
    sock = Socket(f"/ws/tournament/{t.pk}/", live_people["bea"])
    assert await sock.connect()
    assert await sock.recv() == {"type": "changed"}  # read what you may have missed
    await db(services.register)(user=live_people["ana"], tournament_id=t.pk)
    assert await sock.recv() == {"type": "changed"}
    await sock.send({"type": "ping"})
    assert await sock.recv() == {"type": "pong"}
    await sock.send({"type": "register"})
    assert (await sock.recv())["code"] == "unknown"
    await sock.comm.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_the_socket_is_for_signed_in_people_and_real_tournaments(live_people):
    anon = Socket("/ws/tournament/1/")
    assert await anon.connect()
    assert await anon.close_code() == 4401
    missing = Socket("/ws/tournament/999/", live_people["ana"])
    assert await missing.connect()
    closing = await missing.recv()
    assert closing["code"] == 4404
    # Said of a tournament, not of a table (the table socket's words, once).
    assert closing["message"] in {"This tournament does not exist.", "Este torneo no existe.",
                                  "Este torneio não existe."}, closing
    assert await missing.close_code() == 4404


def test_the_pairs_form_suggests_the_usual_partner(people):
    """A person's usual partner (apps.friends) is the partner the form starts with."""
    from apps.friends import services as friends

    asked = friends.request_friend(user=people["ana"], display_name="bea")
    friends.accept_request(user=people["bea"], request_id=asked.pk)
    friends.set_usual_partner(user=people["ana"], partner_id=people["bea"].pk)
    pairs = new_tournament(people, preset="partners", players=4, target=50)
    html = client_for(people["ana"]).get(f"/tournaments/{pairs.pk}/").content.decode()
    assert 'name="partner" value="bea"' in html.replace("\n", " ")
    html = client_for(people["caio"]).get(f"/tournaments/{pairs.pk}/").content.decode()
    assert 'name="partner" value="bea"' not in html


def test_a_guest_registering_is_sent_to_sign_up_and_comes_back_to_the_page(people):
    """docs/tournaments.md: guests are sent to sign up (a visitor to sign in), then back to
    the tournament's page, not to the address they posted to."""
    from urllib.parse import urlencode

    t = new_tournament(people)
    page = f"/tournaments/{t.pk}/"
    guest = people["ana"]
    guest.profile.guest = True
    guest.profile.save(update_fields=["guest"])
    client = client_for(guest)
    assert "/accounts/signup/?next=" in client.get(page).content.decode()
    response = client.post(f"{page}register/")
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/signup/?{urlencode({'next': page})}"
    signup = client.get(response["Location"]).content.decode()
    assert "Sign up to play in tournaments." in signup
    assert not Entrant.objects.exists()
    response = Client().post(f"{page}register/")
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={page}"
