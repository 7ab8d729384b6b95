"""A host's minimum share: set before the start by the host only, enforced on every seat taken
(hooks.on_join_refusal) with a message naming it; newcomers are let in."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import translation

from apps.core.errors import ServiceError
from apps.fairplay import rules, services
from apps.fairplay.models import TableMinimum
from apps.tables import selectors as table_selectors
from apps.tables import services as tables
from apps.tables.models import Table

from .conftest import block_table, set_record


def version(table) -> int:
    return Table.objects.get(pk=table.pk).version


def refused(code: str, table, **kwargs) -> str:
    before = (version(table), list(TableMinimum.objects.values_list("table_id", "minimum")))
    with translation.override("en"), pytest.raises(ServiceError) as err:
        services.set_minimum(table_id=table.pk, **kwargs)
    assert err.value.code == code, err.value.message
    assert (version(table), list(TableMinimum.objects.values_list("table_id", "minimum"))) \
        == before
    return err.value.message


def test_the_host_sets_it_before_the_start_and_every_page_hears(people):
    table = block_table(people, ("host", "ana"), start=False)
    was = version(table)
    services.set_minimum(user=people["host"], table_id=table.pk, minimum=80)
    assert TableMinimum.objects.get(table=table).minimum == 80
    assert version(table) == was + 1
    state = table_selectors.table_state(table_id=table.pk, user=people["outsider"])
    assert state["fairplay"]["minimum"] == 80 and "80%" in state["fairplay"]["label"]
    services.set_minimum(user=people["host"], table_id=table.pk, minimum=0)
    assert not TableMinimum.objects.exists()
    assert "fairplay" not in table_selectors.table_state(table_id=table.pk, user=None)


def test_bad_minimums_and_wrong_people_are_refused_and_change_nothing(people):
    table = block_table(people, ("host", "ana"), start=False)
    services.set_minimum(user=people["host"], table_id=table.pk, minimum=50)
    for bad in (-1, 101, 1000, True, "80", 80.0, None):
        message = refused("bad_minimum", table, user=people["host"], minimum=bad)
        assert "0" in message and "100" in message
    refused("not_host", table, user=people["ana"], minimum=90)
    refused("not_host", table, user=people["outsider"], minimum=90)
    refused("not_signed_in", table, user=None, minimum=90)
    tables.start_match(user=people["host"], table_id=table.pk)
    assert "started" in refused("started", table, user=people["host"], minimum=90)
    assert TableMinimum.objects.get(table=table).minimum == 50


def test_quick_and_practice_tables_take_none(people):
    quick = tables.quick_play(user=people["host"], preset="block", players=2)
    refused("not_here", quick, user=people["host"], minimum=60)
    practice = tables.open_practice(user=people["ana"], preset="block", players=2)
    refused("not_here", practice, user=people["ana"], minimum=60)


def test_a_seat_is_refused_below_the_minimum_and_newcomers_sit(people):
    table = block_table(people, ("host", "ana", "bea", "caio"), start=False)
    for name in ("ana", "bea", "caio"):
        tables.leave_table(user=people[name], table_id=table.pk)
    services.set_minimum(user=people["host"], table_id=table.pk, minimum=80)
    set_record(people["ana"], finished=7, abandoned=3)      # 70%
    set_record(people["bea"], finished=1, abandoned=3)      # 4 judged: a newcomer
    set_record(people["caio"], finished=8, abandoned=2)     # exactly 80%
    was = version(table)
    with translation.override("en"), pytest.raises(ServiceError) as err:
        tables.join_table(user=people["ana"], table_id=table.pk)
    assert err.value.code == "refused"
    assert "80%" in err.value.message and "70%" in err.value.message
    assert version(table) == was and not table.seats.filter(user=people["ana"]).exists()
    tables.join_table(user=people["bea"], table_id=table.pk)
    tables.join_table(user=people["caio"], table_id=table.pk)
    tables.join_table(user=people["outsider"], table_id=table.pk)  # no record at all
    assert table.seats.filter(user__isnull=False).count() == 4
    assert rules.MATCHES_TO_JUDGE == 5


def test_a_seat_reserved_mid_match_is_refused_too(people):
    table = tables.create_table(host=people["host"], preset="block", players=2, public=True,
                                allow_bots=True, options={"turn_seconds": None})
    tables.add_bot(user=people["host"], table_id=table.pk)
    services.set_minimum(user=people["host"], table_id=table.pk, minimum=90)
    tables.start_match(user=people["host"], table_id=table.pk)
    set_record(people["ana"], finished=5, abandoned=5)
    with pytest.raises(ServiceError) as err:
        tables.join_table(user=people["ana"], table_id=table.pk)
    assert "90%" in err.value.message
    assert not table.seats.filter(reserved_for=people["ana"]).exists()


def test_the_table_page_offers_the_host_the_control_and_tells_the_others(people):
    table = block_table(people, ("host", "ana"), start=False)
    host, other = Client(), Client()
    host.force_login(people["host"])
    other.force_login(people["outsider"])
    page = host.get(f"/t/{table.code}/").content.decode()
    assert f'action="/fairplay/t/{table.code}/minimum/"' in page
    assert 'id="fairplay-minimum"' not in page
    assert "fairplay-form" not in other.get(f"/t/{table.code}/").content.decode()

    r = host.post(f"/fairplay/t/{table.code}/minimum/", {"minimum": "75"}, follow=True)
    assert TableMinimum.objects.get(table=table).minimum == 75
    assert "75%" in r.content.decode()
    page = other.get(f"/t/{table.code}/").content.decode()
    assert 'id="fairplay-minimum"' in page and "75%" in page

    for bad in ("abc", "", "150"):
        r = host.post(f"/fairplay/t/{table.code}/minimum/", {"minimum": bad}, follow=True)
        assert "between 0 and 100" in r.content.decode(), bad
    r = other.post(f"/fairplay/t/{table.code}/minimum/", {"minimum": "10"}, follow=True)
    assert "Only the host" in r.content.decode()
    assert TableMinimum.objects.get(table=table).minimum == 75
    assert Client().post(f"/fairplay/t/{table.code}/minimum/", {"minimum": "1"}) \
        .status_code == 302  # to the sign-in page
    assert host.get(f"/fairplay/t/{table.code}/minimum/").status_code == 405

    tables.start_match(user=people["host"], table_id=table.pk)
    page = host.get(f"/t/{table.code}/").content.decode()
    assert "fairplay-form" not in page and 'id="fairplay-minimum"' in page
