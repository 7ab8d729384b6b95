"""Reads for pages and sockets. Each person gets only what their seat may know."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db.models import Count, Q
from django.utils import translation

from apps.core import snapshots
from apps.rules import harness

from . import game, hooks, state
from .models import PRESET_CHOICES, Invitation, Match, Round, Table
from .names import seat_names
from .pace import move_time_label
from .state import (  # noqa: F401  (pages and sockets use them from here)
    display_name,
    number_words,
    watcher_count,
)

log = logging.getLogger(__name__)


def table_state(*, table_id: int, user, observer: bool = False) -> dict:
    """Everything one person's page shows (``apps.tables.state``): the stored snapshot when it
    is current, else one built from the database, composed for this person."""
    snap = current_snapshot(table_id)
    language = translation.get_language() or settings.LANGUAGE_CODE
    user_id = user.pk if user is not None and user.is_authenticated else None
    hidden = frozenset(hooks.hidden_from(user_id)) if user_id and not observer else frozenset()
    return state.compose(snap, state.Viewer(user_id, language, observer, hidden))


def current_snapshot(table_id: int) -> dict:
    """The snapshot of the table's version in the database: from Redis when it holds that
    version, else built now (and stored for the next reader)."""
    row = Table.objects.filter(pk=table_id).values_list("version", "code").first()
    if row is None:
        raise Table.DoesNotExist(table_id)
    version, code = row
    snap = snapshots.load(table_id, code)
    # Newer than the row is either a change committed since, or a version the database never
    # reached (restored behind Redis): the database says which.
    if snap is None or snap["version"] != version:
        snap = rebuilt_snapshot(table_id)
        if snap is None:
            raise Table.DoesNotExist(table_id)
    return snap


def rebuilt_snapshot(table_id: int) -> dict | None:
    """The table's snapshot built from the database now, and stored (:func:`keep_snapshot`)."""
    snap = state.build_latest(table_id)
    if snap is not None:
        keep_snapshot(table_id, snap)
    return snap


def keep_snapshot(table_id: int, snap: dict) -> None:
    """Store ``snap``, a version the database committed, as ``snapshots.store`` does."""
    if not snapshots.store(table_id, snap):
        refused_snapshot(table_id, snap)


def refused_snapshot(table_id: int, snap: dict) -> None:
    """Redis refused ``snap`` because it holds the same version or a newer one. Usually a
    newer change's writer stored first; but when the database has not got the version Redis
    holds (a failover or a restore lost the last commits, Redis kept them), that snapshot is
    replaced: kept as "newer", every reader would take it over the database's, and the table's
    real versions would be refused until they passed it."""
    held = snapshots.held_version(table_id, snap["table"]["code"])
    if held is None or held <= snap["version"]:
        return
    now = Table.objects.filter(pk=table_id).values_list("version", flat=True).first()
    if now is None or held <= now:
        return
    log.warning("table %s: Redis held v%s, a version the database (v%s) never reached; the "
                "database's v%s replaces it", table_id, held, now, snap["version"])
    snapshots.store(table_id, snap, ahead_of=now)


def lobby_tables() -> list[Table]:
    return list(
        # A table nobody holds open (its last person left the page) leaves the lobby at once.
        Table.objects.filter(public=True, hidden=False, state=Table.State.WAITING,
                             empty_since__isnull=True, practice=False)
        .annotate(free=Count("seats", filter=Q(seats__user__isnull=True,
                                                seats__is_bot=False)))
        .filter(free__gt=0).select_related("host").order_by("-created_at")[:100]
    )


def counted_tables():
    """The tables whose results count (ratings, leagues, coins: later issues): every table but
    practice ones. ``Table.practice`` is the one predicate; use this rather than repeating it."""
    return Table.objects.filter(practice=False)


def tables_of(user) -> list[Table]:
    return list(Table.objects.filter(seats__user=user).exclude(state=Table.State.CLOSED)
                .select_related("host").order_by("-updated_at").distinct())


def invitations_for(user) -> list[Invitation]:
    """Open invitations to ``user``, but none from people they do not want to hear from."""
    return list(Invitation.objects.filter(invitee=user, answered_at__isnull=True)
                .exclude(table__state=Table.State.CLOSED)
                .exclude(inviter_id__in=hooks.hidden_from(user.pk))
                .select_related("table", "inviter").order_by("-created_at"))


# -- pages (views and the table socket) -------------------------------------------------------

def may_watch(*, table_id: int, user, known_ids=()) -> bool:
    """Whether ``user`` may open the table's page state: a public table, or an invite-only one
    they host, sit at, were invited to, or whose code this browser has entered."""
    table = Table.objects.filter(pk=table_id).first()
    if table is None:
        return False
    if table.practice:
        return is_practising_at(table, user)
    if table.public or table.pk in set(known_ids or ()):
        return True
    if user is None or not user.is_authenticated:
        return False
    return (table.host_id == user.pk or table.seats.filter(user=user).exists()
            or Invitation.objects.filter(table=table, invitee=user).exists())


def is_practising_at(table: Table, user) -> bool:
    """Whether ``user`` is the person of this practice table: it is theirs alone (nobody
    watches it, whoever has its link)."""
    return (user is not None and user.is_authenticated
            and (table.host_id == user.pk or table.seats.filter(user=user).exists()))


def watching_refused(*, table_id: int, user) -> bool:
    """Whether the host's "no watching" keeps ``user`` from the table's live state: once the
    match is on, for everyone but its players (a seat, or one reserved for them). Before the
    start the waiting table stays open, so people can come and take a seat."""
    table = Table.objects.filter(pk=table_id).only("watchers_allowed", "state").first()
    if table is None or table.watchers_allowed or table.state == Table.State.WAITING:
        return False
    if user is None or not user.is_authenticated:
        return True
    return not (table.seats.filter(user=user).exists()
                or table.seats.filter(reserved_for=user).exists())


def may_download(table: Table, user) -> bool:
    """The host and the people seated at the table may download its record."""
    if user is None or not user.is_authenticated:
        return False
    return table.host_id == user.pk or table.seats.filter(user=user).exists()


def _recorded_rounds(table: Table) -> Q:
    """The rounds a table's record holds: the finished ones, and once the table is closed the
    round its closing stopped (empty for two minutes, or closed by staff, who void it), so
    that what happened in it can be seen. While the table is open, an unfinished round's
    hands never leave the server this way."""
    finished = Q(voided=False, finished_at__isnull=False)
    if table.state == Table.State.CLOSED:
        return finished | Q(result__isnull=True)
    return finished


def has_record(table: Table) -> bool:
    """Whether the table's record download has anything in it yet."""
    return Round.objects.filter(_recorded_rounds(table), match__table=table).exists()


def finished_record(table: Table, number: int | None = None) -> dict | None:
    """The harness record of a match (the current one, or match ``number``): its finished
    rounds, and at a closed table the round the closing stopped, which the harness takes as a
    record stopped mid-round (shared/specs/harness.md)."""
    matches = Match.objects.filter(table=table)
    match = (matches.filter(number=number) if number is not None
             else matches.order_by("-number")).first()
    if match is None:
        return None
    rounds = []
    for rnd in (match.rounds.filter(_recorded_rounds(table))
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
                     "taken": table.players - table.free, "host": display_name(table.host),
                     # Quick tables fill with bots at ``fill_at``; once started (bot_filled
                     # or not) they leave the lobby like any table.
                     "quick": table.quick,
                     # Turn-based tables are listed apart, with their time per move.
                     "pace": table.pace,
                     "move_time": move_time_label(table.move_seconds)
                     if table.turn_based and table.move_seconds else ""})
    return rows


# -- history and replay -----------------------------------------------------------------------

#: Finished matches per page of a person's history.
HISTORY_PER_PAGE = 20


def _played_by(user_id: int) -> Q:
    """Rounds whose seats held ``user_id`` (``Round.seat_users``, by array index: a lookup
    SQLite and PostgreSQL both know; at most four seats)."""
    q = Q()
    for index in range(4):
        q |= Q(**{f"seat_users__{index}": user_id})
    return q


def played_match(match, user) -> bool:
    """Whether ``user`` sat at ``match`` in any of its rounds that count."""
    if user is None or not user.is_authenticated:
        return False
    return any(user.pk in (rnd or []) for rnd in match.rounds.filter(voided=False)
               .values_list("seat_users", flat=True))


def replayable_match(table: Table, number: int, user):
    """Match ``number`` of ``table`` when it is finished and ``user`` may replay it: anyone
    for a public table's match, else the people who played it; None otherwise."""
    match = Match.objects.filter(table=table, number=number,
                                 finished_at__isnull=False).first()
    if match is None:
        return None
    if (table.public and not table.practice) or played_match(match, user):
        return match
    return None


def last_finished_match(table: Table, user) -> int | None:
    """The number of the table's latest finished match, when ``user`` may replay it."""
    number = (Match.objects.filter(table=table, finished_at__isnull=False)
              .order_by("-number").values_list("number", flat=True).first())
    if number is None or replayable_match(table, number, user) is None:
        return None
    return number


def _names(user_ids) -> dict[int, str]:
    from django.contrib.auth import get_user_model

    users = get_user_model().objects.filter(pk__in={u for u in user_ids if u}) \
        .select_related("profile")
    return {u.pk: display_name(u) for u in users}


def replay_of(table: Table, match) -> dict:
    """What the replay page shows of a finished match: its record (the download's), every
    position the engine went through (``harness.steps``: all hands, ends, running scores),
    and who sat where in each round, by name."""
    record = finished_record(table, match.number)
    rounds = list(match.rounds.filter(voided=False, finished_at__isnull=False)
                  .order_by("number").values_list("seat_users", flat=True))
    names = _names(u for seats in rounds for u in seats)
    rules = game.match_rules(match)
    bots = [[u is None for u in users] for users in rounds]
    seats = [seat_names([names.get(u, "") for u in users], round_bots)
             for users, round_bots in zip(rounds, bots, strict=True)]
    results = [rnd["result"] for rnd in harness.replay(record).get("rounds", [])]
    return {"record": record, "steps": harness.steps(record), "results": results,
            "seats": seats, "bots": bots,
            "preset": rules.preset, "partners": rules.partners, "sides": rules.sides,
            "match": match.number, "winner": match.winner}


def match_history(*, user, page=None, per_page: int = HISTORY_PER_PAGE):
    """The finished matches ``user`` played, newest first, one page of rows: when, the game,
    partners and opponents by name, the final score, and won or lost (pairs: by side; each
    alone: their rank). Practice tables' matches are listed too, marked as such."""
    from django.core.paginator import Paginator
    from django.db.models import Exists, OuterRef

    played = Round.objects.filter(_played_by(user.pk), match=OuterRef("pk"), voided=False)
    matches = (Match.objects.filter(Exists(played), finished_at__isnull=False)
               .select_related("table").order_by("-finished_at", "-pk"))
    current = Paginator(matches, per_page).get_page(page)
    rounds: dict[int, list] = {}
    for match_id, seats in (Round.objects.filter(match__in=list(current.object_list),
                                                 voided=False)
                            .order_by("number").values_list("match_id", "seat_users")):
        rounds.setdefault(match_id, []).append(seats)
    names = _names(u for seats_list in rounds.values() for seats in seats_list for u in seats)
    labels = dict(PRESET_CHOICES)
    rows = []
    for match in current.object_list:
        rows.append(_history_row(match, rounds.get(match.pk, []), user.pk, names, labels))
    current.object_list = rows
    return current


def _history_row(match, rounds: list, user_id: int, names: dict, labels: dict) -> dict:
    rules = game.match_rules(match)
    # The seats of the last round they played: partners and opponents as the match ended.
    seats = next((s for s in reversed(rounds) if user_id in s), rounds[-1] if rounds else [])
    mine = seats.index(user_id) if user_id in seats else 0
    side = rules.side_of(mine)

    named = seat_names([names.get(u, "") for u in seats], [u is None for u in seats])
    partners = [named[i] for i in range(len(seats))
                if i != mine and rules.partners and rules.side_of(i) == side]
    opponents = [named[i] for i in range(len(seats)) if rules.side_of(i) != side]
    scores = list(match.scores or [])
    rank = 1 + sum(1 for s in scores if s > scores[side]) if scores else None
    return {"match": match, "table": match.table, "finished_at": match.finished_at,
            "preset": str(labels.get(rules.preset, rules.preset)),
            "partners": partners, "opponents": opponents, "pairs": rules.partners,
            "mine": scores[side] if scores else None,
            "theirs": [s for i, s in enumerate(scores) if i != side],
            "games": list(match.games or []) if rules.best_of else None,
            "won": match.winner == side, "rank": rank, "of": len(scores),
            "practice": match.table.practice,
            "replayable": True}
