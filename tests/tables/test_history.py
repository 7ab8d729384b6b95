"""History (a person's finished matches on their profile) and the replay page's permissions
and data (issue 13). The page stepping in a browser: tests/browser/test_replay.py."""

from __future__ import annotations

import json
import random
import re

import pytest

from apps.rules import harness
from apps.tables import game, selectors, services
from apps.tables.models import Table

from .conftest import play_random_move, position


def play_match(table: Table, host, seed: int = 7) -> Table:
    """Random legal moves through the services until the match is over."""
    rng = random.Random(seed)
    if Table.objects.get(pk=table.pk).state == Table.State.WAITING:
        services.start_match(user=host, table_id=table.pk)
    while True:
        engine, _, _ = position(table)
        if engine.current is not None:
            play_random_move(table, rng)
        elif engine.over:
            return Table.objects.get(pk=table.pk)
        else:
            services.next_round(user=host, table_id=table.pk)


def partners_table(people, *, public: bool) -> Table:
    table = services.create_table(host=people["host"], preset="partners", public=public,
                                  options={"target": 50})
    for name in ("ana", "bea", "caio"):
        services.join_table(user=people[name], table_id=table.pk, code=table.code)
    return table


@pytest.fixture
def finished(people):
    table = play_match(partners_table(people, public=False), people["host"])
    return table, table.current_match


def test_replay_is_for_the_players_of_an_invite_only_match(client, finished, people):
    table, match = finished
    url = f"/t/{table.code}/matches/{match.number}/replay/"
    client.force_login(people["bea"])
    page = client.get(url)
    assert page.status_code == 200
    assert 'src="/static/js/replay.js"' in page.content.decode()
    client.force_login(people["outsider"])
    assert client.get(url).status_code == 404
    client.logout()
    assert client.get(url).status_code == 404
    # The outsider cannot fetch the record either; the players can, from the replay page.
    client.force_login(people["outsider"])
    assert client.get(f"/t/{table.code}/record.json?match={match.number}").status_code == 404
    client.force_login(people["bea"])
    assert f"/t/{table.code}/record.json?match={match.number}" in client.get(url).content.decode()


def test_a_public_tables_finished_matches_are_public(client, people):
    table = play_match(partners_table(people, public=True), people["host"], seed=3)
    url = f"/t/{table.code}/matches/1/replay/"
    client.force_login(people["outsider"])
    assert client.get(url).status_code == 200
    assert client.get(f"/t/{table.code}/record.json?match=1").status_code == 200
    client.logout()
    assert client.get(url).status_code == 200
    # No such match, or one not finished yet: nothing to replay.
    assert client.get(f"/t/{table.code}/matches/2/replay/").status_code == 404
    services.new_match(user=people["host"], table_id=table.pk)
    assert client.get(f"/t/{table.code}/matches/2/replay/").status_code == 404


def test_a_former_player_keeps_the_replay_after_leaving_the_table(client, people):
    table = partners_table(people, public=False)
    play_match(table, people["host"], seed=11)
    services.new_match(user=people["host"], table_id=table.pk)
    services.remove_seated_player(table_id=table.pk, seat_index=3)  # caio leaves
    client.force_login(people["caio"])
    assert client.get(f"/t/{table.code}/matches/1/replay/").status_code == 200


def test_the_replay_data_is_the_record_and_the_engine_positions(client, finished, people):
    table, match = finished
    client.force_login(people["ana"])
    page = client.get(f"/t/{table.code}/matches/1/replay/").content.decode()
    raw = re.search(r'<script id="replay-data" type="application/json">(.*?)</script>', page,
                    re.S).group(1)
    data = json.loads(raw)
    record = game.record_of(match)
    assert data["record"] == json.loads(json.dumps(record))
    out = harness.replay(record)
    assert data["steps"][-1][-1]["scores"] == out["scores"] == match.scores
    assert [len(s) for s in data["steps"]] == [len(r["moves"]) + 1 for r in record["rounds"]]
    # Each round starts with every hand as dealt.
    assert data["steps"][0][0]["hands"] == record["rounds"][0]["hands"]
    assert data["seats"][0] == ["host", "ana", "bea", "caio"]
    assert all(m["by"] in ("player", "table", "bot") for r in record["rounds"]
               for m in r["moves"])
    assert data["results"] == [r["result"] for r in out["rounds"]]


def test_the_table_page_links_the_finished_match(client, finished, people):
    table, _match = finished
    client.force_login(people["ana"])
    page = client.get(f"/t/{table.code}/").content.decode()
    assert f"/t/{table.code}/matches/1/replay/" in page


def test_history_lists_finished_matches_newest_first_with_the_outcome(client, people):
    first = play_match(partners_table(people, public=True), people["host"], seed=1)
    second = services.create_table(host=people["ana"], preset="draw", players=2,
                                   options={"target": 20})
    services.join_table(user=people["host"], table_id=second.pk, code=second.code)
    play_match(second, people["ana"], seed=2)
    Table.objects.filter(pk=second.pk).update(practice=True)
    unfinished = partners_table(people, public=True)
    services.start_match(user=people["host"], table_id=unfinished.pk)
    page = selectors.match_history(user=people["host"])
    rows = page.object_list
    assert [r["table"].pk for r in rows] == [second.pk, first.pk]  # newest first, finished only
    draw, partners = rows
    assert draw["practice"] and not partners["practice"]
    assert draw["opponents"] == ["ana"] and draw["partners"] == [] and not draw["pairs"]
    match = first.current_match
    assert partners["partners"] == ["bea"] and partners["opponents"] == ["ana", "caio"]
    assert partners["won"] == (match.winner == 0)
    assert partners["mine"] == match.scores[0] and partners["theirs"] == [match.scores[1]]
    dmatch = second.current_match
    assert draw["rank"] == (1 if dmatch.scores[1] >= dmatch.scores[0] else 2)
    assert draw["won"] == (dmatch.winner == 1)
    assert selectors.match_history(user=people["outsider"]).object_list == []
    client.force_login(people["host"])
    html = client.get("/accounts/profile/").content.decode()
    assert html.count('class="tag"') == 1  # the practice match, marked
    assert f"/t/{first.code}/matches/1/replay/" in html


def test_history_is_paginated(people, monkeypatch):
    table = services.create_table(host=people["host"], preset="draw", players=2,
                                  options={"target": 5})
    services.join_table(user=people["ana"], table_id=table.pk, code=table.code)
    for k in range(3):
        play_match(table, people["host"], seed=20 + k)
        if k < 2:
            services.new_match(user=people["host"], table_id=table.pk)
    page = selectors.match_history(user=people["ana"], per_page=2)
    assert page.paginator.count == 3 and page.paginator.num_pages == 2
    assert [r["match"].number for r in page.object_list] == [3, 2]
    older = selectors.match_history(user=people["ana"], page=2, per_page=2)
    assert [r["match"].number for r in older.object_list] == [1]
    assert selectors.match_history(user=people["ana"], page="nonsense",
                                   per_page=2).number == 1
