"""Table pages: home (codes, invitations), lobby, create form, table shell, record download."""

from __future__ import annotations

import json
import random

import pytest
from django.core.cache import cache
from django.urls import reverse

from apps.accounts.services import set_language
from apps.tables import services
from apps.tables.models import Table
from apps.tables.views import CODE_FAILURES_LIMIT

from .conftest import play_random_move, position

HEADINGS = {
    "es": ("Únete con un código", "Sala", "Crear una mesa", "Tu mano"),
    "pt-br": ("Entre com um código", "Salão", "Criar uma mesa", "Sua mão"),
    "en": ("Join with a code", "Lobby", "Create a table", "Your hand"),
}


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def signed_in(client, people):
    client.force_login(people["host"])
    return client


@pytest.mark.parametrize("language", HEADINGS)
def test_pages_render_in_the_profile_language(client, people, full_table, language):
    set_language(user=people["host"], language=language)
    client.force_login(people["host"])
    home, lobby, create, table = HEADINGS[language]
    checks = [(reverse("home"), home), (reverse("tables:lobby"), lobby),
              (reverse("tables:create"), create),
              (reverse("tables:table", args=[full_table.code]), table)]
    for url, text in checks:
        response = client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert f'<html lang="{language}">' in html
        assert text in html, (url, text)


def test_anonymous_home_links_to_sign_in_and_up(client, db):
    html = client.get(reverse("home")).content.decode()
    assert reverse("accounts:login") in html and reverse("accounts:signup") in html
    assert 'name="code"' not in html


def test_healthz_still_answers(client, db):
    assert client.get("/healthz").status_code in (200, 503)


def test_create_table_makes_the_host_sit_and_redirects(signed_in, people):
    response = signed_in.post(reverse("tables:create"), {
        "preset": "tranca", "players": "3", "target": "150", "hand_size": "5",
        "turn_seconds": "", "public": "on", "bot_level": "easy", "bot_think_ms": "500",
        "allow_bots": "on"})
    table = Table.objects.get(host=people["host"])
    assert response.status_code == 302
    assert response["Location"] == reverse("tables:table", args=[table.code])
    assert (table.preset, table.players) == ("tranca", 3)
    assert table.public and table.allow_bots
    assert table.options == {"target": 150, "hand_size": 5, "turn_seconds": None}
    assert table.seats.get(index=0).user == people["host"]


def test_partners_keep_45_seconds_unless_the_field_is_emptied(signed_in, people):
    base = {"preset": "partners", "bot_level": "medium", "bot_think_ms": "1000"}
    signed_in.post(reverse("tables:create"), {**base, "turn_seconds": "45"})
    signed_in.post(reverse("tables:create"), {**base, "turn_seconds": ""})
    limits = [t.options["turn_seconds"] for t in Table.objects.order_by("pk")]
    assert limits == [45, None]


@pytest.mark.parametrize("fields, message", [
    ({"preset": "partners", "players": "2"}, "exactly four players"),
    ({"preset": "partners", "target": "75"}, "in steps of 50"),
    ({"preset": "tranca", "target": "120"}, "50, 100 or 150"),
    ({"preset": "draw", "hand_size": "5"}, "cannot change"),
    ({"preset": "partners", "best_of": "3"}, "no such option"),
])
def test_create_form_refuses_inconsistent_options_with_the_reason(signed_in, people, fields,
                                                                   message):
    set_language(user=people["host"], language="en")
    data = {"bot_level": "medium", "bot_think_ms": "1000", **fields}
    response = signed_in.post(reverse("tables:create"), data)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Table.objects.exists()


def test_create_form_shows_each_presets_ranges(signed_in):
    html = signed_in.get(reverse("tables:create")).content.decode()
    assert "50 a 500" in html or "50 to 500" in html


def test_join_by_code_from_home(client, people):
    table = services.create_table(host=people["host"], preset="partners", public=False)
    client.force_login(people["ana"])
    response = client.post(reverse("home"), {"code": f" {table.code.lower()} "})
    assert response.status_code == 302
    assert response["Location"] == reverse("tables:table", args=[table.code])
    assert table.seats.get(index=1).user == people["ana"]


def test_wrong_code_gives_a_clear_message_then_is_rate_limited(client, people):
    table = services.create_table(host=people["host"], preset="partners")
    set_language(user=people["ana"], language="en")
    client.force_login(people["ana"])
    for _ in range(CODE_FAILURES_LIMIT):
        response = client.post(reverse("home"), {"code": "ZZZZZZ"})
        assert response.status_code == 200
        assert "No open table has that code." in response.content.decode()
    # Now even the right code waits: guessing is what is being slowed down.
    response = client.post(reverse("home"), {"code": table.code})
    assert response.status_code == 429
    assert "Too many wrong codes" in response.content.decode()
    assert not table.seats.filter(user=people["ana"]).exists()


def test_lobby_lists_public_tables_with_free_seats(client, people):
    public = services.create_table(host=people["host"], preset="partners", public=True)
    hidden = services.create_table(host=people["ana"], preset="partners", public=False)
    client.force_login(people["bea"])
    html = client.get(reverse("tables:lobby")).content.decode()
    assert reverse("tables:join", args=[public.code]) in html
    assert hidden.code not in html
    client.post(reverse("tables:join", args=[public.code]))
    assert public.seats.get(index=1).user == people["bea"]


def test_invitation_shows_on_home_and_joins_with_one_click(client, people):
    table = services.create_table(host=people["host"], preset="partners", public=False)
    client.force_login(people["host"])
    name = people["bea"].profile.display_name
    response = client.post(reverse("tables:invite", args=[table.code]), {"display_name": name})
    assert response.status_code == 302
    client.force_login(people["bea"])
    html = client.get(reverse("home")).content.decode()
    assert reverse("tables:join", args=[table.code]) in html
    client.post(reverse("tables:join", args=[table.code]))
    assert table.seats.get(index=1).user == people["bea"]
    html = client.get(reverse("home")).content.decode()
    assert reverse("tables:join", args=[table.code]) not in html


def test_invite_only_table_cannot_be_joined_without_the_code(client, people):
    table = services.create_table(host=people["host"], preset="partners", public=False)
    client.force_login(people["outsider"])
    client.post(reverse("tables:join", args=[table.code]))
    assert not table.seats.filter(user=people["outsider"]).exists()


def test_table_page_shows_join_button_and_host_invite_form(client, people):
    table = services.create_table(host=people["host"], preset="partners", public=True)
    client.force_login(people["ana"])
    html = client.get(reverse("tables:table", args=[table.code])).content.decode()
    assert reverse("tables:join", args=[table.code]) in html
    assert reverse("tables:invite", args=[table.code]) not in html
    assert 'id="table-strings"' in html and "js/table.js" in html
    client.force_login(people["host"])
    html = client.get(reverse("tables:table", args=[table.code])).content.decode()
    assert reverse("tables:invite", args=[table.code]) in html
    assert table.code in html


def _hand_tiles(record: dict) -> set[str]:
    return {t for rnd in record["rounds"] for hand in rnd["hands"] for t in hand}


def test_record_download_holds_finished_rounds_only(client, people, full_table):
    services.start_match(user=people["host"], table_id=full_table.pk)
    client.force_login(people["ana"])
    url = reverse("tables:record", args=[full_table.code])
    data = json.loads(client.get(url).content)
    assert data["rounds"] == [] and data["players"] == 4
    rng = random.Random(7)
    while position(full_table)[0].current is not None:
        play_random_move(full_table, rng)
    services.next_round(user=people["host"], table_id=full_table.pk)
    play_random_move(full_table, rng)
    response = client.get(url)
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    data = json.loads(response.content)
    assert len(data["rounds"]) == 1  # the second round is being played: not in the record
    second = full_table.current_match.rounds.get(number=1)
    assert second.hands not in [r["hands"] for r in data["rounds"]]
    from apps.rules import harness
    replay = harness.load(data)
    assert replay.current is None and len(replay.rounds) == 1
    assert json.loads(client.get(url + "?match=1").content) == data


def test_record_is_for_the_table_only(client, people, full_table):
    services.start_match(user=people["host"], table_id=full_table.pk)
    client.force_login(people["outsider"])
    assert client.get(reverse("tables:record", args=[full_table.code])).status_code == 404


def test_the_record_link_is_offered_once_a_round_is_finished(client, people, full_table):
    services.start_match(user=people["host"], table_id=full_table.pk)
    client.force_login(people["ana"])
    page = reverse("tables:table", args=[full_table.code])
    link = reverse("tables:record", args=[full_table.code])
    assert link not in client.get(page).content.decode()
    rng = random.Random(8)
    while position(full_table)[0].current is not None:
        play_random_move(full_table, rng)
    assert link in client.get(page).content.decode()


def test_a_waiting_table_leaves_the_lobby_when_its_last_person_leaves_the_page(client, people):
    table = services.create_table(host=people["host"], preset="partners", public=True)
    client.force_login(people["bea"])
    lobby = reverse("tables:lobby")
    services.connect(user=people["host"], table_id=table.pk, channel_name="host-tab")
    assert table.code in client.get(lobby).content.decode()
    services.disconnect(channel_name="host-tab")
    assert table.code not in client.get(lobby).content.decode()
    services.connect(user=people["host"], table_id=table.pk, channel_name="host-back")
    assert table.code in client.get(lobby).content.decode()


def test_a_table_closed_by_staff_says_so_on_every_later_visit(client, people, full_table):
    services.start_match(user=people["host"], table_id=full_table.pk)
    services.close_by_staff(table_id=full_table.pk, reason="cheating")
    client.force_login(people["ana"])
    html = client.get(reverse("tables:table", args=[full_table.code])).content.decode()
    assert 'id="closed"' in html and "cheating" in html
    state = json.loads(html.split('id="table-initial" type="application/json">')[1]
                       .split("</script>")[0])
    assert state["table"]["state"] == "closed"
    assert state["view"] is None  # the voided round is never shown


def test_create_page_starts_from_the_hosts_bot_think_time(client, people):
    profile = people["host"].profile
    profile.bot_think_ms = 2500
    profile.save()
    client.force_login(people["host"])
    html = client.get(reverse("tables:create")).content.decode()
    assert 'name="bot_think_ms" value="2500"' in html


def test_table_page_shows_the_bots_think_time_and_the_options(client, people):
    table = services.create_table(host=people["host"], preset="partners", public=True,
                                  allow_bots=True, bot_think_ms=1500)
    set_language(user=people["host"], language="en")
    client.force_login(people["host"])
    html = client.get(f"/t/{table.code}/").content.decode()
    assert "bots think at least 1.5 s" in html
    for name in ("tile_size", "game_speed", "sounds", "arrange_tiles", "auto_play"):
        assert f'name="{name}"' in html, name
    assert 'data-sounds="/static/sounds/"' in html


def test_a_player_can_leave_a_started_match_after_a_confirmation(client, people, full_table):
    """The table page offers a seated person a way to leave the match once it is on (the
    server takes it: a bot plays the hand out): a confirmation first, which says a bot takes
    the seat and what it means for their fair-play record. The host keeps their seat."""
    ana = people["ana"]
    set_language(user=ana, language="en")
    services.start_match(user=people["host"], table_id=full_table.pk)
    page = reverse("tables:table", args=[full_table.code])
    client.force_login(ana)
    html = client.get(page).content.decode()
    offer = html[html.index('id="leave-match"'):html.index("</details>", html.index(
        'id="leave-match"'))]
    assert "hidden" not in offer.split(">")[0]
    assert "a bot plays your hand" in offer and "fair-play record" in offer
    assert f'action="{reverse("tables:leave", args=[full_table.code])}"' in offer
    response = client.post(reverse("tables:leave", args=[full_table.code]), follow=True)
    html = response.content.decode()
    assert "You left the match: a bot plays your hand" in html
    seat = full_table.seats.get(index=1)
    assert seat.user == ana and seat.leaving  # the bot plays her hand to the round's end
    offer = html[html.index('id="leave-match"'):]
    assert "hidden" in offer.split(">")[0]  # asked once: not offered again
    # The host keeps their seat (the table's rule): nothing is offered them.
    set_language(user=people["host"], language="en")
    client.force_login(people["host"])
    assert 'id="leave-match"' not in client.get(page).content.decode()


@pytest.mark.parametrize("closing", ["empty", "staff"])
def test_a_table_closed_mid_round_keeps_that_round_in_its_record(client, people, full_table,
                                                                   closing):
    """Seed 001's rule closes a table nobody holds for two minutes, mid-round or not (staff
    may close one too): the round it stopped is in the downloadable record, every move of it,
    so the players can see what happened; the harness takes a record stopped mid-round."""
    from datetime import timedelta

    from django.utils import timezone

    from apps.rules import harness

    services.start_match(user=people["host"], table_id=full_table.pk)
    rng = random.Random(7)
    while position(full_table)[0].current is not None:
        play_random_move(full_table, rng)
    services.next_round(user=people["host"], table_id=full_table.pk)
    for _move in range(3):
        play_random_move(full_table, rng)
    stopped = full_table.current_match.rounds.get(number=1)
    client.force_login(people["ana"])
    url = reverse("tables:record", args=[full_table.code])
    assert len(json.loads(client.get(url).content)["rounds"]) == 1  # open: finished only
    if closing == "empty":
        now = timezone.now()
        Table.objects.filter(pk=full_table.pk).update(empty_since=now)
        services.close_empty(table_id=full_table.pk, now=now + timedelta(minutes=3))
    else:
        services.close_by_staff(table_id=full_table.pk, reason="testing")
    data = json.loads(client.get(url).content)
    assert len(data["rounds"]) == 2
    assert data["rounds"][1]["hands"] == stopped.hands
    assert len(data["rounds"][1]["moves"]) == stopped.moves.count() >= 3
    replay = harness.load(data)  # a record stopped mid-round
    assert replay.current is not None and len(replay.current.history) >= 3
    page = client.get(reverse("tables:table", args=[full_table.code])).content.decode()
    assert url in page
