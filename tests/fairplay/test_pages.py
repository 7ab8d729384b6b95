"""Where the record shows: the seats in a table's state (refreshed on seat and match events),
the profile, and the staff pages beside reports (apps.moderation.staff_parts)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone, translation

from apps.accounts.services import set_language
from apps.fairplay import parts
from apps.moderation import services as mod
from apps.moderation import staff_parts
from apps.moderation.services import moderator_group
from apps.tables import selectors as table_selectors
from apps.tables import services as tables

from .conftest import block_table, finish_match, set_record


def seats_of(table, user=None, language="en") -> list[dict]:
    with translation.override(language):
        return table_selectors.table_state(table_id=table.pk, user=user)["seats"]


def test_each_seat_carries_its_persons_share_and_it_follows_the_match(people):
    set_record(people["host"], finished=4, abandoned=0)     # one short of being judged
    set_record(people["ana"], finished=9, abandoned=1)
    table = block_table(people, ("host", "ana", "bea"), start=False)
    seats = seats_of(table, people["outsider"])
    assert seats[0]["fairplay"] is None and "too few" in seats[0]["fairplay_label"]
    assert seats[1]["fairplay"] == 90 and "90%" in seats[1]["fairplay_label"]
    assert seats[2]["fairplay"] is None
    assert "fairplay" not in table_selectors.table_state(table_id=table.pk, user=None)
    es = seats_of(table, people["outsider"], "es")[1]["fairplay_label"]
    pt = seats_of(table, people["outsider"], "pt-br")[1]["fairplay_label"]
    assert len({es, pt, seats[1]["fairplay_label"]}) == 3 and "90%" in es and "90%" in pt

    tables.start_match(user=people["host"], table_id=table.pk)
    finish_match(table)
    # The snapshot of the version that ended the match already counts it.
    seats = seats_of(table, people["bea"])
    assert seats[0]["fairplay"] == 100
    assert seats[1]["fairplay"] == 90  # 10 of 11: still 90% rounded down
    assert seats[2]["fairplay"] is None


def test_a_seat_taken_shows_the_newcomers_share_at_once(people):
    set_record(people["outsider"], finished=3, abandoned=3)
    table = block_table(people, ("host", "ana", "bea"), start=False)
    tables.leave_table(user=people["bea"], table_id=table.pk)
    tables.join_table(user=people["outsider"], table_id=table.pk)
    assert seats_of(table)[2]["fairplay"] == 50


def test_practice_tables_show_no_share(people):
    set_record(people["ana"], finished=9, abandoned=1)
    practice = tables.open_practice(user=people["ana"], preset="block", players=2)
    assert all("fairplay" not in s for s in seats_of(practice, people["ana"]))


def test_the_profile_shows_the_share_and_the_wait(people):
    client = Client()
    client.force_login(people["ana"])
    page = client.get("/accounts/profile/").content.decode()
    assert 'id="fairplay"' in page and "Finish 5 more matches" in page
    now = timezone.now()
    set_record(people["ana"], finished=17, abandoned=3,
               times=[now - timedelta(minutes=m) for m in (90, 60, 10)])
    page = client.get("/accounts/profile/").content.decode()
    assert "85%" in page and "17 of your 20 matches" in page
    assert "3 matches in the last 24 hours" in page and "20 minutes" in page


def staff_client(role: str = "mod") -> Client:
    User = get_user_model()
    user = User.objects.create_user(username=role, password="pw-" + role * 2, is_staff=True)
    user.groups.add(moderator_group())
    set_language(user=user, language="en")
    client = Client()
    client.force_login(User.objects.get(pk=user.pk))
    return client


def test_staff_see_the_record_beside_reports_and_on_the_persons_page(people):
    table = block_table(people, ("host", "ana", "caio"), target=1000)
    tables.leave_table(user=people["caio"], table_id=table.pk)
    set_record(people["ana"], finished=7, abandoned=3)
    report = mod.report(user=people["host"], table_id=table.pk, reason="stalling", seat_index=1)
    mod.report(user=people["host"], table_id=table.pk, reason="abuse", seat_index=2)
    staff = staff_client()
    queue = staff.get("/staff/reports/").content.decode()
    assert "Fair play: 70% (3 of 10 left)" in queue
    assert "Fair play: new (1 judged, 1 left)" in queue
    assert "1 match left in the last 24 hours" in queue
    page = staff.get(f"/staff/reports/{report.pk}/").content.decode()
    assert "Fair play: 70%" in page
    caio = staff.get(f"/staff/users/{people['caio'].pk}/").content.decode()
    assert "<h2>Fair play</h2>" in caio
    assert f"at table {table.code}, match 1 (left during a round)" in caio
    assert "Started 1, finished 0, abandoned 1." in caio


def test_the_staff_registry_merges_every_part_and_skips_no_one(people):
    ana, bea = people["ana"], people["bea"]
    extra = staff_parts.StaffPart("zz-test", lambda ids: {i: f"note {i}" for i in ids},
                                  lambda user: {"title": "Test", "lines": [user.username]})
    staff_parts.register_staff_part(extra)
    try:
        with translation.override("en"):  # the words read below, whatever ran before
            notes = staff_parts.notes_for([ana.pk, None, bea.pk, ana.pk])
        assert sorted(notes) == sorted([ana.pk, bea.pk])
        assert notes[ana.pk][0].startswith("Fair play") and notes[ana.pk][1] == f"note {ana.pk}"
        assert [d["title"] for d in staff_parts.details_for(bea)][-1] == "Test"
        assert staff_parts.notes_for([None]) == {}
    finally:
        staff_parts._parts.pop("zz-test")
    assert parts.STAFF_PART.name in staff_parts._parts


@pytest.mark.parametrize("language", ["es", "pt-br"])
def test_every_fair_play_sentence_is_translated(people, language):
    from apps.fairplay import selectors

    now = timezone.now()
    record = set_record(people["ana"], finished=7, abandoned=3,
                        times=[now - timedelta(minutes=m) for m in (30, 20, 10)])
    mine = selectors.standing(people["ana"])
    new = selectors.Standing(1, 1, 0)
    english = {}
    for lang in ("en", language):
        with translation.override(lang):
            english[lang] = [selectors.share_words(mine), selectors.share_words(new),
                             selectors.wait_words(mine, now), selectors.minimum_words(80),
                             selectors.staff_note(mine, now), selectors.staff_note(new, now),
                             selectors.duration_words(timedelta(minutes=61)),
                             selectors.join_refusal(table=_FakeTable(), user=people["ana"])
                             or "", parts.staff_details(people["ana"])["lines"][1],
                             str(parts.staff_details(people["ana"])["title"])]
    for en, other in zip(english["en"], english[language], strict=True):
        assert en and other and en != other, (en, other)
    assert record.abandoned == 3


class _FakeTable:
    """A table whose host asks 80% (the refusal reads only its minimum)."""

    pk = -1


@pytest.fixture(autouse=True)
def _minimum_for_the_fake_table(monkeypatch):
    from apps.fairplay import selectors

    real = selectors.table_minimum
    monkeypatch.setattr(selectors, "table_minimum",
                        lambda table_id: 80 if table_id == -1 else real(table_id))


@pytest.mark.parametrize("language,words", [
    ("es", ("Juego limpio", "Porcentaje mínimo de juego limpio", "Guardar el mínimo",
            "Termina 5 partidas más", "cualquiera")),
    ("pt-br", ("Jogo limpo", "Porcentagem mínima de jogo limpo", "Salvar o mínimo",
               "Termine mais 5 partidas", "qualquer pessoa"))])
def test_the_pages_speak_every_language(people, language, words):
    set_language(user=people["host"], language=language)
    table = block_table(people, ("host", "ana"), start=False)
    client = Client()
    client.force_login(people["host"])
    html = client.get(f"/t/{table.code}/").content.decode() \
        + client.get("/accounts/profile/").content.decode()
    for expected in words:
        assert expected in html, expected
    for english in ("Fair play", "Minimum fair-play share", "Save the minimum",
                    "more matches to get", "0: anyone", "counts against it"):
        assert english not in html, english
