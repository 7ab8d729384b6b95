"""Quick-chat phrases: who may say them (muted players yes, watchers only where the host
allows it, practice tables nobody), the unknown ones, the shared rate limit, each reader's
language, and the pure composition (hypothesis) that leaves out blocked people's lines."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser
from django.test import Client
from django.utils import timezone, translation
from hypothesis import given
from hypothesis import strategies as st

from apps.core.errors import ServiceError
from apps.moderation import phrases, quick_chat
from apps.moderation import services as mod
from apps.moderation.models import ChatMessage, ChatSettings, Mute
from apps.moderation.selectors import compose_part
from apps.tables import selectors as table_selectors
from apps.tables import services as tables
from apps.tables.models import Connection, Table
from apps.tables.state import Viewer

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _in_english():
    """Refusals are read in English here (the site's default language is Spanish)."""
    with translation.override("en"):
        yield


def world(table) -> tuple:
    table.refresh_from_db()
    return (table.version, list(ChatMessage.objects.values_list("pk", "text", "phrase")),
            list(ChatSettings.objects.values_list("table_id", "watcher_phrases")))


def watch(user, table) -> None:
    Connection.objects.create(table=table, user=user, channel_name=f"w.{user.pk}.{table.pk}")


def say(user, table, phrase: str = "good_one"):
    return quick_chat.post_phrase(user=user, table_id=table.pk, phrase=phrase)


def refused(call, table, code: str) -> str:
    before = world(table)
    with pytest.raises(ServiceError) as err:
        call()
    assert err.value.code == code
    assert world(table) == before
    return err.value.message


def test_a_seated_player_says_a_phrase_and_the_table_moves_on(people, table):
    version = world(table)[0]
    msg = say(people["ana"], table, "capicua")
    assert (msg.phrase, msg.text) == ("capicua", "Capicua!")
    table.refresh_from_db()
    assert table.version == version + 1
    state = table_selectors.table_state(table_id=table.pk, user=people["bea"])
    line = state["chat"][-1]
    assert (line["phrase"], line["seat"], line["name"], line["id"]) == ("capicua", 1, "ana",
                                                                        msg.pk)
    assert state["you"]["can_phrase"] is True


def test_a_muted_player_may_still_use_phrases_but_not_free_chat(people, table):
    Mute.objects.create(user=people["ana"], reason="shouting", by=people["root"],
                        until=timezone.now() + timedelta(hours=1))
    refused(lambda: mod.post_chat(user=people["ana"], table_id=table.pk, text="hey"), table,
            "muted")
    say(people["ana"], table, "well_played")
    assert ChatMessage.objects.get().phrase == "well_played"


def test_a_watcher_is_refused_unless_the_host_allows_it(people, table):
    outsider = people["outsider"]
    watch(outsider, table)
    state = table_selectors.table_state(table_id=table.pk, user=outsider)
    assert state["you"]["watching"] and state["you"]["can_phrase"] is False
    message = refused(lambda: say(outsider, table), table, "not_seated")
    assert "host" in message
    quick_chat.set_watcher_phrases(user=people["host"], table_id=table.pk, allowed=True)
    state = table_selectors.table_state(table_id=table.pk, user=outsider)
    assert state["table"]["watcher_phrases"] and state["you"]["can_phrase"] is True
    msg = say(outsider, table, "clap")
    assert msg.text == "👏"
    line = table_selectors.table_state(table_id=table.pk, user=people["ana"])["chat"][-1]
    assert (line["seat"], line["name"], line["text"]) == (None, "outsider", "👏")
    # Still no free chat for a watcher, allowed phrases or not.
    refused(lambda: mod.post_chat(user=outsider, table_id=table.pk, text="hi"), table,
            "not_seated")
    # Someone not even at the page is not a watcher.
    refused(lambda: say(people["mod"], table), table, "not_watching")
    quick_chat.set_watcher_phrases(user=people["host"], table_id=table.pk, allowed=False)
    refused(lambda: say(outsider, table), table, "not_seated")


def test_only_the_host_turns_the_switch(people, table):
    for name in ("ana", "outsider", "mod"):
        refused(lambda n=name: quick_chat.set_watcher_phrases(
            user=people[n], table_id=table.pk, allowed=True), table, "not_host")


def test_an_unknown_phrase_is_refused(people, table):
    for bad in ("nope", "", "Good one!", "GOOD_ONE"):
        message = refused(lambda b=bad: say(people["ana"], table, b), table, "unknown_phrase")
        assert message == "There is no such phrase."


def test_a_burst_of_phrases_is_refused_and_shares_the_chats_limit(people, table):
    for _ in range(mod.CHAT_LIMIT - 1):
        say(people["ana"], table, "lucky")
    mod.post_chat(user=people["ana"], table_id=table.pk, text="and words")
    message = refused(lambda: say(people["ana"], table, "lucky"), table, "rate_limited")
    assert "too fast" in message
    refused(lambda: mod.post_chat(user=people["ana"], table_id=table.pk, text="x"), table,
            "rate_limited")
    say(people["bea"], table, "lucky")  # the limit is per person
    ChatMessage.objects.filter(user=people["ana"]).update(
        created_at=timezone.now() - mod.CHAT_WINDOW - timedelta(seconds=1))
    say(people["ana"], table, "lucky")  # after the window, again


def test_a_practice_table_takes_no_phrase(people):
    practice = tables.open_practice(user=people["ana"], preset="partners")
    practice = Table.objects.get(pk=practice.pk)
    assert table_selectors.table_state(table_id=practice.pk,
                                       user=people["ana"])["you"]["can_phrase"] is False
    message = refused(lambda: say(people["ana"], practice), practice, "practice")
    assert "practice" in message
    refused(lambda: quick_chat.set_watcher_phrases(user=people["ana"], table_id=practice.pk,
                                                   allowed=True), practice, "practice")


def test_a_closed_table_and_a_signed_out_person_are_refused(people, table):
    refused(lambda: say(AnonymousUser(), table), table, "not_signed_in")
    mod.close_table(actor=people["mod"], table_id=table.pk, reason="abuse")
    refused(lambda: say(people["ana"], table), table, "closed")


@pytest.mark.parametrize(("language", "words"), [("es", "¡Buena!"), ("pt-br", "Boa!"),
                                                 ("en", "Good one!")])
def test_each_reader_gets_the_phrase_in_their_own_language(language, words, people, table):
    say(people["ana"], table, "good_one")
    people["bea"].profile.language = language
    people["bea"].profile.save()
    with translation.override(language):
        state = table_selectors.table_state(table_id=table.pk, user=people["bea"])
    assert state["chat"][-1]["text"] == words


#: The menu as a Spanish and a Brazilian player read it (the reactions need no words).
TABLE_TALK = {
    "good_one": ("¡Buena!", "Boa!"), "i_pass": ("Paso", "Passo"),
    "capicua": ("¡Capicúa!", "Capicua!"), "thanks_partner": ("Gracias, compañero",
                                                         "Obrigado, parceiro"),
    "good_game": ("Buena partida", "Boa partida"), "lucky": ("¡Qué suerte!", "Que sorte!"),
    "hurry": ("Rápido, por favor", "Mais rápido, por favor"),
    "well_played": ("Bien jugado", "Bem jogado"),
    "clap": ("👏", "👏"), "laugh": ("😂", "😂"), "pray": ("🙏", "🙏"),
}


def test_every_phrase_is_translated_in_every_language():
    assert set(TABLE_TALK) == set(phrases.PHRASES)
    for phrase_id, english in phrases.PHRASES.items():
        assert phrases.texts(phrase_id) == {"es": TABLE_TALK[phrase_id][0],
                                            "pt-br": TABLE_TALK[phrase_id][1], "en": english}
    with_labels = [p for p in phrases.menu() if p["reaction"]]
    assert [p["label"] for p in with_labels] == ["Applause", "Laughing",
                                                 "Thank you (hands together)"]


def test_staff_may_hide_and_delete_a_phrase_like_any_line(people, table):
    msg = say(people["ana"], table, "hurry")
    mod.hide_message(actor=people["mod"], message_id=msg.pk)
    assert table_selectors.table_state(table_id=table.pk, user=people["bea"])["chat"] == []
    mod.delete_message(actor=people["root"], message_id=msg.pk)
    msg.refresh_from_db()
    assert (msg.text, msg.phrase, msg.deleted) == ("", "", True)


def test_the_host_switch_on_the_table_page(people, table):
    client = Client()
    client.force_login(people["host"])
    page = client.get(f"/t/{table.code}/").content.decode()
    assert f'action="/t/{table.code}/phrases/"' in page and 'data-phrase="capicua"' in page
    client.post(f"/t/{table.code}/phrases/", {"allowed": "1"})
    assert ChatSettings.objects.get(table=table).watcher_phrases is True
    other = Client()
    other.force_login(people["ana"])
    response = other.post(f"/t/{table.code}/phrases/", {"allowed": "0"}, follow=True)
    assert "Solo el anfitrión puede hacer eso." in response.content.decode()  # ana's Spanish
    assert ChatSettings.objects.get(table=table).watcher_phrases is True
    assert f'action="/t/{table.code}/phrases/"' not in other.get(f"/t/{table.code}/") \
        .content.decode()


# -- composing: pure ------------------------------------------------------------------------------

LANGS = ("es", "pt-br", "en")
lines = st.lists(st.tuples(st.integers(1, 6), st.sampled_from([None, *phrases.PHRASES])),
                 max_size=30)


@given(lines=lines, blocked=st.sets(st.integers(1, 6)), viewer=st.integers(1, 6),
       language=st.sampled_from(LANGS))
def test_composing_leaves_out_exactly_the_blocked_and_translates_phrases(lines, blocked,
                                                                        viewer, language):
    chat = []
    for n, (author, phrase) in enumerate(lines):
        line = {"id": n, "seat": None, "name": f"p{author}", "at": n,
                "text": phrases.PHRASES[phrase] if phrase else f"words {n}"}
        if phrase:
            line["phrase"] = phrase
        chat.append(line)
    texts = {p: {lang: f"{p} in {lang}" for lang in LANGS} for _a, p in lines if p}
    data = {"chat": chat, "authors": [a for a, _p in lines], "phrases": texts,
            "hidden": {str(viewer): sorted(blocked)} if blocked else {}, "mutes": {}}
    state = {"you": {"seat": 0}, "table": {"state": "playing"}}
    compose_part(data, state, Viewer(viewer, language))
    kept = [(n, a, p) for n, (a, p) in enumerate(lines) if a not in blocked]
    assert [line["id"] for line in state["chat"]] == [n for n, _a, _p in kept]
    for line, (n, _a, p) in zip(state["chat"], kept, strict=True):
        assert line["text"] == (f"{p} in {language}" if p else f"words {n}")
    assert data["chat"] == chat  # the snapshot's own lines are never changed


def test_staff_pages_show_a_phrase_in_the_staff_members_language(people, table):
    say(people["ana"], table, "good_one")
    client = Client()
    client.force_login(people["mod"])  # Spanish, the site's default
    page = client.get(f"/staff/tables/{table.pk}/").content.decode()
    assert "¡Buena!" in page


def test_a_guest_may_use_phrases_where_their_words_are_refused(people, table):
    """A guest's words at other people's tables could not be answered for; a fixed phrase
    says nothing that needs answering for."""
    people["ana"].profile.guest = True
    people["ana"].profile.save(update_fields=["guest"])
    refused(lambda: mod.post_chat(user=people["ana"], table_id=table.pk, text="hola"), table,
            "guest")
    assert say(people["ana"], table, "good_game").phrase == "good_game"
