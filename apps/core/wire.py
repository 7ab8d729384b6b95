"""JSON for what the site encodes and decodes on every move: the sockets' frames, the
snapshots in Redis, and the JSON columns of the move's own statements (``apps.tables.rows``).

orjson instead of the standard library: those encodings and decodings were a fifth of a web
process's CPU at 600 tables. The output is the same JSON (compact, keys as given; non-ASCII is
written as UTF-8, not escaped). Frames *from* clients are still read with the standard library
(``consumers.parse_frame``), whose errors the protocol's refusals are written against.
"""

from __future__ import annotations

from typing import Any

import orjson

JSONDecodeError = orjson.JSONDecodeError

_OPTIONS = orjson.OPT_NON_STR_KEYS  # as json.dumps: a number as a key becomes its text


def dumps(value: Any) -> str:
    return orjson.dumps(value, option=_OPTIONS).decode()


def dumps_bytes(value: Any) -> bytes:
    return orjson.dumps(value, option=_OPTIONS)


def loads(raw: str | bytes) -> Any:
    return orjson.loads(raw)
