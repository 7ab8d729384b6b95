"""What the apps above tables add to a table's change, inside its transaction.

Tables know nothing of the club or of moderation; those apps register here from their
``AppConfig.ready`` (the idiom of ``state.register_part``), and the table services call the
hooks from the same places as always, under the table's row lock, so the lock order stays as
docs/club.md writes it. A hook may refuse the change by raising ``ServiceError``: the whole
transaction, the table's rows included, rolls back. What happens *after* the commit (sockets,
timers) is not a hook: the services do it with ``transaction.on_commit``.

- :func:`on_change`: every new version of a table (``services.base.bump``), with its seats and
  events: the club's stake tables keep their escrow in step with the seats here.
- :func:`on_match_finished`: a match's last round was settled: the club pays it.
- :func:`on_refusal`: may this person act at all (create, join, play now, rename)? Moderation's
  bans answer here, with the message to show.
- :func:`on_join_refusal`: may this person take a seat at this table (a host's condition on who
  sits)? :func:`on_quick_play_refusal`: may this person use "play now" now (a wait)?

Not a write, but a read the tables make for a person: :func:`hidden_from`, the people whose
invitations (and chat) this person does not want to see (someone they blocked).

And one hook that is not in the transaction: :func:`on_committed`, every version's events once
it is committed (a finished match, a seat left, a stand-in), for apps that follow the tables
(``docs/protocol.md`` lists the events). It cannot refuse anything; a hook that fails is logged
and the others still run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

log = logging.getLogger(__name__)

#: fn(*, table, seats, events, now) -> None; may raise ServiceError.
ChangeHook = Callable[..., None]
#: fn(*, table, match, seats, now) -> None.
MatchHook = Callable[..., None]
#: fn(user) -> the refusal's message, or None when the person may act.
RefusalHook = Callable[[Any], "str | None"]

#: fn(*, table_id, version, events) -> None, after the commit.
CommittedHook = Callable[..., None]
#: fn(*, table, user) -> the refusal's message, or None.
JoinHook = Callable[..., "str | None"]
#: fn(user_id) -> ids of the people this person does not want to hear from.
HiddenHook = Callable[[int], "set[int]"]

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


def table_changing(*, table, seats: list, events: list[dict], now: datetime) -> None:
    for hook in _changes.values():
        hook(table=table, seats=seats, events=events, now=now)


def match_finished(*, table, match, seats: list, now: datetime) -> None:
    for hook in _match_ends.values():
        hook(table=table, match=match, seats=seats, now=now)


def refusal(user) -> str | None:
    """The first refusal any app has for this person, or None."""
    return _first(hook(user) for hook in _refusals.values())


def join_refusal(*, table, user) -> str | None:
    """The first refusal any app has for this person taking a seat at this table, or None."""
    return _first(hook(table=table, user=user) for hook in _join_refusals.values())


def quick_play_refusal(user) -> str | None:
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
