"""JSON for what the site encodes and decodes on every move: the sockets' frames, the
snapshots in Redis, and the JSON columns of the move's own statements (``apps.tables.rows``).

orjson instead of the standard library: those encodings and decodings were a fifth of a web
process's CPU at 600 tables. The output is the same JSON (compact, keys as given; non-ASCII is
written as UTF-8, not escaped). Frames *from* clients are still read with the standard library
(``consumers.parse_frame``), whose errors the protocol's refusals are written against.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

JSONDecodeError = orjson.JSONDecodeError

_OPTIONS = orjson.OPT_NON_STR_KEYS  # as json.dumps: a number as a key becomes its text


def dumps(value: Any) -> str:
    return dumps_bytes(value).decode()


def dumps_bytes(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=_OPTIONS)
    except orjson.JSONEncodeError:
        # orjson refuses integers beyond 64 bits, which JSON itself allows (a client may send
        # one); the standard library writes the same text for them. Anything it cannot encode
        # either still raises.
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def loads(raw: str | bytes) -> Any:
    return orjson.loads(raw)
