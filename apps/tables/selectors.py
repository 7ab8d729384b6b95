"""Reads for pages and sockets. Each person gets only what their seat may know."""

from __future__ import annotations

from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.rules.engine import Match as EngineMatch
from apps.rules.view import seat_view

from . import game
from .models import Connection, Invitation, Table


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


def _ms(moment) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)


def clock_of(table: Table, turn_seconds) -> dict:
    """The turn clock from the server's own deadline, so a reload never restarts it."""
    now = timezone.now()
    left = None
    if table.paused and table.paused_at and table.turn_started_at and turn_seconds:
        left = max(0, int((table.turn_started_at.timestamp() + turn_seconds
                           - table.paused_at.timestamp()) * 1000))
    return {
        "now": _ms(now),
        "started": _ms(table.turn_started_at),
        "deadline": _ms(table.turn_deadline),
        "turn_seconds": turn_seconds,
        "paused_left_ms": left,
    }


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
    state["clock"] = clock_of(table, rules.turn_seconds)
    from apps.moderation.selectors import table_extras

    table_extras(state, table, user)  # chat, why it closed, your mute
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


# -- pages (views and the table socket) -------------------------------------------------------

def may_watch(*, table_id: int, user, known_ids=()) -> bool:
    """Whether ``user`` may open the table's page state: a public table, or an invite-only one
    they host, sit at, were invited to, or whose code this browser has entered."""
    table = Table.objects.filter(pk=table_id).first()
    if table is None:
        return False
    if table.public or table.pk in set(known_ids or ()):
        return True
    if user is None or not user.is_authenticated:
        return False
    return (table.host_id == user.pk or table.seats.filter(user=user).exists()
            or Invitation.objects.filter(table=table, invitee=user).exists())


def may_download(table: Table, user) -> bool:
    """The host and the people seated at the table may download its record."""
    if user is None or not user.is_authenticated:
        return False
    return table.host_id == user.pk or table.seats.filter(user=user).exists()


def finished_record(table: Table, number: int | None = None) -> dict | None:
    """The harness record of a match (the current one, or match ``number``), holding only its
    finished rounds: an unfinished round's hands never leave the server this way."""
    from .models import Match

    matches = Match.objects.filter(table=table)
    match = (matches.filter(number=number) if number is not None
             else matches.order_by("-number")).first()
    if match is None:
        return None
    rounds = []
    for rnd in (match.rounds.filter(voided=False, finished_at__isnull=False)
                .order_by("number").prefetch_related("moves")):
        rounds.append({"hands": rnd.hands, "boneyard": rnd.boneyard, "opener": rnd.opener,
                       "moves": [m.as_record() for m in rnd.moves.all()]})
    return {"rules": dict(match.rules), "players": match.players, "rounds": rounds}


def lobby_rows() -> list[dict]:
    """The lobby: public tables waiting for players, with their seats taken and free."""
    rows = []
    for table in lobby_tables():
        rules = game.rules_for(table)
        rows.append({"table": table, "preset_name": table.get_preset_display(),
                     "target": rules.target, "free": table.free,
                     "taken": table.players - table.free, "host": display_name(table.host)})
    return rows
