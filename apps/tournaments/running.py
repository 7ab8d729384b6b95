"""A tournament being played: its rounds, their tables, what the tables tell, forfeits, the
next round and the prizes (docs/tournaments.md).

Tables are the tables app's own, opened through its services (``create_table``,
``join_table``, ``start_match``, ``new_match``, ``cancel_waiting``): public, watchable, no
bots, the tournament's clock. Team A sits in seat 0 (and 2), team B in seat 1 (and 3), so side
0 of a match is team A. What a table does is heard after its commit (``follow.py``, the
tables' ``on_committed`` hook) and comes here: a person arriving (the match starts when
everyone is there), a match over (the tie goes on or is decided), a player leaving mid-match
(their team loses the game), the table closing.

Locks: the tournament's row, then the game's; a table's row only after both are released (the
services that open, start and close tables run after this module's transaction commits), so
nothing here waits on a table while holding what a table's hooks might read.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.club import purses
from apps.club.models import Purse
from apps.core.beat import act_on_each
from apps.core.errors import ServiceError
from apps.tables import services as tables
from apps.tables.models import Match, Table

from . import events, notify, pairing
from .models import Entrant, Game, Round, Tournament
from .selectors import has_champion, places, seat_order, seeded_teams, swiss_results

log = logging.getLogger(__name__)

#: A team not at its table this long after it opened loses the round by forfeit.
NO_SHOW = timedelta(minutes=2)
#: Between the end of one round and the start of the next.
ROUND_BREAK = timedelta(seconds=30)


def no_show_limit() -> timedelta:
    seconds = getattr(settings, "TOURNAMENT_NO_SHOW_SECONDS", None)
    return NO_SHOW if seconds is None else timedelta(seconds=seconds)


def round_break() -> timedelta:
    seconds = getattr(settings, "TOURNAMENT_ROUND_BREAK_SECONDS", None)
    return ROUND_BREAK if seconds is None else timedelta(seconds=seconds)


# -- rounds -------------------------------------------------------------------------------------

def start_round(tournament: Tournament, *, number: int, now: datetime) -> Round:
    """Pair round ``number`` (under the tournament's lock); its tables open after the commit
    (:func:`open_tables`). Byes and walkovers are decided at once."""
    rnd = Round.objects.create(tournament=tournament, number=number, started_at=now)
    if tournament.format == Tournament.Format.SWISS:
        made = pairing.swiss_pairings(seeded_teams(tournament), swiss_results(tournament))
        ties: list[tuple[int | None, int | None]] = list(made.pairs)
        if made.bye is not None:
            ties.append((made.bye, None))
    elif number == 1:
        ties = pairing.knockout_first_round(seeded_teams(tournament))
    else:
        previous = Game.objects.filter(round__tournament=tournament,
                                       round__number=number - 1).order_by("position")
        ties = pairing.knockout_next_round([g.winner_id for g in previous])
    for position, (a, b) in enumerate(ties, start=1):
        if a is None:
            a, b = b, a
        game = Game(round=rnd, position=position, team_a_id=a, team_b_id=b)
        if b is None:
            # A bye (Swiss), a top seed's walkover or nobody at all (knockout).
            game.winner_id, game.finished_at = a, now
            game.outcome = Game.Outcome.BYE if a is not None else Game.Outcome.NO_SHOW
        game.save()
    tournament.current_round, tournament.next_round_at = number, None
    tournament.save(update_fields=["current_round", "next_round_at"])
    return rnd


def open_tables(*, tournament_id: int, now: datetime | None = None) -> int:
    """Open a table for every game of the current round that has none yet (beat retries
    what a crash left); returns how many opened."""
    now = now or timezone.now()
    tournament = Tournament.objects.get(pk=tournament_id)
    if tournament.state != Tournament.State.RUNNING:
        return 0
    waiting = Game.objects.filter(round__tournament=tournament, finished_at__isnull=True,
                                  opened_at__isnull=True, team_b__isnull=False)
    opened = 0
    for game in list(waiting):
        try:
            with transaction.atomic():
                _open(tournament, game, now=now)
            opened += 1
        except ServiceError as err:
            # A person the tables refuse (a ban): the table is not opened, and the game is
            # decided as if nobody came when the no-show limit passes.
            log.warning("tournament %s game %s: no table (%s)", tournament.pk, game.pk, err.code)
            Game.objects.filter(pk=game.pk).update(opened_at=now)
    if opened:
        notify.ring(tournament.pk)
    return opened


def _open(tournament: Tournament, game: Game, *, now: datetime) -> None:
    people = seat_order(game)
    options = {"turn_seconds": tournament.turn_seconds}
    if tournament.target is not None:
        options["target"] = tournament.target
    name = f"{tournament.name[:26]} {game.round.number}.{game.position}"
    paced = ({"pace": "turn", "move_seconds": tournament.move_seconds}
             if tournament.move_seconds else {})
    table = tables.create_table(host=people[0], preset=tournament.preset,
                                players=tournament.players, options=options, public=True,
                                allow_bots=False, name=name, watchers_allowed=True, **paced)
    # Linked before anyone else sits: the join hook lets only the game's people in.
    game.table, game.opened_at = table, now
    game.save(update_fields=["table", "opened_at"])
    for person in people[1:]:
        tables.join_table(user=person, table_id=table.pk)
    events.send_after_commit(events.table_ready, Game, tournament_id=tournament.pk,
                             game_id=game.pk, table_id=table.pk, code=table.code,
                             name=table.name, user_ids=[p.pk for p in people])
    if tournament.move_seconds:
        # Turn-based: nobody needs to be at the page; the match starts now, and a no-show is
        # a person whose first time per move runs out without a move of theirs (follow.py).
        game.present = sorted(p.pk for p in people)
        game.save(update_fields=["present"])
        tables.start_match(user=people[0], table_id=table.pk)


# -- what the tables tell -------------------------------------------------------------------------

def _undecided_game(game_id: int, *,
                    at_table: bool = True) -> tuple[Tournament, Game] | tuple[None, None]:
    """The tournament and the game, locked in that order (inside the caller's transaction),
    while the game is still to be decided (and, ``at_table``, has its table); else two Nones.
    What the tables tell may come late or twice: a decided game has nothing more to hear."""
    tournament_id = Game.objects.filter(pk=game_id).values_list(
        "round__tournament_id", flat=True).first()
    if tournament_id is None:
        return None, None
    tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
    game = Game.objects.select_for_update().get(pk=game_id)
    if game.decided or (at_table and game.table_id is None):
        return None, None
    return tournament, game


def _mark_present(game: Game, table: Table) -> bool:
    """Note who is at the table now; whether everyone is."""
    seats = list(table.seats.order_by("index"))
    here = [s.user_id for s in seats if s.user_id is not None and s.away_since is None]
    game.present = sorted(set(game.present) | set(here))
    return all(s.user_id is not None for s in seats) and len(here) == len(seats)


def came(*, game_id: int) -> bool:
    """Someone opened the table's page: when all its people are there, the match starts.
    Returns whether it did."""
    with transaction.atomic():
        _tournament, game = _undecided_game(game_id)
        if game is None:
            return False
        table = Table.objects.get(pk=game.table_id)
        everyone = _mark_present(game, table)
        game.save(update_fields=["present"])
        ready = everyone and table.state == Table.State.WAITING
        host = table.host
    if not ready:
        return False
    try:
        tables.start_match(user=host, table_id=table.pk)
    except ServiceError:  # started by another arrival's call meanwhile
        return False
    return True


def match_over(*, game_id: int, now: datetime | None = None) -> None:
    """A match at the game's table ended: count it; the tie goes on with the next match at
    the same table, or is decided."""
    now = now or timezone.now()
    with transaction.atomic():
        tournament, game = _undecided_game(game_id)
        if game is None:
            return
        winner = _count_matches(tournament, game)
        if winner is not None:
            _decide(tournament, game, winner, Game.Outcome.PLAYED, now=now)
        else:
            notify.changed(tournament)
        table = Table.objects.get(pk=game.table_id)
    if winner is None:
        try:
            tables.new_match(user=table.host, table_id=table.pk)
        except ServiceError as err:
            log.info("tournament game %s: next match not started (%s)", game_id, err.code)
    else:
        advance(tournament_id=tournament.pk, now=now)


def _count_matches(tournament: Tournament, game: Game) -> int | None:
    """Count the matches finished at the game's table and not counted yet; the tie's winner,
    if that decides it."""
    new = Match.objects.filter(table_id=game.table_id, finished_at__isnull=False) \
        .exclude(pk__in=game.counted).order_by("number")
    for match in new:
        game.counted = game.counted + [match.pk]
        if match.winner == 0:
            game.wins_a += 1
        elif match.winner == 1:
            game.wins_b += 1
    game.save(update_fields=["counted", "wins_a", "wins_b"])
    return pairing.tie_winner(game.team_a_id, game.team_b_id, game.wins_a, game.wins_b,
                              tournament.best_of)


def left(*, game_id: int, seat: int, now: datetime | None = None) -> None:
    """A player left the table during the match (or staff removed them): their team loses
    the game. Before the match, a seat left is only empty: the no-show rule decides."""
    now = now or timezone.now()
    with transaction.atomic():
        tournament, game = _undecided_game(game_id)
        if game is None:
            return
        if not Match.objects.filter(table_id=game.table_id).exists():
            return
        side = seat % 2
        winner = game.team_b_id if side == 0 else game.team_a_id
        _decide(tournament, game, winner, Game.Outcome.FORFEIT, now=now)
    advance(tournament_id=tournament.pk, now=now)


def table_closed(*, game_id: int, now: datetime | None = None) -> None:
    """The table closed before the tie was decided (everyone left it, or staff closed it):
    before its first match, as a no-show; during the tie, the side ahead in matches wins it,
    else nobody does. A match that ended before the closing counts, even when the news of its
    end is heard after the closing's (the worker's tasks may run in either order)."""
    now = now or timezone.now()
    with transaction.atomic():
        tournament, game = _undecided_game(game_id, at_table=False)
        if game is None:
            return
        if not Match.objects.filter(table_id=game.table_id).exists():
            _no_show(tournament, game, now=now)
        elif (winner := _count_matches(tournament, game)) is not None:
            _decide(tournament, game, winner, Game.Outcome.PLAYED, now=now)
        else:
            winner = (game.team_a_id if game.wins_a > game.wins_b
                      else game.team_b_id if game.wins_b > game.wins_a else None)
            _decide(tournament, game, winner, Game.Outcome.ABANDONED, now=now)
    advance(tournament_id=tournament.pk, now=now)


def _decide(tournament: Tournament, game: Game, winner_id: int | None, outcome: str, *,
            now: datetime) -> None:
    game.winner_id, game.outcome, game.finished_at = winner_id, outcome, now
    game.save(update_fields=["winner", "outcome", "finished_at"])
    notify.changed(tournament)


def _showed_up(game: Game, team_id: int) -> bool:
    people = Entrant.objects.filter(team_id=team_id).values_list("user_id", flat=True)
    return set(people) <= set(game.present)


def _no_show(tournament: Tournament, game: Game, *, now: datetime) -> bool:
    """Decide a game whose match never started by who came: a team all of whose people came
    wins against one that did not; neither: nobody wins. Returns False when both came (the
    match should start instead)."""
    if game.table_id is not None:
        _mark_present(game, Table.objects.get(pk=game.table_id))
        game.save(update_fields=["present"])
    a, b = _showed_up(game, game.team_a_id), _showed_up(game, game.team_b_id)
    if a and b:
        return False
    if a or b:
        _decide(tournament, game, game.team_a_id if a else game.team_b_id,
                Game.Outcome.FORFEIT, now=now)
    else:
        _decide(tournament, game, None, Game.Outcome.NO_SHOW, now=now)
    return True


def forfeit(*, game_id: int, now: datetime | None = None) -> None:
    """The no-show limit passed with the game's match not started: the teams that are not
    all there lose by forfeit, and the table closes. If both are there after all (someone
    stepped away again), the match starts: the tables' graces apply from then on."""
    now = now or timezone.now()
    with transaction.atomic():
        tournament, game = _undecided_game(game_id, at_table=False)
        if game is None or game.opened_at is None or game.opened_at + no_show_limit() > now:
            raise ServiceError("not due", code="not_due")
        table = Table.objects.filter(pk=game.table_id).first()
        if table is not None and table.state == Table.State.PLAYING:
            raise ServiceError("started", code="not_due")
        decided = _no_show(tournament, game, now=now)
    if table is not None and table.state == Table.State.WAITING:
        try:
            if decided:
                tables.cancel_waiting(table_id=table.pk, reason="forfeit", now=now)
            else:
                tables.start_match(user=table.host, table_id=table.pk)
        except ServiceError as err:
            log.info("tournament game %s: table %s after the no-show limit: %s", game_id,
                     table.pk, err.code)
    if decided:
        advance(tournament_id=tournament.pk, now=now)


def forfeits_due(*, now: datetime | None = None) -> int:
    """Beat: every game whose table opened more than the no-show limit ago and whose match
    has not started."""
    now = now or timezone.now()
    due = Game.objects.filter(finished_at__isnull=True, opened_at__lte=now - no_show_limit(),
                              round__tournament__state=Tournament.State.RUNNING) \
        .exclude(table__state=Table.State.PLAYING).values_list("pk", flat=True)
    return act_on_each(due=due[:200], act=lambda game_id: forfeit(game_id=game_id, now=now))


# -- the next round, the end ----------------------------------------------------------------------

def advance(*, tournament_id: int, now: datetime | None = None) -> str:
    """After a game is decided, and from beat: when every game of the round is decided, the
    round ends; after the break the next one starts (its tables open), or, after the last,
    the tournament finishes and pays its prizes. Returns what happened."""
    now = now or timezone.now()
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
        if tournament.state != Tournament.State.RUNNING:
            return "idle"
        rnd = Round.objects.filter(tournament=tournament,
                                   number=tournament.current_round).first()
        if rnd is None or rnd.games.filter(finished_at__isnull=True).exists():
            return "playing"
        if rnd.finished_at is None:
            rnd.finished_at = now
            rnd.save(update_fields=["finished_at"])
            notify.changed(tournament)
        last = (rnd.number >= tournament.rounds
                or (tournament.format == Tournament.Format.KNOCKOUT
                    and rnd.games.count() <= 1))
        if last:
            finish(tournament, now=now)
            return "finished"
        if tournament.next_round_at is None:
            tournament.next_round_at = now + round_break()
            tournament.save(update_fields=["next_round_at"])
            notify.changed(tournament)
        if tournament.next_round_at > now:
            return "break"
        start_round(tournament, number=rnd.number + 1, now=now)
        notify.changed(tournament)
    open_tables(tournament_id=tournament_id, now=now)
    return "next"


def advance_due(*, now: datetime | None = None) -> int:
    """Beat: move every running tournament on (a round over, a break ended, tables to open)."""
    now = now or timezone.now()
    done = 0
    for tournament_id in list(Tournament.objects.filter(state=Tournament.State.RUNNING)
                              .values_list("pk", flat=True)[:100]):
        try:
            if advance(tournament_id=tournament_id, now=now) in ("next", "finished"):
                done += 1
            open_tables(tournament_id=tournament_id, now=now)
        except ServiceError:
            pass
    return done


def finish(tournament: Tournament, *, now: datetime) -> None:
    """The last round is over: the places stand and the prizes are paid, once (the purse
    closes in this transaction and every prize row's key is unique). A knockout final nobody
    won has no champion: what would have been the winner's goes back to the entrants, an
    equal part for each entry, to whoever paid it; the club's coins for it are not paid."""
    final = places(tournament)
    champion = has_champion(tournament)
    team_people = {t: [e.user_id for e in Entrant.objects.filter(team_id=t)
                       .order_by("created_at", "pk")] for group in final for t in group}
    purse = Purse.objects.get(key=tournament.purse_key)
    split = tournament.prize_split
    prizes = _per_person(pairing.prize_shares(final, split, purse.escrow, champion=champion),
                         team_people)
    awards = _per_person(pairing.prize_shares(final, split, purse.added, champion=champion),
                         team_people)
    if purse.escrow and not final:
        purses.refund_all(key=tournament.purse_key, now=now)
    else:
        if not champion:
            back = pairing.returned_shares(purse.escrow - sum(prizes.values()),
                                           list(purses.holders(purse).items()))
            prizes = {u: prizes.get(u, 0) + back.get(u, 0) for u in set(prizes) | set(back)}
        purses.pay_prizes(key=tournament.purse_key, prizes=prizes, awards=awards, now=now)
    tournament.state, tournament.finished_at = Tournament.State.FINISHED, now
    tournament.save(update_fields=["state", "finished_at"])
    notify.changed(tournament)


def _per_person(shares: dict[int, int], team_people: dict[int, list[int]]) -> dict[int, int]:
    out: dict[int, int] = {}
    for team, coins in shares.items():
        for user_id, part in pairing.split_between(coins, team_people[team]).items():
            out[user_id] = out.get(user_id, 0) + part
    return {u: c for u, c in out.items() if c}
