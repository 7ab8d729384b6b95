"""Table names: the host names a table (at creation or later), checked like a display name,
and every page a player sees shows it: the lobby, the table page, the home page's list."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import translation

from apps.accounts.services import set_language
from apps.core.words import blocked_word
from apps.moderation import services as mod
from apps.tables import services
from apps.tables.models import Table
from apps.tables.names import normalize_table_name, table_name_problem
from apps.tables.services import ServiceError


@pytest.mark.parametrize("text,word", [
    ("fuck", "fuck"), ("FUCK", "fuck"), ("fuuuuck", "fuck"), ("f.u.c.k", "fuck"),
    ("f u c k you", "fuck"), ("Fuckers united", "fuckers"), ("sh!t", "shit"),
    ("M3rd4", "merda"), ("PUTA!", "puta"), ("cabrón", "cabron"), ("Coño", "coño"),
    ("hijueputas", "hijueputa"), ("a s s", "ass"),
])
def test_blocked_words_are_found_however_written(text, word):
    assert blocked_word(text) == word


@pytest.mark.parametrize("text", [
    "Mesa de Ana", "computador", "disputa", "enviado", "as tres", "Cono de helado",
    "class", "Scunthorpe", "bass", "Pass the 6-6", "Ñandú", "Mesa do Zé", "Puttering",
])
def test_innocent_words_that_contain_a_blocked_one_pass(text):
    assert blocked_word(text) is None


def test_operators_can_add_words(settings):
    assert blocked_word("Mesa Zorglub") is None
    settings.MODERATION_EXTRA_BLOCKED_WORDS = ["zorglub"]
    assert blocked_word("Mesa Zorglub") == "zorglub"


@pytest.mark.parametrize("name,ok", [
    ("Mesa de Ana", True), ("Ana's table!", True), ("Sexta à noite (6-6)", True),
    ("x" * 40, True), ("x" * 41, False), ("<b>bold</b>", False), ("🂡 tiles", False),
    ("!!!", False), ("Mesa\u202eanA", False), ("Tab\tle", True),  # whitespace is squeezed
    ("fuck this", False), ("", True),
])
def test_name_rules(name, ok):
    assert (table_name_problem(normalize_table_name(name)) is None) is ok


def test_the_host_names_the_table_at_creation(people):
    table = services.create_table(host=people["host"], preset="partners",
                                  name="  Mesa   de Ana ")
    assert table.name == "Mesa de Ana"
    with pytest.raises(ServiceError) as err, translation.override("en"):
        services.create_table(host=people["host"], preset="partners", name="puta madre")
    assert err.value.code == "bad_name" and "word" in err.value.message
    assert Table.objects.count() == 1


def test_the_host_renames_the_table_and_only_the_host(people, full_table):
    version = Table.objects.get(pk=full_table.pk).version
    services.rename_table(user=people["host"], table_id=full_table.pk, name="Sunday club")
    table = Table.objects.get(pk=full_table.pk)
    assert table.name == "Sunday club" and table.version == version + 1
    for user, code in ((people["ana"], "not_host"), (people["host"], "bad_name")):
        with pytest.raises(ServiceError) as err:
            services.rename_table(user=user, table_id=table.pk,
                                  name="Shit" if code == "bad_name" else "Mine")
        assert err.value.code == code
    assert Table.objects.get(pk=table.pk).name == "Sunday club"
    services.rename_table(user=people["host"], table_id=table.pk, name="")
    assert Table.objects.get(pk=table.pk).name == ""


def test_a_closed_table_keeps_its_name(people, full_table):
    services.rename_table(user=people["host"], table_id=full_table.pk, name="Old")
    Table.objects.filter(pk=full_table.pk).update(state=Table.State.CLOSED)
    with pytest.raises(ServiceError) as err:
        services.rename_table(user=people["host"], table_id=full_table.pk, name="New")
    assert err.value.code == "closed"


def test_the_create_form_names_the_table_and_shows_a_refusal_by_the_field(client, people):
    client.force_login(people["host"])
    data = {"preset": "partners", "turn_seconds": 45, "public": "on", "bot_level": "medium",
            "bot_think_ms": 1000}
    response = client.post(reverse("tables:create"), {**data, "name": "M3rd4 total"})
    assert response.status_code == 200 and not Table.objects.exists()
    assert response.context["form"].errors["name"]
    response = client.post(reverse("tables:create"), {**data, "name": "Mesa de Ana"})
    table = Table.objects.get()
    assert response.status_code == 302 and table.name == "Mesa de Ana"


def test_players_see_the_name_in_the_lobby_on_the_table_page_and_at_home(client, people):
    table = services.create_table(host=people["host"], preset="partners", public=True)
    services.join_table(user=people["ana"], table_id=table.pk)
    services.rename_table(user=people["host"], table_id=table.pk, name="Mesa de Ana")
    client.force_login(people["outsider"])
    assert "Mesa de Ana" in client.get(reverse("tables:lobby")).content.decode()
    page = client.get(reverse("tables:table", args=[table.code])).content.decode()
    assert 'id="table-name" class="table-name">Mesa de Ana</p>' in page
    assert "<title>Mesa de Ana ·" in page
    assert reverse("tables:rename", args=[table.code]) not in page  # not the host
    client.force_login(people["ana"])
    assert "Mesa de Ana" in client.get(reverse("home")).content.decode()


def test_the_host_renames_from_the_table_page(client, people, full_table):
    client.force_login(people["host"])
    url = reverse("tables:table", args=[full_table.code])
    assert reverse("tables:rename", args=[full_table.code]) in client.get(url).content.decode()
    response = client.post(reverse("tables:rename", args=[full_table.code]),
                           {"name": "Sexta à noite"}, follow=True)
    assert 'class="table-name">Sexta à noite</p>' in response.content.decode()
    set_language(user=people["ana"], language="en")
    client.force_login(people["ana"])
    response = client.post(reverse("tables:rename", args=[full_table.code]),
                           {"name": "Mine"}, follow=True)
    assert Table.objects.get(pk=full_table.pk).name == "Sexta à noite"
    assert "Only the host can do that." in response.content.decode()


def test_a_staff_rename_shows_where_players_look(client, people):
    root = get_user_model().objects.create_superuser(username="root", password="pw-rootroot")
    table = services.create_table(host=people["host"], preset="partners", public=True,
                                  name="Bad name")
    mod.rename_by_staff(actor=root, table_id=table.pk, name="Table 7", reason="offensive")
    client.force_login(people["outsider"])
    lobby = client.get(reverse("tables:lobby")).content.decode()
    page = client.get(reverse("tables:table", args=[table.code])).content.decode()
    assert "Table 7" in lobby and "Table 7" in page and "Bad name" not in lobby + page
    with pytest.raises(ServiceError) as err:
        mod.rename_by_staff(actor=root, table_id=table.pk, name="<script>")
    assert err.value.code == "bad_name"


# Bots' names: "Bot" alone, numbered in seat order when several sit at a table.

def test_seat_names_number_the_bots_only_when_there_are_several():
    from apps.tables.names import seat_names

    with translation.override("en"):
        assert seat_names(["ana", "", "", ""], [False, True, True, True]) == [
            "ana", "Bot 1", "Bot 2", "Bot 3"]
        assert seat_names(["", "ana", "bea", "caio"], [True, False, False, False]) == [
            "Bot", "ana", "bea", "caio"]
        # An empty seat stays nameless.
        assert seat_names(["ana", "", "", "bea"], [False, False, True, False]) == [
            "ana", "", "Bot", "bea"]


@pytest.mark.django_db
def test_the_table_state_and_its_sentences_say_which_bot(people):
    from apps.tables import state

    table = services.create_table(host=people["host"], preset="partners", allow_bots=True,
                                  options={"turn_seconds": None})
    for _ in range(3):
        services.add_bot(user=people["host"], table_id=table.pk)
    snap = state.build_latest(table.pk)
    for language, bot in (("en", "Bot"), ("es", "Bot"), ("pt-br", "Bot")):
        names = [s["name"] for s in state.compose(
            snap, state.Viewer(user_id=people["host"].pk, language=language))["seats"]]
        assert names == ["host", f"{bot} 1", f"{bot} 2", f"{bot} 3"], language
    services.remove_bot(user=people["host"], table_id=table.pk, seat_index=2)
    services.join_table(user=people["ana"], table_id=table.pk, code=table.code)
    services.remove_bot(user=people["host"], table_id=table.pk, seat_index=3)
    services.join_table(user=people["bea"], table_id=table.pk, code=table.code)
    snap = state.build_latest(table.pk)
    names = [s["name"] for s in state.compose(
        snap, state.Viewer(user_id=people["host"].pk, language="en"))["seats"]]
    assert names == ["host", "Bot", "ana", "bea"]
