"""Watching a table (issue 13): watchers are counted, never present, never chat, and the host
may turn watching off. The sockets themselves are in tests/realtime/test_watching.py."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone, translation

from apps.core import snapshots
from apps.moderation import services as moderation
from apps.tables import selectors, services, state
from apps.tables.models import Seat, Table
from apps.tables.services import ServiceError

from .conftest import play_random_move


def started(table: Table, people) -> Table:
    services.start_match(user=people["host"], table_id=table.pk)
    return Table.objects.get(pk=table.pk)


def everyone_connects(table: Table, people) -> None:
    for name in ("host", "ana", "bea", "caio"):
        services.connect(user=people[name], table_id=table.pk, channel_name=f"c-{name}")


def presence(table_id: int) -> tuple:
    table = Table.objects.get(pk=table_id)
    seats = tuple(Seat.objects.filter(table_id=table_id).order_by("index")
                  .values_list("away_since", "standin"))
    return seats, table.empty_since, table.paused


def test_a_watcher_is_counted_and_never_touches_presence(full_table, people):
    table = started(full_table, people)
    everyone_connects(table, people)
    before = presence(table.pk)
    version = Table.objects.get(pk=table.pk).version
    services.connect(user=people["outsider"], table_id=table.pk, channel_name="w-1")
    services.connect(user=people["outsider"], table_id=table.pk, channel_name="w-2")  # 2 tabs
    assert presence(table.pk) == before
    # The first tab changes the count (one new version), the second changes nothing.
    assert Table.objects.get(pk=table.pk).version == version + 1
    for name in ("host", "outsider"):
        seen = selectors.table_state(table_id=table.pk, user=people[name])
        assert seen["watchers"] == 1
    watcher = selectors.table_state(table_id=table.pk, user=people["outsider"])
    assert watcher["you"]["seat"] is None and watcher["you"]["watching"] is True
    assert watcher["view"]["hand"] == [] and watcher["view"]["legal"] == []
    assert selectors.table_state(table_id=table.pk, user=people["ana"])["you"]["watching"] is False
    services.disconnect(channel_name="w-1")
    assert selectors.table_state(table_id=table.pk, user=people["host"])["watchers"] == 1
    services.disconnect(channel_name="w-2")
    assert selectors.table_state(table_id=table.pk, user=people["host"])["watchers"] == 0
    assert presence(table.pk) == before


def test_players_gone_the_table_pauses_and_closes_though_watchers_stay(full_table, people):
    table = started(full_table, people)
    services.connect(user=people["outsider"], table_id=table.pk, channel_name="w-1")
    everyone_connects(table, people)
    for name in ("host", "ana", "bea", "caio"):
        services.disconnect(channel_name=f"c-{name}")
    table = Table.objects.get(pk=table.pk)
    assert table.paused and table.paused_by is None and table.empty_since is not None
    # A watcher arriving now neither wakes the table nor resumes it.
    services.connect(user=people["outsider"], table_id=table.pk, channel_name="w-2")
    table = Table.objects.get(pk=table.pk)
    assert table.paused and table.empty_since is not None
    services.close_empty(table_id=table.pk, now=timezone.now() + timedelta(minutes=3))
    assert Table.objects.get(pk=table.pk).state == Table.State.CLOSED


def test_a_waiting_table_left_to_its_watchers_leaves_the_lobby(people):
    table = services.create_table(host=people["host"], preset="partners", public=True)
    services.connect(user=people["host"], table_id=table.pk, channel_name="c-host")
    services.connect(user=people["outsider"], table_id=table.pk, channel_name="w-1")
    assert table.pk in [t.pk for t in selectors.lobby_tables()]
    services.disconnect(channel_name="c-host")
    assert table.pk not in [t.pk for t in selectors.lobby_tables()]
    # The watcher takes a seat: somebody holds the table again.
    services.join_table(user=people["outsider"], table_id=table.pk)
    assert Table.objects.get(pk=table.pk).empty_since is None
    assert selectors.table_state(table_id=table.pk, user=people["host"])["watchers"] == 0


def test_a_player_who_leaves_the_seat_and_stays_is_a_watcher(people):
    table = services.create_table(host=people["host"], preset="partners", public=True)
    services.join_table(user=people["ana"], table_id=table.pk)
    services.connect(user=people["ana"], table_id=table.pk, channel_name="c-ana")
    services.leave_table(user=people["ana"], table_id=table.pk)
    seen = selectors.table_state(table_id=table.pk, user=people["host"])
    assert seen["watchers"] == 1
    # The host never opened the page: with its one player gone, nobody holds the table.
    assert Table.objects.get(pk=table.pk).empty_since is not None


def test_watchers_cannot_chat_players_can(full_table, people):
    table = started(full_table, people)
    services.connect(user=people["outsider"], table_id=table.pk, channel_name="w-1")
    with pytest.raises(ServiceError) as err, translation.override("en"):
        moderation.post_chat(user=people["outsider"], table_id=table.pk, text="hello")
    assert err.value.code == "not_seated" and "watching" in err.value.message
    assert selectors.table_state(table_id=table.pk,
                                 user=people["outsider"])["you"]["can_chat"] is False
    moderation.post_chat(user=people["ana"], table_id=table.pk, text="hello")


def test_only_the_host_turns_watching_off_and_it_refuses_watchers_once_the_match_is_on(
        full_table, people):
    table = full_table
    with pytest.raises(ServiceError) as err:
        services.set_watching(user=people["ana"], table_id=table.pk, allowed=False)
    assert err.value.code == "not_host"
    version = Table.objects.get(pk=table.pk).version
    with pytest.raises(ServiceError) as err:
        services.set_watching(user=people["host"], table_id=table.pk, allowed=True)
    assert err.value.code == "unchanged" and err.value.message
    assert Table.objects.get(pk=table.pk).version == version  # a refusal changes nothing
    services.set_watching(user=people["host"], table_id=table.pk, allowed=False)
    assert Table.objects.get(pk=table.pk).watchers_allowed is False
    # Before the start people come to the page to take a seat: not refused yet.
    assert not selectors.watching_refused(table_id=table.pk, user=people["outsider"])
    started(table, people)
    assert selectors.watching_refused(table_id=table.pk, user=people["outsider"])
    assert not selectors.watching_refused(table_id=table.pk, user=people["ana"])
    opened = services.open_socket(user=people["outsider"], table_id=table.pk,
                                  channel_name="w-1", lease=None)
    assert opened.close_code == services.WATCHING_OFF_CLOSE_CODE
    assert selectors.watcher_count(table.pk) == 0  # refused: no connection was written
    services.set_watching(user=people["host"], table_id=table.pk, allowed=True)
    opened = services.open_socket(user=people["outsider"], table_id=table.pk,
                                  channel_name="w-1", lease=None)
    assert opened.close_code is None


def test_the_create_form_can_turn_watching_off(client, people):
    client.force_login(people["host"])
    response = client.post("/tables/new/", {"preset": "partners", "turn_seconds": 45,
                                            "bot_level": "medium", "bot_think_ms": 1000,
                                            "public": "on"})
    assert response.status_code == 302
    assert Table.objects.get().watchers_allowed is False
    response = client.post("/tables/new/", {"preset": "partners", "turn_seconds": 45,
                                            "bot_level": "medium", "bot_think_ms": 1000,
                                            "public": "on", "watchers_allowed": "on"})
    assert Table.objects.order_by("-pk").first().watchers_allowed is True


def test_the_host_toggles_watching_on_the_table_page(client, full_table, people):
    client.force_login(people["host"])
    page = client.get(f"/t/{full_table.code}/").content.decode()
    assert f'action="/t/{full_table.code}/watching/"' in page
    response = client.post(f"/t/{full_table.code}/watching/", {"allowed": "0"})
    assert response.status_code == 302
    assert Table.objects.get(pk=full_table.pk).watchers_allowed is False
    client.force_login(people["ana"])
    client.post(f"/t/{full_table.code}/watching/", {"allowed": "1"})
    assert Table.objects.get(pk=full_table.pk).watchers_allowed is False  # not the host
    assert f'action="/t/{full_table.code}/watching/"' not in client.get(
        f"/t/{full_table.code}/").content.decode()


def test_a_watcher_arriving_costs_no_full_rebuild(full_table, people):
    """The cost of a watcher arriving at a table in play, against a move's full snapshot."""
    table = started(full_table, people)
    everyone_connects(table, people)
    import random

    rng = random.Random(5)
    for _ in range(8):
        play_random_move(table, rng)
    table = Table.objects.get(pk=table.pk)
    snap = selectors.current_snapshot(table.pk)
    snapshots.store(table.pk, snap)
    events = [{"kind": "watchers", "count": 1}]
    table.version += 1
    rounds = 50
    t0 = time.perf_counter()
    for _ in range(rounds):
        state.build(table, engine=None, previous=snap, events=events)
    full = (time.perf_counter() - t0) / rounds
    with CaptureQueriesContext(connection) as light_queries:
        t0 = time.perf_counter()
        for _ in range(rounds):
            light = state.with_watchers(table, snap, events, 1)
        light_time = (time.perf_counter() - t0) / rounds
    with CaptureQueriesContext(connection) as full_queries:
        state.build(table, engine=None, previous=snap, events=events)
    print(f"\nsnapshot per version: full build {full * 1000:.2f} ms, "
          f"{len(full_queries)} queries; watcher-only {light_time * 1000:.3f} ms, "
          f"{len(light_queries) / rounds:.0f} queries")
    assert len(light_queries) == 0 < len(full_queries)
    assert light["watchers"] == 1 and light["version"] == table.version
    assert {k: v for k, v in light.items() if k not in ("version", "watchers", "log")} == {
        k: v for k, v in snap.items() if k not in ("version", "watchers", "log")}
    # End to end: a watcher's socket opening writes one version and schedules no timer.
    table.refresh_from_db()
    outcome = services.connect(user=people["outsider"], table_id=table.pk, channel_name="w-1")
    assert outcome.deadline is None and outcome.snapshot["watchers"] == 1
    assert outcome.snapshot["private"] == snap["private"]


@pytest.mark.django_db(transaction=True)  # snapshots are stored on commit
def test_a_move_carries_the_watcher_count_and_a_seat_change_counts_again(people):
    """A move cannot change who watches: its snapshot takes the count from the version before
    instead of counting the sockets again; sitting down does change it."""
    import random

    table = services.create_table(host=people["host"], preset="partners", public=True)
    for name in ("ana", "bea"):
        services.join_table(user=people[name], table_id=table.pk)
    services.connect(user=people["outsider"], table_id=table.pk, channel_name="w-1")
    services.connect(user=people["caio"], table_id=table.pk, channel_name="w-caio")
    assert selectors.table_state(table_id=table.pk, user=people["host"])["watchers"] == 2
    services.join_table(user=people["caio"], table_id=table.pk)  # a watcher sits down
    assert selectors.table_state(table_id=table.pk, user=people["host"])["watchers"] == 1
    table = started(table, people)
    everyone_connects(table, people)
    rng = random.Random(3)
    for _ in range(5):
        with CaptureQueriesContext(connection) as queries:
            play_random_move(Table.objects.get(pk=table.pk), rng)
        assert not [q["sql"] for q in queries.captured_queries if "tables_connection" in q["sql"]]
        assert selectors.table_state(table_id=table.pk, user=people["ana"])["watchers"] == 1
    services.disconnect(channel_name="w-1")
    assert selectors.table_state(table_id=table.pk, user=people["ana"])["watchers"] == 0
