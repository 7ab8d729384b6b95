"""Reads for the friends page, the table page's host and the apps above (tournaments).

**Online** means holding a table socket now: at least one
:class:`~apps.tables.models.Connection` row, at a table played or watched. Those rows are
presence the site already keeps honest (a closed page ends its row at once, a vanished browser
within 25 s, a dead web process within 16 s: docs/protocol.md, "Presence"), so "online" costs
no write of its own and is never minutes stale. A person on the home page or the lobby with no
table open is offline: they can still be invited, and the invitation rings on their home page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.db.models import Q

from apps.accounts.validators import display_name_key
from apps.tables.models import Connection, Invitation, Seat, Table
from apps.tables.state import avatar_of, display_name

from .models import Block, Friendship, UsualPartner

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser as User

#: People a name search shows.
SEARCH_LIMIT = 10


@dataclass
class Person:
    """A person as the friends page and the table page show them."""

    user: User
    name: str
    avatar: str
    online: bool = False
    #: A public table they hold a socket at (to watch or join), or None.
    table: Table | None = None
    usual_partner: bool = False
    #: For the host's list at a table: sitting there already, invited there already.
    seated_here: bool = False
    invited_here: bool = False
    #: For the name search: "friend", "asked" (you asked them), "asking" (they asked you),
    #: "blocked" (you blocked them), or "".
    relation: str = ""
    request_id: int | None = field(default=None)


def blocked_ids(user_id: int) -> set[int]:
    """The people ``user_id`` blocked: the tables' ``hidden_from`` hook."""
    return set(Block.objects.filter(blocker_id=user_id).values_list("blocked_id", flat=True))


def blocked_either_way(a_id: int, b_id: int) -> Block | None:
    return Block.objects.filter(Q(blocker_id=a_id, blocked_id=b_id)
                                | Q(blocker_id=b_id, blocked_id=a_id)).first()


def pair_of(a_id: int, b_id: int) -> Friendship | None:
    first, second = sorted((a_id, b_id))
    return Friendship.objects.filter(first_id=first, second_id=second).first()


def are_friends(a_id: int, b_id: int) -> bool:
    row = pair_of(a_id, b_id)
    return row is not None and row.status == Friendship.Status.ACCEPTED


def usual_partner_of(user) -> User | None:
    """The friend ``user`` chose to play pairs with (tournaments register the two), or None.
    The friends services clear it when the friendship ends, so it is always a friend."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    row = UsualPartner.objects.filter(user_id=user.pk).select_related("partner__profile").first()
    return None if row is None else row.partner


def _friendships(user_id: int):
    return Friendship.objects.filter(Q(first_id=user_id) | Q(second_id=user_id))


def _people(ids) -> dict[int, User]:
    users = get_user_model().objects.filter(pk__in=set(ids)).select_related("profile")
    return {u.pk: u for u in users}


def _person(user) -> Person:
    return Person(user=user, name=display_name(user), avatar=avatar_of(user))


def _watchable(table: Table) -> bool:
    """A table a friend may be sent to: listed for anyone, and open to watchers now."""
    return (table.public and not table.hidden and not table.practice
            and table.state != Table.State.CLOSED
            and (table.watchers_allowed or table.state == Table.State.WAITING))


def _where(ids) -> tuple[set[int], dict[int, Table]]:
    """Who of ``ids`` is online, and the public table each is at (their latest socket's)."""
    online: set[int] = set()
    tables: dict[int, Table] = {}
    for conn in (Connection.objects.filter(user_id__in=set(ids)).select_related("table")
                 .order_by("-opened_at", "-pk")):
        online.add(conn.user_id)
        if conn.user_id not in tables and _watchable(conn.table):
            tables[conn.user_id] = conn.table
    return online, tables


def friends_of(user) -> list[Person]:
    """``user``'s friends, online ones first, then by name."""
    ids = [f.other(user.pk) for f in _friendships(user.pk)
           .filter(status=Friendship.Status.ACCEPTED)]
    people = _people(ids)
    online, tables = _where(ids)
    partner = UsualPartner.objects.filter(user_id=user.pk).values_list("partner_id",
                                                                       flat=True).first()
    rows = []
    for uid, person in people.items():
        row = _person(person)
        row.online, row.table = uid in online, tables.get(uid)
        row.usual_partner = uid == partner
        rows.append(row)
    return sorted(rows, key=lambda r: (not r.online, r.name.casefold()))


def requests_of(user) -> tuple[list[Person], list[Person]]:
    """Pending requests: (asked of ``user``, asked by ``user``), oldest first."""
    pending = list(_friendships(user.pk).filter(status=Friendship.Status.PENDING)
                   .order_by("created_at", "pk"))
    people = _people(f.other(user.pk) for f in pending)
    incoming, outgoing = [], []
    for row in pending:
        other = people.get(row.other(user.pk))
        if other is None:
            continue
        person = _person(other)
        person.request_id = row.pk
        (outgoing if row.asked_by_id == user.pk else incoming).append(person)
    return incoming, outgoing


def blocked_people(user) -> list[Person]:
    ids = list(Block.objects.filter(blocker_id=user.pk).order_by("-created_at")
               .values_list("blocked_id", flat=True))
    people = _people(ids)
    return [_person(people[i]) for i in ids if i in people]


def search(user, query: str) -> list[Person]:
    """Accounts whose display name starts with ``query`` (ignoring case), not ``user`` nor
    guests, with how they stand with ``user``. People who blocked ``user`` are listed like
    anyone: leaving them out would tell."""
    key = display_name_key(query)
    if not key:
        return []
    users = list(get_user_model().objects.filter(profile__display_name_key__startswith=key,
                                                 profile__guest=False)
                 .exclude(pk=user.pk).select_related("profile")
                 .order_by("profile__display_name_key")[:SEARCH_LIMIT])
    ids = [u.pk for u in users]
    pairs = {f.other(user.pk): f for f in _friendships(user.pk)
             .filter(Q(first_id__in=ids) | Q(second_id__in=ids))}
    blocked = set(Block.objects.filter(blocker_id=user.pk, blocked_id__in=ids)
                  .values_list("blocked_id", flat=True))
    rows = []
    for other in users:
        row = _person(other)
        pair = pairs.get(other.pk)
        if other.pk in blocked:
            row.relation = "blocked"
        elif pair is not None and pair.status == Friendship.Status.ACCEPTED:
            row.relation = "friend"
        elif pair is not None:
            row.relation = "asked" if pair.asked_by_id == user.pk else "asking"
            row.request_id = pair.pk
        rows.append(row)
    return rows


def invite_list(user, table: Table) -> list[Person]:
    """The host's friends for the table page's one-click invitations: online first, with
    whether each already sits at this table or was invited to it."""
    rows = friends_of(user)
    ids = [r.user.pk for r in rows]
    seated = set(Seat.objects.filter(table=table, user_id__in=ids)
                 .values_list("user_id", flat=True))
    invited = set(Invitation.objects.filter(table=table, invitee_id__in=ids)
                  .values_list("invitee_id", flat=True))
    for row in rows:
        row.seated_here = row.user.pk in seated
        row.invited_here = row.user.pk in invited
    return rows
