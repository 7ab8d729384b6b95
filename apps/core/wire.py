"""JSON for what the site encodes and decodes on every move: the sockets' frames, the
snapshots in Redis, and the JSON columns of the move's own statements (``apps.tables.rows``).

orjson instead of the standard library: those encodings and decodings were a fifth of a web
process's CPU at 600 tables. The output is the same JSON (compact, keys as given; non-ASCII is
written as UTF-8, not escaped; a lone surrogate, which UTF-8 cannot hold, as U+FFFD). Frames
*from* clients are still read with the standard library (``consumers.parse_frame``), whose
errors the protocol's refusals are written against.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

JSONDecodeError = orjson.JSONDecodeError

_OPTIONS = orjson.OPT_NON_STR_KEYS  # as json.dumps: a number as a key becomes its text
#: A lone surrogate: valid in JSON text ("\\ud800"), not encodable as UTF-8.
SURROGATES = re.compile("[\ud800-\udfff]")


def dumps(value: Any) -> str:
    return dumps_bytes(value).decode()


def dumps_bytes(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=_OPTIONS)
    except orjson.JSONEncodeError:
        # orjson refuses integers beyond 64 bits, which JSON itself allows (a client may send
        # one); the standard library writes the same text for them. Anything it cannot encode
        # either still raises.
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        # orjson also refuses a string holding a lone surrogate (what Python makes of a
        # client's "\ud800"), and UTF-8 cannot hold one. The sockets refuse such frames on
        # the way in (``consumers.parse_frame``); one that comes by another way must not take
        # a socket, or every frame of a table, down with it. Not as a "\ud800" escape: orjson
        # (``loads``, the snapshots read back from Redis) refuses that too. U+FFFD is what a
        # UTF-8 reader shows for broken text.
        return SURROGATES.sub("\ufffd", text).encode()


def loads(raw: str | bytes) -> Any:
    return orjson.loads(raw)
