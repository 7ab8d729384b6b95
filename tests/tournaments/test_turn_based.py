"""A turn-based tournament (docs/turn-based.md): its tables are turn-based and start at once,
nobody needs the page open, and a person whose first time per move runs out without a move of
theirs loses the game for their team (the clock driven by ``now=``)."""

from __future__ import annotations

import pytest

from apps.tables import game as table_game
from apps.tables import services as tables
from apps.tables.models import Table
from apps.tables.services import ServiceError
from apps.tournaments.models import Entrant, Game

from .conftest import one_on_one

pytestmark = pytest.mark.usefixtures("books")

DAY = 86400


def test_a_turn_based_tournament_plays_at_turn_based_tables_and_a_first_timeout_forfeits(
        people):
    t, game = one_on_one(people, move_seconds=DAY, turn_seconds=45)
    assert t.move_seconds == DAY and t.turn_seconds is None
    table = Table.objects.get(pk=game.table_id)
    assert table.pace == "turn" and table.move_seconds == DAY
    assert table.state == Table.State.PLAYING  # nobody had to open the page
    engine = table_game.restore(table.current_match)
    idle = table.seats.get(index=engine.current.turn).user
    tables.act_on_deadline(table_id=table.pk, now=table.turn_deadline)
    game.refresh_from_db()
    assert game.decided and game.outcome == "forfeit"
    loser = Entrant.objects.get(tournament=t, user=idle).team_id
    assert game.winner_id != loser and game.winner_id is not None


def test_a_turn_based_tournament_refuses_a_time_not_offered(people):
    from .conftest import new_tournament

    with pytest.raises(ServiceError):
        new_tournament(people, move_seconds=120)
    assert not Game.objects.exists()
