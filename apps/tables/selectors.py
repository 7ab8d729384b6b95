"""Reads for pages and sockets. Each person gets only what their seat may know."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Count, Q
from django.utils import translation

from . import game, state
from .models import Invitation, Table
from .state import display_name, number_words  # noqa: F401  (pages use them from here)


def table_state(*, table_id: int, user, observer: bool = False) -> dict:
    """Everything one person's page shows (``apps.tables.state``): the stored snapshot when it
    is current, else one built from the database, composed for this person."""
    snap = current_snapshot(table_id)
    language = translation.get_language() or settings.LANGUAGE_CODE
    user_id = user.pk if user is not None and user.is_authenticated else None
    return state.compose(snap, state.Viewer(user_id, language, observer))


def current_snapshot(table_id: int) -> dict:
    """The snapshot of the table's version in the database: from Redis when it is there and
    not older, else built now (and stored for the next reader)."""
    from apps.realtime import snapshots

    row = Table.objects.filter(pk=table_id).values_list("version", "code").first()
    if row is None:
        raise Table.DoesNotExist(table_id)
    version, code = row
    snap = snapshots.load(table_id, code)
    if snap is None or snap["version"] < version:
        snap = state.build_latest(table_id)
        snapshots.store(table_id, snap)
    return snap


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


def has_finished_round(table: Table) -> bool:
    """Whether the table's record download has anything in it yet."""
    from .models import Round

    return Round.objects.filter(match__table=table, voided=False,
                                finished_at__isnull=False).exists()


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
