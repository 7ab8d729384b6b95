"""The double-six set: 28 tiles, each known inside the engine by a small integer id.

Integers keep the hot loops (legal moves, random play, bot search) free of tuple hashing;
strings only appear at the edges (records, views).
"""

from __future__ import annotations

import re

from .errors import RuleError

#: (high, low) halves of every tile, indexed by tile id.
TILES: tuple[tuple[int, int], ...] = tuple((hi, lo) for hi in range(7) for lo in range(hi + 1))
HI: tuple[int, ...] = tuple(hi for hi, _ in TILES)
LO: tuple[int, ...] = tuple(lo for _, lo in TILES)
PIPS: tuple[int, ...] = tuple(hi + lo for hi, lo in TILES)
IS_DOUBLE: tuple[bool, ...] = tuple(hi == lo for hi, lo in TILES)
TILE_ID: dict[tuple[int, int], int] = {}
for _tid, (_hi, _lo) in enumerate(TILES):
    TILE_ID[(_hi, _lo)] = _tid
    TILE_ID[(_lo, _hi)] = _tid
ALL_TILES: tuple[int, ...] = tuple(range(len(TILES)))
DOUBLE_SIX: int = TILE_ID[(6, 6)]
#: Canonical names, high half first, as the engine writes them ("6-3").
NAMES: tuple[str, ...] = tuple(f"{hi}-{lo}" for hi, lo in TILES)
NUMBER_WORDS = ("blank", "one", "two", "three", "four", "five", "six")

_TILE_RE = re.compile(r"^\s*([0-6])\s*-\s*([0-6])\s*$")


def parse_tile(text: object) -> tuple[int, int, int]:
    """Read "a-b" (either order) and return (tile id, first half as written, second half)."""
    if not isinstance(text, str):
        raise RuleError("bad_record", f"{text!r} is not a tile; tiles are written like \"6-3\"",
                        key="not_a_tile", tile=str(text)[:12])
    m = _TILE_RE.match(text)
    if not m:
        raise RuleError("bad_record", f"{text!r} is not a tile of a double-six set",
                        key="not_a_tile", tile=text[:12])
    a, b = int(m.group(1)), int(m.group(2))
    return TILE_ID[(a, b)], a, b


def tile_name(tile: int) -> str:
    return NAMES[tile]


def tile_words(tile: int) -> str:
    """How a player says a tile: "six-three", "double five"."""
    hi, lo = TILES[tile]
    if hi == lo:
        return f"double {NUMBER_WORDS[hi]}"
    return f"{NUMBER_WORDS[hi]}-{NUMBER_WORDS[lo]}"
