"""Presence: who holds a page open at a table, and the leases that let a dead web process's
sockets end (``apps.realtime.hub`` renews them).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from apps.core import snapshots
from apps.core.beat import act_on_each
from apps.core.errors import StaleMove
from apps.core.protocol import (
    BANNED_CLOSE_CODE,
    NOT_FOUND_CLOSE_CODE,
    SIGNED_OUT_CLOSE_CODE,
    WATCHING_OFF_CLOSE_CODE,
)

from .. import hooks, state
from ..models import (
    Connection,
    Table,
    TableEvent,
    WebNode,
)
from ..selectors import may_watch, watching_refused
from ..state import watcher_count
from .base import Outcome, bump, lock_table, mark_if_empty, ring, table_seats
from .clock import limit_setting
from .lifecycle import unpause


def connect(*, user, table_id: int, channel_name: str,
            lease: Lease | None = None) -> Outcome | None:
    """A socket opened. A seated person's first tab makes them connected; back within the
    round, they take their hand back from the bot; an empty table wakes up.

    A person without a seat is a watcher: their socket never touches a seat's presence nor the
    table's emptiness (a table its players left still pauses and closes), and their first tab
    only changes the watcher count, with a light bump (:func:`_bump_watchers`).

    ``lease`` is the web process holding the socket: its lease keeps the connection alive,
    and is written again here, in the same transaction, if the sweep deleted it while the
    process was idle.
    """
    with transaction.atomic():
        table = lock_table(table_id)
        if lease is not None:
            hold_lease(lease)
        was = Connection.objects.filter(table=table, user=user).exists()
        Connection.objects.update_or_create(
            channel_name=channel_name,
            defaults={"user": user, "table": table, "node_id": lease and lease.boot})
        seat = table.seats.filter(user=user).first()
        if seat is None:
            return None if was else _bump_watchers(table)
        events: list[dict] = []
        if table.empty_since is not None:
            table.empty_since = None
            table.save(update_fields=["empty_since"])
        if not was:
            seat.away_since = None
            if seat.standin and not seat.leaving and not seat.forfeited:
                seat.standin = False
            seat.save(update_fields=["away_since", "standin"])
            events.append({"kind": "presence", "seat": seat.index, "connected": True})
        if table.paused and table.paused_by_id is None and table.paused_at is not None \
                and table.state == Table.State.PLAYING:
            return unpause(table, events + [{"kind": "resumed"}])
        if not events:
            return None
        return bump(table, events)


def disconnect(*, channel_name: str, now: datetime | None = None,
               lease_expired_before: datetime | None = None) -> Outcome | None:
    """A socket closed. A person's last tab makes them away; no seated person left pauses the
    table (by itself, so it resumes when one comes back) and starts its 2-minute expiry;
    watchers' sockets count for neither.

    ``lease_expired_before``: the sweep ends the socket only if its process's lease is still
    expired now that the table is locked (the process may have renewed it meanwhile).
    """
    with transaction.atomic():
        conn = Connection.objects.filter(channel_name=channel_name).first()
        if conn is None:
            return None
        table = lock_table(conn.table_id)
        gone = Connection.objects.filter(pk=conn.pk)
        if lease_expired_before is not None:
            gone = gone.filter(node__seen_at__lt=lease_expired_before)
        if gone.delete()[0] == 0:
            return None  # another call (the sweep, the socket itself) ended it first
        user_id = conn.user_id
        now = now or timezone.now()
        events: list[dict] = []
        last_tab = not Connection.objects.filter(table=table, user_id=user_id).exists()
        seat = table.seats.filter(user_id=user_id).first()
        if seat is None:
            return _bump_watchers(table, now=now) if last_tab else None
        if last_tab:
            seat.away_since = now
            seat.save(update_fields=["away_since"])
            events.append({"kind": "presence", "seat": seat.index, "connected": False})
        mark_if_empty(table, events, now=now)
        if not events:
            return None
        return bump(table, events, now=now)


def _bump_watchers(table: Table, *, now: datetime | None = None) -> Outcome:
    """A watcher came or went: a new version whose only change is the watcher count.

    Nothing a watcher does can move the clock or the game, so the clock is not armed again and
    no timer is scheduled; the snapshot is the previous version's with the new count
    (``state.with_watchers``), so a crowd arriving costs no engine restore, seat view or
    translation per arrival. Only when the previous snapshot is not at hand is it built in
    full.
    """
    now = now or timezone.now()
    old = table.version
    # updated_at stays: "your tables" are ordered by what happened at them, not by who looked.
    if Table.objects.filter(pk=table.pk, version=old).update(version=old + 1) != 1:
        raise StaleMove()
    table.version = old + 1
    count = watcher_count(table.pk)
    events = [{"kind": "watchers", "count": count}]
    TableEvent.objects.create(table=table, version=table.version, events=events, created_at=now)
    previous = snapshots.load_version(table.pk, table.code, old)
    snapshot = state.with_watchers(table, previous, events, count)
    if snapshot is None:
        snapshot = state.build(table, engine=None, seats=table_seats(table), previous=previous,
                               events=events)
    outcome = Outcome(table.pk, table.version, events, snapshot=snapshot)
    transaction.on_commit(lambda: ring(outcome))
    return outcome


@dataclass
class SocketOpened:
    """What a table socket needs once it is accepted: a close code when it may not stay
    (4401 not signed in, 4403 banned, 4404 no such table or not open to this person), the
    person's language, and the table's version in the database."""

    close_code: int | None
    language: str
    version: int = -1
    code: str = ""
    #: Whose chat lines the person does not want to see (``hooks.hidden_from``).
    hidden: frozenset[int] = frozenset()


def open_socket(*, user, table_id: int, channel_name: str, lease: Lease | None,
                known_ids=()) -> SocketOpened:
    """Everything a new table socket asks of the database, in one call: may this person hold
    it, in which language, and (for people) their presence."""
    language = settings.LANGUAGE_CODE
    if user is None or not user.is_authenticated:
        return SocketOpened(SIGNED_OUT_CLOSE_CODE, language)
    profile = getattr(user, "profile", None)
    if getattr(profile, "language", None) in dict(settings.LANGUAGES):
        language = profile.language
    if hooks.refusal(user) is not None:
        return SocketOpened(BANNED_CLOSE_CODE, language)
    if not may_watch(table_id=table_id, user=user, known_ids=known_ids):
        return SocketOpened(NOT_FOUND_CLOSE_CODE, language)
    if watching_refused(table_id=table_id, user=user):
        return SocketOpened(WATCHING_OFF_CLOSE_CODE, language)
    outcome = connect(user=user, table_id=table_id, channel_name=channel_name, lease=lease)
    code, version = Table.objects.filter(pk=table_id).values_list("code", "version").get()
    return SocketOpened(None, language, outcome.version if outcome else version, code,
                        frozenset(hooks.hidden_from(user.pk)))


#: How often a web process renews its lease, and how long a lease lasts unrenewed. A socket
#: whose process died counts as away within LEASE + the sweep's second (docs/protocol.md).
HEARTBEAT = timedelta(seconds=5)


LEASE = timedelta(seconds=15)


def lease_length() -> timedelta:
    return limit_setting("PRESENCE_LEASE_SECONDS", LEASE)


@dataclass(frozen=True)
class Lease:
    """A web process as its connections name it: ``boot`` (one run of the process, made by the
    process itself) and ``name`` (its place, the same across its restarts)."""

    boot: str
    name: str


def hold_lease(lease: Lease, *, now: datetime | None = None) -> bool:
    """Renew the lease, writing its row again if the sweep deleted it; True when it was
    written anew.

    The sweep deletes a lease only by a statement that requires it to be expired
    (:func:`_delete_idle_leases`): once this UPDATE has renewed the row, a delete that was
    waiting for it finds it renewed and leaves it.
    """
    now = now or timezone.now()
    if WebNode.objects.filter(boot=lease.boot).update(seen_at=now):
        return False
    _node, created = WebNode.objects.get_or_create(
        boot=lease.boot, defaults={"name": lease.name, "seen_at": now, "started_at": now})
    return created


def register_node(lease: Lease) -> None:
    """A web process starts holding sockets: its lease begins, and whatever an earlier run of
    the same process (same ``name``) left connected ends at once."""
    hold_lease(lease)
    earlier = WebNode.objects.filter(name=lease.name).exclude(boot=lease.boot)
    _end_connections(Connection.objects.filter(node__in=earlier.values("boot")))
    _delete_idle_leases(earlier)


@dataclass
class Renewal:
    """What a web process learns from renewing its lease: every version of the tables it holds
    sockets at (a lost doorbell shows as a socket behind), and its sockets whose presence the
    database no longer has (``missing``: ended by the sweep while the process was stalled)."""

    versions: dict[int, int]
    missing: list[str]
    rewritten: bool = False


def renew_lease(lease: Lease, *, channels: list[str], present: list[str],
                table_ids: list[int]) -> Renewal:
    """A web process's heartbeat: renew its lease (writing it again if it was gone), end the
    connections it holds rows for but no longer has a socket for (``channels``: every socket
    it has; a socket that died without closing is not among them), and tell it which of its
    open table sockets (``present``) have no connection row any more."""
    rewritten = hold_lease(lease)
    held = set(Connection.objects.filter(node_id=lease.boot)
                                 .values_list("channel_name", flat=True))
    _end_connections(Connection.objects.filter(channel_name__in=held - set(channels)))
    versions = dict(Table.objects.filter(pk__in=table_ids).values_list("pk", "version"))
    return Renewal(versions, [c for c in present if c not in held], rewritten)


def expire_leases(*, now: datetime | None = None) -> int:
    """End the presence of every socket held by a web process whose lease ran out, then delete
    the leases left holding nothing."""
    now = now or timezone.now()
    cutoff = now - lease_length()
    dead = WebNode.objects.filter(seen_at__lt=cutoff)
    ended = _end_connections(Connection.objects.filter(node__in=dead.values("boot")), now=now,
                             lease_expired_before=cutoff)
    _delete_idle_leases(dead)
    return ended


def _delete_idle_leases(leases) -> None:
    """Delete these leases where they hold no connection, in one DELETE whose WHERE is checked
    again on a row a concurrent renewal changed (PostgreSQL re-evaluates it after the lock):
    Django's collector would read first and delete by id, and so delete a lease renewed and
    given a connection in between."""
    leases.exclude(Exists(Connection.objects.filter(node_id=OuterRef("boot")))).delete()


def _end_connections(conns, now: datetime | None = None,
                     lease_expired_before: datetime | None = None) -> int:
    return act_on_each(
        due=conns.values_list("channel_name", flat=True)[:2000],
        act=lambda channel_name: disconnect(channel_name=channel_name, now=now,
                                            lease_expired_before=lease_expired_before))
