"""What the site meets while PostgreSQL or Redis is restarting or out of reach.

None of these is a bug of ours, and whatever met one works again once the service is back: a
socket frame is answered ``unavailable`` (try again), a task leaves its work to the next
sweep. They are logged as one warning line, not as an error with a traceback, so that an
operator's planned restart does not read like a crash.
"""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

OUTAGES: tuple[type[Exception], ...] = (OperationalError, InterfaceError, RedisConnectionError,
                                        RedisTimeoutError)


def warn(log: logging.Logger, what: str, err: Exception) -> None:
    """The one line an outage leaves: what it stopped, and which error said so."""
    log.warning("%s: %s: %s", what, type(err).__name__, err)
