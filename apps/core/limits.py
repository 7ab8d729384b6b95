"""Rate limits for actions that leave no rows to count: a friend request withdrawn, a
registration taken back. Counted in Django's cache, which is Redis on the site (every web
process counts against the same limit; ``tests/core/test_shared_limits.py``), as the wrong
invite codes and the guests per address are; the chat and the reviews count their own rows
instead, which stay.

A window opens with a person's first counted action and lasts ``window`` seconds; up to
``limit`` actions fit in it. Only what went through is counted, after its commit: a refusal,
or a change rolled back, costs nothing.
"""

from __future__ import annotations

from django.core.cache import cache
from django.db import transaction

from .errors import ServiceError


def require_under(key: str, *, limit: int, message: str) -> None:
    """Refuse (``rate_limited``, with ``message``) when ``key`` counted ``limit`` already."""
    if (cache.get(key) or 0) >= limit:
        raise ServiceError(message, code="rate_limited")


def count_after_commit(key: str, *, window: int) -> None:
    """Count one action for ``key`` once the caller's transaction commits."""
    transaction.on_commit(lambda: _count(key, window))


def _count(key: str, window: int) -> None:
    cache.add(key, 0, window)
    try:
        cache.incr(key)
    except ValueError:  # the window ended between add and incr
        cache.set(key, 1, window)
