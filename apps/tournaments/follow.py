"""What the tournaments hear from the tables (registered in ``apps.tournaments.apps``).

- :func:`table_committed` (``hooks.on_committed``, after each version's commit): people
  arriving at a tournament table, a match over, a player leaving mid-match, the table closing
  go to :mod:`.running`; a round dealt or a match started rings the tournament page. Every
  other version of every table costs a set of its event kinds and nothing else.
- :func:`join_refusal` (``hooks.on_join_refusal``): only the game's people sit at its table.
- :func:`table_changing` (``hooks.on_change``, inside the table's transaction): a table whose
  game is decided plays no further match (its host's "new match" button is refused).
"""

from __future__ import annotations

from django.utils.translation import gettext as _

from apps.core.errors import ServiceError

from . import notify, running
from .models import Entrant, Game

FOLLOWED = frozenset({"presence", "match_over", "closed", "seat", "round_over",
                      "match_started"})
LEAVING = ("leaving", "left")


def table_committed(*, table_id: int, version: int, events: list[dict]) -> None:
    kinds = {e.get("kind") for e in events}
    if not kinds & FOLLOWED:
        return
    if kinds <= {"seat"} and not any(e.get("action") in LEAVING for e in events):
        return
    row = Game.objects.filter(table_id=table_id).values_list(
        "pk", "round__tournament_id", "finished_at").first()
    if row is None:
        return
    game_id, tournament_id, finished = row
    if kinds & {"round_over", "match_started"}:
        notify.ring(tournament_id)  # the page shows each live table's score
    if finished is not None:
        return
    if any(e.get("kind") == "presence" and e.get("connected") for e in events):
        running.came(game_id=game_id)
    for event in events:
        if event.get("kind") == "seat" and event.get("action") in LEAVING:
            running.left(game_id=game_id, seat=int(event["seat"]))
    if "match_over" in kinds:
        running.match_over(game_id=game_id)
    if "closed" in kinds:
        running.table_closed(game_id=game_id)


def join_refusal(*, table, user) -> str | None:
    game = Game.objects.filter(table_id=table.pk).values_list("team_a_id", "team_b_id").first()
    if game is None:
        return None
    if Entrant.objects.filter(team_id__in=[t for t in game if t is not None],
                              user_id=user.pk).exists():
        return None
    return _("This table belongs to a tournament: only its players sit here.")


def table_changing(*, table, seats, events: list[dict], now) -> None:
    if not any(e.get("kind") == "match_started" for e in events):
        return
    finished = Game.objects.filter(table_id=table.pk).values_list("finished_at",
                                                                   flat=True).first()
    if finished is not None:
        raise ServiceError(_("This tournament game is over: its table plays no more "
                             "matches."), code="tournament_over")
