"""Reads for the tournament pages: the list, and one tournament's registrations, standings or
bracket, live tables, every round's games and the prizes; and the reads the running tournament
decides by (results so far, final places, who sits where), which write nothing."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, Q, Sum
from django.utils import timezone

from apps.club.models import LedgerEntry, Purse
from apps.friends.selectors import blocked_ids
from apps.tables.models import Match, Table

from . import pairing
from .models import Entrant, Game, PartnerInvitation, Round, Team, Tournament


def upcoming():
    return (Tournament.objects.filter(state__in=(Tournament.State.REGISTERING,
                                                 Tournament.State.RUNNING))
            .annotate(people=Count("entrants", filter=Q(entrants__left_out=False)))
            .order_by("starts_at", "pk"))


def past(rows: int = 20):
    return (Tournament.objects.filter(state__in=(Tournament.State.FINISHED,
                                                 Tournament.State.CANCELLED))
            .order_by("-starts_at", "-pk")[:rows])


def team_names(tournament: Tournament) -> dict[int, str]:
    """Each team's name: its people's names, in the order they registered."""
    names: dict[int, list[str]] = {}
    for team_id, name in (Entrant.objects.filter(tournament=tournament, team__isnull=False)
                          .order_by("created_at", "pk")
                          .values_list("team_id", "user__profile__display_name")):
        names.setdefault(team_id, []).append(name)
    return {t: " & ".join(n) for t, n in names.items()}


# -- results so far, and who sits where (the pages, and the running tournament) ------------------

def seeded_teams(tournament: Tournament) -> list[int]:
    return list(Team.objects.filter(tournament=tournament, seed__isnull=False)
                .order_by("seed").values_list("pk", flat=True))


def swiss_results(tournament: Tournament) -> list[pairing.Result]:
    """Every decided game of the tournament as the pairing module reads it."""
    games = Game.objects.filter(round__tournament=tournament, finished_at__isnull=False,
                                team_a__isnull=False).order_by("round__number", "position")
    return [pairing.Result(g.team_a_id, g.team_b_id, g.winner_id) for g in games]


def knockout_rounds(tournament: Tournament) -> list[list[tuple[int | None, int | None,
                                                                int | None]]]:
    out: list[list] = []
    for rnd in Round.objects.filter(tournament=tournament).order_by("number"):
        out.append([(g.team_a_id, g.team_b_id, g.winner_id)
                    for g in rnd.games.order_by("position")])
    return out


def places(tournament: Tournament) -> list[list[int]]:
    """Final places, best first (teams sharing a place together)."""
    if tournament.format == Tournament.Format.SWISS:
        table = pairing.swiss_standings(seeded_teams(tournament), swiss_results(tournament))
        return [[s.team] for s in table]
    return pairing.knockout_places(knockout_rounds(tournament))



def has_champion(tournament: Tournament) -> bool:
    """Whether someone won: a Swiss always ranks its teams; a knockout's final may have been
    won by nobody (neither side came), and then nobody is champion."""
    if tournament.format == Tournament.Format.SWISS:
        return True
    final = (Game.objects.filter(round__tournament=tournament)
             .order_by("-round__number", "position").first())
    return final is not None and final.winner_id is not None


def members(team_id: int) -> list:
    return [e.user for e in Entrant.objects.filter(team_id=team_id).select_related("user")
            .order_by("created_at", "pk")]


def seat_order(game: Game) -> list:
    """The people in seat order: A's first, B's first, A's second, B's second."""
    a, b = members(game.team_a_id), members(game.team_b_id)
    return [p for pair in zip(a, b, strict=True) for p in pair]


@dataclass
class GameRow:
    game: Game
    a: str
    b: str | None
    winner: str | None
    #: The current match's scores and games (a live table), side A first.
    scores: list[int] = field(default_factory=list)
    table_code: str | None = None
    table_state: str | None = None
    live: bool = False


@dataclass
class StandingRow:
    rank: int
    name: str
    score: int
    buchholz: int
    sonneborn_berger: int
    byes: int
    mine: bool


@dataclass
class Page:
    tournament: Tournament
    entrants: list[tuple[str, str]]  # (team or person, "waiting for a partner" note)
    mine: Entrant | None
    places_taken: int
    pot: int
    prizes: list[tuple[int, int, int]]  # (place, percent, coins)
    standings: list[StandingRow]
    rounds: list[tuple[Round, list[GameRow]]]
    live: list[GameRow]
    paid: list[tuple[str, int]]  # (person, coins) once the prizes are paid
    #: The viewer's own table while their game is on.
    my_table: GameRow | None = None
    #: The pair the viewer invited a partner to, waiting for the answer.
    my_invitation: PartnerInvitation | None = None
    #: The invitation the viewer has to answer (none from someone they blocked).
    invited_me: PartnerInvitation | None = None
    #: A finished knockout whose final nobody won.
    no_champion: bool = False

    @property
    def bracket(self) -> list[tuple[Round, list[GameRow]]]:
        """A knockout's rounds, first to last (the page draws them as columns)."""
        if self.tournament.format != Tournament.Format.KNOCKOUT:
            return []
        return list(reversed(self.rounds))


def page(tournament: Tournament, user) -> Page:
    names = team_names(tournament)
    mine = my_invitation = invited_me = None
    if user is not None and user.is_authenticated:
        mine = Entrant.objects.filter(tournament=tournament, user=user).first()
        waiting = PartnerInvitation.objects.filter(tournament=tournament) \
            .select_related("inviter__profile", "invitee__profile")
        my_invitation = waiting.filter(inviter=user).first()
        invited_me = waiting.filter(invitee=user).exclude(
            inviter_id__in=blocked_ids(user.pk)).first()
    entrants = _entrants(tournament, names)
    purse = Purse.objects.filter(key=tournament.purse_key).first()
    pot = purse.escrow if purse is not None and purse.state == Purse.State.OPEN else (
        LedgerEntry.objects.filter(purse=purse, reason=LedgerEntry.Reason.TOURNAMENT_PRIZE)
        .aggregate(s=Sum("coins"))["s"] or 0)
    added = tournament.prize_added
    prizes = [(i, pct, pot * pct // 100 + added * pct // 100)
              for i, pct in enumerate(tournament.prize_split, start=1)]
    rounds = _rounds(tournament, names)
    live = [row for _r, rows in rounds for row in rows if row.live]
    people = Entrant.objects.filter(tournament=tournament, left_out=False).count()
    people += 2 * PartnerInvitation.objects.filter(tournament=tournament).count()
    team = mine.team_id if mine is not None else None
    my_table = next((row for row in live if team is not None
                     and team in (row.game.team_a_id, row.game.team_b_id)), None)
    return Page(tournament=tournament, entrants=entrants, mine=mine,
                places_taken=-(-people // tournament.team_size), pot=pot, prizes=prizes,
                standings=_standings(tournament, names, mine), rounds=rounds, live=live,
                paid=_paid(purse), my_table=my_table, my_invitation=my_invitation,
                invited_me=invited_me,
                no_champion=(tournament.state == Tournament.State.FINISHED
                             and not has_champion(tournament)))


def _entrants(tournament: Tournament, names: dict[int, str]) -> list[tuple[str, str]]:
    out = [(name, "") for _t, name in sorted(names.items())]
    alone = (Entrant.objects.filter(tournament=tournament, team__isnull=True)
             .order_by("created_at", "pk").values_list("user__profile__display_name",
                                                       "left_out"))
    for name, left_out in alone:
        out.append((name, "left_out" if left_out else "alone"))
    held = (PartnerInvitation.objects.filter(tournament=tournament)
            .values_list("inviter__profile__display_name", "invitee__profile__display_name"))
    out += [(f"{inviter} & {invitee}", "invited") for inviter, invitee in held]
    return out


def invitations_for(user) -> list[PartnerInvitation]:
    """The partner invitations ``user`` has to answer, in tournaments still open for
    registration (none from someone they blocked), oldest first: the home page lists them."""
    if user is None or not user.is_authenticated:
        return []
    return list(PartnerInvitation.objects.filter(
        invitee=user, tournament__state=Tournament.State.REGISTERING,
        tournament__starts_at__gt=timezone.now())
        .exclude(inviter_id__in=blocked_ids(user.pk))
        .select_related("tournament", "inviter__profile").order_by("created_at", "pk"))


def _standings(tournament: Tournament, names: dict[int, str],
               mine: Entrant | None) -> list[StandingRow]:
    if tournament.format != Tournament.Format.SWISS or tournament.started_at is None:
        return []
    teams = seeded_teams(tournament)
    if not teams:
        return []
    table = pairing.swiss_standings(teams, swiss_results(tournament))
    my_team = mine.team_id if mine is not None else None
    return [StandingRow(s.rank, names.get(s.team, "?"), s.score, s.buchholz,
                        s.sonneborn_berger, s.byes, s.team == my_team) for s in table]


def _rounds(tournament: Tournament, names: dict[int, str]) -> list[tuple[Round, list[GameRow]]]:
    games = list(Game.objects.filter(round__tournament=tournament)
                 .select_related("round", "table").order_by("round__number", "position"))
    open_tables = [g.table_id for g in games if g.table_id is not None and not g.decided]
    current: dict[int, Match] = {}
    for match in Match.objects.filter(table_id__in=open_tables).order_by("table_id", "-number"):
        current.setdefault(match.table_id, match)  # each table's latest match
    by_round: dict[int, list[GameRow]] = {}
    for g in games:
        row = GameRow(game=g, a=names.get(g.team_a_id, "—"),
                      b=names.get(g.team_b_id) if g.team_b_id else None,
                      winner=names.get(g.winner_id) if g.winner_id else None)
        if g.table is not None:
            row.table_code, row.table_state = g.table.code, g.table.state
            row.live = not g.decided and g.table.state != Table.State.CLOSED
            match = current.get(g.table_id)
            if match is not None and row.live:
                row.scores = list(match.scores)
        by_round.setdefault(g.round_id, []).append(row)
    return [(r, by_round.get(r.pk, [])) for r in
            Round.objects.filter(tournament=tournament).order_by("-number")]


def _paid(purse: Purse | None) -> list[tuple[str, int]]:
    if purse is None or purse.state != Purse.State.PAID:
        return []
    rows = (LedgerEntry.objects.filter(purse=purse, reason__in=(
        LedgerEntry.Reason.TOURNAMENT_PRIZE, LedgerEntry.Reason.TOURNAMENT_AWARD))
        .values("user__profile__display_name").annotate(coins=Sum("coins"))
        .order_by("-coins", "user__profile__display_name"))
    return [(r["user__profile__display_name"], r["coins"]) for r in rows]
