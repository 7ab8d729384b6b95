"""Beat's pass over one kind of due work, the same in every app (the tables' sweep, the
tournaments' tick, the club's unfilled stakes): each item in a service call of its own."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from .errors import ServiceError

Item = TypeVar("Item")


def act_on_each(*, due: Iterable[Item], act: Callable[[Item], object]) -> int:
    """Call ``act`` on every item of ``due`` (the caller's query, limited by the caller);
    returns how many calls went through.

    ``due`` is read whole before the first call, since the calls change the rows it was read
    from. Between the query and the call an item may have moved on (started, closed, no longer
    due): its service refuses with a ``ServiceError``, and the item is skipped while the others
    are still done. Any other error stops the pass, and beat's next one starts over.
    """
    done = 0
    for item in list(due):
        try:
            act(item)
        except ServiceError:
            continue
        done += 1
    return done
