"""What the tournaments hear from the tables (registered in ``apps.tournaments.apps``).

- :func:`table_committed` (``hooks.on_committed``, after each version's commit, in the process
  that made the version: often a person's move in a web process): only sorts the news. A
  round dealt or a match started rings the tournament page; people arriving at a tournament
  table, a match over, a player leaving mid-match, the table closing are work for
  :mod:`.running` (the next match, a decided game, the next round's tables), which a worker
  does (:func:`queue_follow_up`, the task ``tasks.follow_table``, then :func:`follow_up`): a
  move's answer never waits for another table to start. Every other version of every table
  costs a set of its event kinds and nothing else.
- :func:`join_refusal` (``hooks.on_join_refusal``): only the game's people sit at its table.
- :func:`table_changing` (``hooks.on_change``, inside the table's transaction): a table whose
  game is decided plays no further match (its host's "new match" button is refused), and the
  player who hosts a tournament's table may neither pause it nor ask a minimum fair-play
  share: the tournament runs its tables.

A follow-up may run late, twice (the task tried again after an outage) or after a later
version's: each step of :mod:`.running` looks at the game and the table as they are when it
runs, and a decided game hears nothing more. The one thing that cannot be seen later is
whether a seat was left before the first match (only an empty seat then: the no-show rule
decides) or during the tie (a forfeit): that is settled here, at the news.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from celery import current_app
from django.db import transaction
from django.utils.translation import gettext as _

from apps.core.errors import ServiceError
from apps.tables.models import Match

from . import notify, running
from .models import Entrant, Game

log = logging.getLogger(__name__)

FOLLOWED = frozenset({"presence", "match_over", "closed", "seat", "round_over",
                      "match_started", "timeout"})
LEAVING = ("leaving", "left")
#: The worker's task (``apps.tournaments.tasks``), sent by name: the tasks import this module.
FOLLOW_TABLE = "apps.tournaments.tasks.follow_table"


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
    left = [int(e["seat"]) for e in events
            if e.get("kind") == "seat" and e.get("action") in LEAVING]
    if left and not Match.objects.filter(table_id=table_id).exists():
        left = []  # before the first match a seat left is only empty
    # A turn-based tournament's no-show: time ran out on a person who has not moved yet in
    # the match; their team loses the game as if they had left it.
    left += [int(e["seat"]) for e in events
             if e.get("kind") == "timeout" and e.get("moved") is False and e.get("first")]
    work = {"came": any(e.get("kind") == "presence" and e.get("connected") for e in events),
            "left": left, "match_over": "match_over" in kinds, "closed": "closed" in kinds}
    if any(work.values()):
        queue_follow_up(game_id, work)


def queue_follow_up(game_id: int, work: dict) -> None:
    """The worker does ``work`` (:func:`follow_up`'s arguments) once the caller's transaction
    commits, on the default queue: not ``bots``, where a slow bot's search or a review would
    hold up the next match. With the broker away the news is lost, as it was when this ran in
    the hook and the database was away: at a table still waiting, beat's no-show check starts
    the match if everyone is there (``running.forfeit``); the rest is logged."""
    def send() -> None:
        try:
            current_app.send_task(FOLLOW_TABLE, kwargs={"game_id": game_id, **work})
        except Exception:
            log.exception("tournament game %s: could not send what its table told (%s)",
                          game_id, work)

    transaction.on_commit(send)


def follow_up(*, game_id: int, came: bool = False, left: Sequence[int] = (),
              match_over: bool = False, closed: bool = False) -> None:
    """What a table told, for its tournament game, in the order it matters: someone arrived
    (the match may start), a player left mid-match (their team forfeits), a match ended (the
    tie goes on or is decided), the table closed."""
    if came:
        running.came(game_id=game_id)
    for seat in left:
        running.left(game_id=game_id, seat=seat)
    if match_over:
        running.match_over(game_id=game_id)
    if closed:
        running.table_closed(game_id=game_id)


def join_refusal(*, table, user) -> str | None:
    game = Game.objects.filter(table_id=table.pk).values_list("team_a_id", "team_b_id").first()
    if game is None:
        return None
    if Entrant.objects.filter(team_id__in=[t for t in game if t is not None],
                              user_id=user.pk).exists():
        return None
    return _("This table belongs to a tournament: only its players sit here.")


#: What a tournament's table refuses: a match once its game is decided, and what would let
#: the player who hosts it run it instead of the tournament (a pause of their own, a minimum
#: fair-play share keeping an opponent out). The pause a table makes by itself when nobody
#: holds it (``"empty"``) is the tables' own rule and stays.
REFUSED_AT_TOURNAMENT_TABLES = frozenset({"match_started", "paused", "fairplay", "adjourned",
                                          "rematch_offered"})


def table_changing(*, table, seats, events: list[dict], now) -> None:
    kind = next((e["kind"] for e in events if e.get("kind") in REFUSED_AT_TOURNAMENT_TABLES
                 and not e.get("empty")), None)
    if kind is None:
        return
    row = Game.objects.filter(table_id=table.pk).values_list("pk", "finished_at").first()
    if row is None:
        return
    if kind == "paused":
        raise ServiceError(_("This table belongs to a tournament, which keeps its clock: it "
                             "cannot be paused."), code="tournament_table")
    if kind in ("adjourned", "rematch_offered"):
        raise ServiceError(_("This table belongs to a tournament, which decides when its "
                             "matches are played: it cannot be adjourned nor offer a "
                             "rematch."), code="tournament_table")
    if kind == "fairplay":
        raise ServiceError(_("This table belongs to a tournament, which decides who plays "
                             "here: it takes no minimum fair-play share."),
                           code="tournament_table")
    if row[1] is not None:
        raise ServiceError(_("This tournament game is over: its table plays no more "
                             "matches."), code="tournament_over")
