"""Reads for pages and sockets. Each person gets only what their seat may know."""

from __future__ import annotations

from django.db.models import Count, Q
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.rules.engine import Match as EngineMatch
from apps.rules.view import seat_view

from . import game
from .models import Connection, Invitation, Seat, Table


def number_words() -> list[str]:
    return [_("blank"), _("one"), _("two"), _("three"), _("four"), _("five"), _("six")]


def display_name(user) -> str:
    profile = getattr(user, "profile", None)
    return getattr(profile, "display_name", "") or user.get_username()


def avatar_of(user) -> str:
    profile = getattr(user, "profile", None)
    return getattr(profile, "avatar", "") or ""


def public_view(engine: EngineMatch) -> dict:
    """What anyone may see of the round: the table without any hand."""
    view = seat_view(engine, 0)
    view.update(seat=None, hand=[], legal=[])
    return view


def seats_of(table: Table) -> list[dict]:
    connected = set(Connection.objects.filter(table=table).values_list("user_id", flat=True))
    out = []
    for seat in table.seats.select_related("user").order_by("index"):
        user = seat.user
        out.append({
            "index": seat.index,
            "name": display_name(user) if user else (_("Bot") if seat.is_bot else ""),
            "avatar": avatar_of(user) if user else ("bot" if seat.is_bot else ""),
            "bot": seat.is_bot,
            "empty": seat.empty,
            "connected": seat.is_bot or (user is not None and user.pk in connected),
            "team": seat.index % 2 if table.players == 4 and table.preset in
            ("partners", "partners-66", "pairs-series", "tranca") else None,
        })
    return out


def side_name(rules, side: int | None, seats: list[dict]) -> str:
    if side is None:
        return ""
    if rules.partners:
        return _("%(a)s and %(b)s") % {"a": seats[side]["name"], "b": seats[side + 2]["name"]}
    return seats[side]["name"]


def describe_result(engine: EngineMatch, k: int, seats: list[dict]) -> str:
    """Who won the round and why, in one sentence of the active language."""
    rnd = engine.rounds[k]
    res = rnd.result
    rules = engine.rules
    winner = side_name(rules, res.winner, seats)
    points = ngettext("%(n)s point", "%(n)s points", res.points) % {"n": res.points}
    if res.reason == "domino":
        return _("%(name)s played their last tile: %(winner)s score %(points)s.") % {
            "name": seats[rnd.last_placer]["name"], "winner": winner, "points": points}
    if rules.partners:
        pips = [res.pips[0] + res.pips[2], res.pips[1] + res.pips[3]]
    else:
        pips = list(res.pips)
    if not res.tie:
        return _("The round is blocked: %(winner)s hold the fewest pips (%(pips)s) and score "
                 "%(points)s.") % {"winner": winner, "pips": pips[res.winner], "points": points}
    low = min(pips)
    rule = rules.blocked_tie
    if rule == "closer_wins":
        why = _("the team that placed the last tile wins the tie")
    elif rule == "closer_loses":
        why = _("the side that placed the last tile loses the tie")
    elif rule == "opener_loses":
        why = _("the pair that opened the round loses the tie")
    elif rule == "replay":
        return _("The round is blocked with %(pips)s pips on each side: nobody scores and the "
                 "same player opens again.") % {"pips": low}
    else:
        return _("The round is blocked with a tie at %(pips)s pips: nobody scores.") % {
            "pips": low}
    return _("The round is blocked with %(pips)s pips on each side: %(why)s, so %(winner)s "
             "score %(points)s.") % {"pips": low, "why": why, "winner": winner,
                                     "points": points}


def passed_words(numbers: list[int]) -> str:
    words = number_words()
    names = [words[v] for v in numbers]
    if len(names) == 1:
        return _("passed on %(a)s") % {"a": names[0]}
    return _("passed on %(list)s and %(last)s") % {"list": ", ".join(names[:-1]),
                                                    "last": names[-1]}


def table_state(*, table_id: int, user) -> dict:
    """Everything one person's page shows, built from the database and the engine."""
    table = Table.objects.select_related("host", "paused_by").get(pk=table_id)
    seats = seats_of(table)
    you = None
    if user is not None and user.is_authenticated:
        you = next((s.index for s in table.seats.filter(user=user)), None)
    rules = game.rules_for(table)
    state: dict = {
        "version": table.version,
        "table": {
            "id": table.pk, "code": table.code, "name": table.name, "preset": table.preset,
            "preset_name": table.get_preset_display(), "players": table.players,
            "target": rules.target, "options": rules.options(), "public": table.public,
            "state": table.state, "paused": table.paused,
            "paused_by": display_name(table.paused_by) if table.paused_by else None,
            "host": display_name(table.host), "allow_bots": table.allow_bots,
        },
        "seats": seats,
        "you": {"seat": you, "host": user is not None and table.host_id == getattr(
            user, "pk", None)},
        "match": None,
        "view": None,
        "result": None,
    }
    match = table.current_match
    if match is None:
        return state
    engine = game.load(match)
    state["match"] = {
        "number": match.number, "scores": engine.scores(), "games": list(engine.games),
        "over": engine.over, "winner": engine.winner, "round": len(engine.rounds) - 1,
        "best_of": engine.rules.best_of,
    }
    if not engine.rounds:
        return state
    view = seat_view(engine, you) if you is not None else public_view(engine)
    state["view"] = view
    state["passed"] = {seat: passed_words(nums) for seat, nums in view["passed_on"].items()}
    last = engine.rounds[-1]
    if last.result is not None:
        res = last.result
        state["result"] = {
            "reason": res.reason, "winner": res.winner, "tie": res.tie,
            "pips": list(res.pips), "points": res.points,
            "sentence": describe_result(engine, len(engine.rounds) - 1, seats),
        }
    return state


def bot_to_move(table_id: int) -> tuple[int, int, int] | None:
    """(round, ply, think ms) when a bot seat is to play at a live, unpaused table."""
    table = Table.objects.filter(pk=table_id, state=Table.State.PLAYING, paused=False).first()
    if table is None:
        return None
    match = table.current_match
    engine = game.load(match)
    rnd = engine.current
    if rnd is None:
        return None
    if not Seat.objects.filter(table=table, index=rnd.turn, is_bot=True).exists():
        return None
    return len(engine.rounds) - 1, len(rnd.history), table.bot_think_ms


def lobby_tables() -> list[Table]:
    return list(
        Table.objects.filter(public=True, hidden=False, state=Table.State.WAITING)
        .annotate(free=Count("seats", filter=Q(seats__user__isnull=True,
                                                seats__is_bot=False)))
        .filter(free__gt=0).select_related("host").order_by("-created_at")[:100]
    )


def tables_of(user) -> list[Table]:
    return list(Table.objects.filter(seats__user=user).exclude(state=Table.State.CLOSED)
                .select_related("host").order_by("-updated_at").distinct())


def invitations_for(user) -> list[Invitation]:
    return list(Invitation.objects.filter(invitee=user, answered_at__isnull=True)
                .exclude(table__state=Table.State.CLOSED)
                .select_related("table", "inviter").order_by("-created_at"))
