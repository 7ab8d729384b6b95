"""What the apps above tables add to a table's change, inside its transaction.

Tables know nothing of the apps above them; those apps register here from their
``AppConfig.ready`` (the idiom of ``state.register_part``), and the table services call the
hooks from the same places as always, under the table's row lock, so the lock order stays as
docs/club.md writes it. A hook may refuse the change by raising ``ServiceError``: the whole
transaction, the table's rows included, rolls back. What happens *after* the commit (sockets,
timers) is not a hook: the services do it with ``transaction.on_commit``.

- :func:`on_change`: every new version of a table (``services.base.bump``), with its seats and
  events: the club's stake tables keep their escrow in step with the seats, fair play keeps
  its record, a tournament table refuses a new match once its game is decided, and its
  host's pause or minimum fair-play share always.
- :func:`on_match_finished`: a match's last round was settled: the club pays it.
- :func:`on_refusal`: may this person act at all (create, join, play now, rename)? Moderation's
  bans answer here, with the message to show.
- :func:`on_join_refusal`: may this person take a seat at this table (fair play: a host's
  minimum share; tournaments: only the game's people)? :func:`on_quick_play_refusal`: may this
  person use "play now" now (fair play's wait)?

Not a write, but a read the tables make for a person: :func:`hidden_from` (friends' blocks),
the people whose invitations (and chat) this person does not want to see.

And one hook that is not in the transaction: :func:`on_committed`, every version's events once
it is committed (a finished match, a seat left, a stand-in), for apps that follow the tables
(``docs/protocol.md`` lists the events; the tournaments follow their tables). It cannot refuse
anything; a hook that fails is logged and the others still run. It runs on the call that made
the version, a person's move included, so it only looks at the events: work that takes longer
goes to a worker (``apps.tournaments.follow``).

Each hook's shape is a ``Protocol`` below; docs/architecture.md draws who registers which.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # for the annotations only: this module touches no row
    from .models import Match, Seat, Table

log = logging.getLogger(__name__)


class ChangeHook(Protocol):
    """Every new version, in its transaction; may refuse it by raising ``ServiceError``."""

    def __call__(self, *, table: Table, seats: list[Seat], events: list[dict],
                 now: datetime) -> None: ...


class MatchHook(Protocol):
    """A match's last round was settled, in its transaction."""

    def __call__(self, *, table: Table, match: Match, seats: list[Seat],
                 now: datetime) -> None: ...


class RefusalHook(Protocol):
    """Why this person may not act (or use "play now" now), or None when they may."""

    def __call__(self, user: Any, /) -> str | None: ...


class JoinHook(Protocol):
    """Why this person may not take a seat at this table, or None when they may."""

    def __call__(self, *, table: Table, user: Any) -> str | None: ...


class HiddenHook(Protocol):
    """The ids of the people ``user_id`` does not want to hear from."""

    def __call__(self, user_id: int, /) -> set[int]: ...


class CommittedHook(Protocol):
    """A version's events once it is committed: cannot refuse anything, and runs in the
    process that made the version (a person's move in a web process): what takes longer than
    a look at the events goes to a worker."""

    def __call__(self, *, table_id: int, version: int, events: list[dict]) -> None: ...

_changes: dict[str, ChangeHook] = {}
_match_ends: dict[str, MatchHook] = {}
_refusals: dict[str, RefusalHook] = {}
_committed: dict[str, CommittedHook] = {}
_join_refusals: dict[str, JoinHook] = {}
_quick_play_refusals: dict[str, RefusalHook] = {}
_hidden: dict[str, HiddenHook] = {}


def on_change(name: str, hook: ChangeHook) -> None:
    _changes[name] = hook


def on_match_finished(name: str, hook: MatchHook) -> None:
    _match_ends[name] = hook


def on_refusal(name: str, hook: RefusalHook) -> None:
    _refusals[name] = hook


def on_committed(name: str, hook: CommittedHook) -> None:
    _committed[name] = hook


def on_join_refusal(name: str, hook: JoinHook) -> None:
    _join_refusals[name] = hook


def on_quick_play_refusal(name: str, hook: RefusalHook) -> None:
    _quick_play_refusals[name] = hook


def on_hidden(name: str, hook: HiddenHook) -> None:
    _hidden[name] = hook


def table_changing(*, table: Table, seats: list[Seat], events: list[dict],
                   now: datetime) -> None:
    for hook in _changes.values():
        hook(table=table, seats=seats, events=events, now=now)


def match_finished(*, table: Table, match: Match, seats: list[Seat], now: datetime) -> None:
    for hook in _match_ends.values():
        hook(table=table, match=match, seats=seats, now=now)


def refusal(user: Any) -> str | None:
    """The first refusal any app has for this person, or None."""
    return _first(hook(user) for hook in _refusals.values())


def join_refusal(*, table: Table, user: Any) -> str | None:
    """The first refusal any app has for this person taking a seat at this table, or None."""
    return _first(hook(table=table, user=user) for hook in _join_refusals.values())


def quick_play_refusal(user: Any) -> str | None:
    return _first(hook(user) for hook in _quick_play_refusals.values())


def hidden_from(user_id: int) -> set[int]:
    """Everyone whose invitations and chat ``user_id`` does not want to see."""
    hidden: set[int] = set()
    for hook in _hidden.values():
        hidden |= hook(user_id)
    return hidden


def _first(messages) -> str | None:
    return next((m for m in messages if m is not None), None)


def committed(*, table_id: int, version: int, events: list[dict]) -> None:
    """A version was committed: every app that follows the tables hears its events. After the
    commit nothing can be undone, so a failing hook is logged and the others still run."""
    for name, hook in _committed.items():
        try:
            hook(table_id=table_id, version=version, events=events)
        except Exception:
            log.exception("the %s hook failed on table %s version %s", name, table_id,
                          version)
