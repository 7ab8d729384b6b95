"""Friend requests, friendships, blocks and the usual partner: the only writer of this app's
rows.

Every change to two people's standing locks both their user rows, lower id first (the idiom of
the practice and guest services), so a request and a block crossing each other cannot both
land. A refusal raises :class:`ServiceError` with a translated message and changes nothing.
A block (and an unblock) bumps every open table the blocker sits at, so the chat they see
changes at once (moderation's state part reads ``apps.tables.hooks.hidden_from``).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts.selectors import is_guest, user_by_display_name
from apps.core import limits
from apps.core.errors import ServiceError
from apps.tables import services as tables
from apps.tables.models import Connection, Seat
from apps.tables.state import display_name as name_of

from . import events
from .models import Block, Friendship, UsualPartner
from .selectors import are_friends, blocked_either_way, pair_of

User = get_user_model()

#: The event a block or unblock adds to the tables the blocker sits at: it says nothing of
#: who, since everyone at the table gets the version's events.
CHAT_VIEW_EVENT = {"kind": "chat_view"}
#: Friend requests a person may send in a window (counted in the shared cache: a request
#: withdrawn leaves no row to count, and sending and withdrawing cost the other person a list
#: that keeps changing).
REQUESTS_LIMIT = 10
REQUESTS_WINDOW = 600  # seconds


def _require_account(user) -> None:
    tables.require_signed_in(user)
    if is_guest(user):
        raise ServiceError(_("Sign up to have friends: a guest plays without a friends list."),
                           code="guest")


def _lock_pair(a_id: int, b_id: int) -> None:
    list(User.objects.select_for_update().filter(pk__in=(a_id, b_id)).order_by("pk")
         .values_list("pk", flat=True))


def _other(person_id: int):
    other = User.objects.filter(pk=person_id).select_related("profile").first()
    if other is None:
        raise ServiceError(_("That player does not exist."), code="no_such_player")
    return other


def request_friend(*, user, display_name: str) -> Friendship:
    """Ask the person called ``display_name`` to be friends. When they had asked ``user``
    already, asking back accepts their request."""
    _require_account(user)
    name = " ".join((display_name or "").split())
    if not name:
        raise ServiceError(_("Write the display name of the person to add."), code="empty")
    key = f"friends:requests:{user.pk}"
    limits.require_under(key, limit=REQUESTS_LIMIT, message=_(
        "You can send %(limit)d friend requests in %(minutes)d minutes: wait a few minutes "
        "before the next.") % {"limit": REQUESTS_LIMIT, "minutes": REQUESTS_WINDOW // 60})
    other = user_by_display_name(name)
    if other is None:
        raise ServiceError(_("Nobody is called %(name)s.") % {"name": name},
                           code="no_such_player")
    if other.pk == user.pk:
        raise ServiceError(_("That is your own name."), code="self")
    shown = name_of(other)
    if is_guest(other):
        raise ServiceError(_("%(name)s is playing as a guest: guests cannot be added as "
                             "friends.") % {"name": shown}, code="guest")
    with transaction.atomic():
        _lock_pair(user.pk, other.pk)
        block = blocked_either_way(user.pk, other.pk)
        if block is not None and block.blocker_id == user.pk:
            raise ServiceError(_("You blocked %(name)s: unblock them first.") % {"name": shown},
                               code="blocked")
        if block is not None:
            # Neutral on purpose: nobody learns from a refusal that they were blocked.
            raise ServiceError(_("You cannot send %(name)s a friend request.")
                               % {"name": shown}, code="refused")
        pair = pair_of(user.pk, other.pk)
        if pair is not None and pair.status == Friendship.Status.ACCEPTED:
            raise ServiceError(_("%(name)s is already your friend.") % {"name": shown},
                               code="already_friends")
        if pair is not None and pair.asked_by_id == user.pk:
            raise ServiceError(_("You have already asked %(name)s; they have not answered "
                                 "yet.") % {"name": shown}, code="already_asked")
        if pair is not None:
            return _accept(pair)
        first, second = sorted((user.pk, other.pk))
        limits.count_after_commit(key, window=REQUESTS_WINDOW)
        row = Friendship.objects.create(first_id=first, second_id=second, asked_by=user)
        events.send_after_commit(events.friend_requested, Friendship, request_id=row.pk,
                                 asker_id=user.pk, asked_id=other.pk)
        return row


def _accept(pair: Friendship) -> Friendship:
    pair.status, pair.accepted_at = Friendship.Status.ACCEPTED, timezone.now()
    pair.save(update_fields=["status", "accepted_at"])
    return pair


def _open_request(user, request_id: int, *, asked_by_me: bool) -> Friendship:
    """The pending request ``request_id`` between ``user`` and someone, locked; asked of
    ``user`` (or, ``asked_by_me``, by them)."""
    row = Friendship.objects.filter(pk=request_id, status=Friendship.Status.PENDING).first()
    if row is not None:
        _lock_pair(row.first_id, row.second_id)
        row = Friendship.objects.filter(pk=request_id,
                                        status=Friendship.Status.PENDING).first()
    mine = row is not None and user.pk in (row.first_id, row.second_id) \
        and (row.asked_by_id == user.pk) == asked_by_me
    if not mine:
        raise ServiceError(_("That friend request is no longer open."), code="no_request")
    return row


def accept_request(*, user, request_id: int) -> Friendship:
    _require_account(user)
    with transaction.atomic():
        return _accept(_open_request(user, request_id, asked_by_me=False))


def decline_request(*, user, request_id: int) -> None:
    """The person asked says no: the request goes (the asker may ask again later)."""
    _require_account(user)
    with transaction.atomic():
        _open_request(user, request_id, asked_by_me=False).delete()


def cancel_request(*, user, request_id: int) -> None:
    """The asker takes their request back."""
    _require_account(user)
    with transaction.atomic():
        _open_request(user, request_id, asked_by_me=True).delete()


def _part(a_id: int, b_id: int) -> None:
    """Whatever joins two people goes: their row (request or friendship), and each as the
    other's usual partner."""
    first, second = sorted((a_id, b_id))
    Friendship.objects.filter(first_id=first, second_id=second).delete()
    UsualPartner.objects.filter(user_id=a_id, partner_id=b_id).delete()
    UsualPartner.objects.filter(user_id=b_id, partner_id=a_id).delete()


def remove_friend(*, user, friend_id: int) -> None:
    _require_account(user)
    with transaction.atomic():
        _lock_pair(user.pk, friend_id)
        if not are_friends(user.pk, friend_id):
            raise ServiceError(_("That person is not your friend."), code="not_friend")
        _part(user.pk, friend_id)


def block(*, user, person_id: int) -> Block:
    """``user`` stops hearing from ``person_id``: their invitations and chat are hidden from
    ``user``, and their friendship or requests go. The other person is not told."""
    _require_account(user)
    other = _other(person_id)
    if other.pk == user.pk:
        raise ServiceError(_("You cannot block yourself."), code="self")
    with transaction.atomic():
        _lock_pair(user.pk, other.pk)
        if Block.objects.filter(blocker=user, blocked=other).exists():
            raise ServiceError(_("You have already blocked %(name)s.")
                               % {"name": name_of(other)},
                               code="already_blocked")
        row = Block.objects.create(blocker=user, blocked=other)
        _part(user.pk, other.pk)
        _tell_tables(user.pk)
    return row


def unblock(*, user, person_id: int) -> None:
    _require_account(user)
    with transaction.atomic():
        _lock_pair(user.pk, person_id)
        deleted, _rows = Block.objects.filter(blocker=user, blocked_id=person_id).delete()
        if not deleted:
            raise ServiceError(_("You have not blocked that person."), code="not_blocked")
        _tell_tables(user.pk)


def _tell_tables(user_id: int) -> None:
    """Bump every open table ``user_id`` sits at or watches: the chat they see is composed
    again with whom they block now."""
    seated = Seat.objects.filter(user_id=user_id, table__state__in=tables.RUNNING)
    watched = Connection.objects.filter(user_id=user_id, table__state__in=tables.RUNNING)
    ids = sorted(set(seated.values_list("table_id", flat=True))
                 | set(watched.values_list("table_id", flat=True)))
    for table_id in ids:
        tables.touch(table_id=table_id, events=[dict(CHAT_VIEW_EVENT)])


def set_usual_partner(*, user, partner_id: int | None) -> UsualPartner | None:
    """Choose the friend ``user`` usually plays pairs with, or clear it (``None``)."""
    _require_account(user)
    with transaction.atomic():
        if partner_id is None:
            deleted, _rows = UsualPartner.objects.filter(user_id=user.pk).delete()
            if not deleted:
                raise ServiceError(_("You have no usual partner to clear."), code="no_partner")
            return None
        _lock_pair(user.pk, partner_id)
        if not are_friends(user.pk, partner_id):
            raise ServiceError(_("Only a friend can be your usual partner."),
                               code="not_friend")
        row, _created = UsualPartner.objects.update_or_create(
            user_id=user.pk, defaults={"partner_id": partner_id, "chosen_at": timezone.now()})
        return row
