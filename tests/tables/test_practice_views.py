"""The home page (phone first, three languages) and its practice form: one POST from a visitor
to a started match against bots at the normal table page."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache

from apps.accounts.selectors import is_guest
from apps.tables import services
from apps.tables.models import Table

User = get_user_model()

#: The practice panel's title and the account panel's, per language.
WORDS = {"es": ("Juega contra bots ahora", "Tu cuenta", "Sala"),
         "pt-br": ("Jogue contra bots agora", "Sua conta", "Salão"),
         "en": ("Play against bots now", "Your account", "Lobby")}


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.mark.parametrize("language", WORDS)
def test_a_visitor_sees_practice_sign_in_and_the_lobby(client, people, language):
    waiting = services.create_table(host=people["ana"], preset="draw", players=3, public=True,
                                    name="Mesa de Ana")
    services.open_practice(user=people["bea"], preset="partners")  # never listed
    page = client.get("/", HTTP_ACCEPT_LANGUAGE=language)
    html = page.content.decode()
    for word in WORDS[language]:
        assert word in html
    assert 'action="/practice/"' in html and 'name="bot_level"' in html
    assert 'href="/accounts/login/"' in html and 'href="/accounts/signup/"' in html
    rows = page.context["lobby_rows"]
    assert [r["table"].pk for r in rows] == [waiting.pk] and "Mesa de Ana" in html
    assert "practice-four-only" in html  # practice.js's data, not an inline script
    assert "<script>" not in html and "style=" not in html


def test_a_member_sees_practice_and_everything_they_had(client, people, full_table):
    client.force_login(people["ana"])
    html = client.get("/").content.decode()
    for marker in ('action="/practice/"', 'name="code"', 'href="/tables/new/"',
                   f'href="/t/{full_table.code}/"'):
        assert marker in html
    assert "Tu cuenta" not in html


def test_a_guest_sees_their_tables_and_sign_up_not_create(client, db):
    client.post("/practice/", {"preset": "partners", "players": "4", "bot_level": "easy"})
    table = Table.objects.get()
    html = client.get("/").content.decode()
    assert f'href="/t/{table.code}/"' in html and "práctica" in html
    assert 'href="/tables/new/"' not in html and 'href="/accounts/signup/?next=/"' in html
    assert table.host.profile.display_name in html


def test_the_practice_form_opens_a_started_match_for_a_visitor(client, db):
    response = client.post("/practice/", {"preset": "partners", "players": "4",
                                          "bot_level": "medium", "turn_seconds": "30"},
                           HTTP_ACCEPT_LANGUAGE="en")
    table = Table.objects.get()
    assert response.status_code == 302 and response.url == f"/t/{table.code}/"
    assert table.practice and table.state == Table.State.PLAYING and not table.public
    assert table.options == {"turn_seconds": 30} and table.opened_from == "127.0.0.1"
    assert list(table.seats.filter(is_bot=True).values_list("bot_level", flat=True)) == [
        "medium"] * 3
    page = client.get(response.url)
    user = page.context["user"]
    assert user.pk == table.host_id and is_guest(user)
    assert user.profile.display_name.startswith("Guest ") and user.profile.language == "en"
    assert page.context["state"]["you"]["seat"] == 0
    # The page's socket may open this invite-only table: the session knows it.
    assert table.pk in client.session["tables_known"]


def test_a_member_practises_as_themselves(client, people):
    client.force_login(people["ana"])
    client.post("/practice/", {"preset": "block", "players": "2", "bot_level": "expert"})
    table = Table.objects.get()
    assert table.host == people["ana"] and table.seats.filter(is_bot=True).count() == 1
    assert User.objects.filter(profile__guest=True).count() == 0


@pytest.mark.parametrize("data", [
    {"preset": "nope", "bot_level": "easy"},
    {"preset": "draw", "players": "7", "bot_level": "easy"},
    {"preset": "draw", "players": "2", "bot_level": "grandmaster"},
    {"preset": "draw", "players": "2", "bot_level": "easy", "turn_seconds": "5"},
    {"preset": "partners", "players": "2", "bot_level": "easy"},
])
def test_bad_practice_input_gets_a_message_and_changes_nothing(client, db, data):
    response = client.post("/practice/", data)
    assert response.status_code == 400
    form = response.context["practice_form"]
    assert form.errors
    assert 'role="alert"' in response.content.decode()
    assert not Table.objects.exists() and not User.objects.exists()
    assert not response.context["user"].is_authenticated


def test_the_practice_limits_answer_429_with_the_reason(client, db, settings):
    settings.GUESTS_PER_ADDRESS_PER_HOUR = 1
    client.post("/practice/", {"preset": "draw", "players": "2", "bot_level": "easy"})
    other = client.__class__()
    response = other.post("/practice/", {"preset": "draw", "players": "2", "bot_level": "easy"})
    assert response.status_code == 429 and "última hora" in response.content.decode()
    assert User.objects.count() == 1
    settings.PRACTICE_TABLES_PER_ADDRESS = 1
    settings.GUESTS_PER_ADDRESS_PER_HOUR = 10
    response = other.post("/practice/", {"preset": "draw", "players": "2", "bot_level": "easy"})
    assert response.status_code == 429 and "mesas de práctica" in response.content.decode()


def test_practice_needs_a_post(client, db):
    assert client.get("/practice/").status_code == 405


def test_the_quick_play_place_is_kept_on_the_home_page(client, db):
    from django.template.loader import get_template

    assert get_template("tables/_quick_play.html")
    source = open(get_template("tables/home.html").origin.name).read()
    assert '{% include "tables/_quick_play.html" %}' in source
