"""A tournament's table is hosted by one of its players, but the tournament runs it: that player
may neither pause it (the tournament's clock and no-show rules are everyone's) nor ask a
minimum fair-play share (which would keep an opponent out). Both are refused with a message
saying why, and nothing changes; the pause a table makes by itself when nobody holds it stays
the tables' own rule."""

from __future__ import annotations

import pytest
from django.utils import translation

from apps.core.errors import ServiceError
from apps.fairplay import services as fairplay
from apps.fairplay.models import TableMinimum
from apps.tables import services as tables
from apps.tables.models import Table

from .conftest import one_on_one, show_up, socket_of

pytestmark = pytest.mark.usefixtures("books")


def refused(call) -> str:
    before = list(Table.objects.order_by("pk").values_list("version", "paused"))
    with translation.override("en"), pytest.raises(ServiceError) as err:
        call()
    assert err.value.code == "tournament_table", err.value.message
    assert list(Table.objects.order_by("pk").values_list("version", "paused")) == before
    assert not TableMinimum.objects.exists()
    return err.value.message


def test_the_player_hosting_a_tournament_table_cannot_ask_a_minimum_share(people):
    _, game = one_on_one(people)
    host = Table.objects.get(pk=game.table_id).host
    message = refused(lambda: fairplay.set_minimum(user=host, table_id=game.table_id,
                                                   minimum=90))
    assert "tournament" in message and "fair-play" in message
    # Clearing one (0) is refused the same: a tournament's table has no host's minimum.
    refused(lambda: fairplay.set_minimum(user=host, table_id=game.table_id, minimum=0))


def test_the_player_hosting_a_tournament_table_cannot_pause_it(people):
    _, game = one_on_one(people)
    show_up(game)
    table = Table.objects.get(pk=game.table_id)
    assert table.state == Table.State.PLAYING
    message = refused(lambda: tables.pause(user=table.host, table_id=table.pk))
    assert "tournament" in message and "paused" in message


def test_a_tournament_table_nobody_holds_still_pauses_by_itself(people):
    _, game = one_on_one(people)
    show_up(game)
    for user in (people["ana"], people["bea"]):
        tables.disconnect(channel_name=socket_of(game, user))
    assert Table.objects.get(pk=game.table_id).paused


def test_other_tables_still_take_both(people):
    table = tables.create_table(host=people["ana"], preset="block", players=2, public=True)
    fairplay.set_minimum(user=people["ana"], table_id=table.pk, minimum=50)
    tables.join_table(user=people["bea"], table_id=table.pk)
    tables.start_match(user=people["ana"], table_id=table.pk)
    tables.pause(user=people["ana"], table_id=table.pk)
    assert Table.objects.get(pk=table.pk).paused
