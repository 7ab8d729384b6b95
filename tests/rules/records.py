"""Terse builders for game records, so each test reads like the game it describes."""

from __future__ import annotations

ALL = [f"{hi}-{lo}" for hi in range(7) for lo in range(hi + 1)]


def canon(tile: str) -> str:
    a, b = (int(x) for x in tile.split("-"))
    return f"{max(a, b)}-{min(a, b)}"


def moves(text: str) -> list[dict]:
    """ "0:6-6 1:6-4B 2:p" -> record moves (B: the end; p: a pass)."""
    out = []
    for word in text.split():
        seat, what = word.split(":")
        if what == "p":
            out.append({"seat": int(seat), "pass": True})
        elif what[-1] in "ABCD":
            out.append({"seat": int(seat), "play": what[:-1], "end": what[-1]})
        else:
            out.append({"seat": int(seat), "play": what})
    return out


def deal(hands: list[str], boneyard: str | None = None, opener: int | None = None,
         play: str = "") -> dict:
    """A round: hands as "6-6 6-5 ...", the boneyard (default: every other tile, in set order)."""
    hand_lists = [h.split() for h in hands]
    dealt = {canon(t) for h in hand_lists for t in h}
    rnd: dict = {"hands": hand_lists, "moves": moves(play)}
    bones = [t for t in ALL if t not in dealt] if boneyard is None else boneyard.split()
    if bones:
        rnd["boneyard"] = bones
    if opener is not None:
        rnd["opener"] = opener
    return rnd


def rotate(rnd: dict, by: int) -> dict:
    """The same deal and play with every seat moved ``by`` places (4 seats)."""
    n = len(rnd["hands"])
    hands = [None] * n
    for seat, hand in enumerate(rnd["hands"]):
        hands[(seat + by) % n] = hand
    out = dict(rnd, hands=hands,
               moves=[dict(m, seat=(m["seat"] + by) % n) for m in rnd["moves"]])
    if "opener" in rnd:
        out["opener"] = (rnd["opener"] + by) % n
    return out


def record(preset: str, rounds: list[dict], players: int | None = None, **options) -> dict:
    rec: dict = {"rules": {"preset": preset, **options}, "rounds": rounds}
    if players is not None:
        rec["players"] = players
    return rec


# A 4-seat deal that blocks after ten tiles: every six is on the line and both ends show six.
# Team 0 (seats 0, 2) and team 1 (seats 1, 3) hold 45 pips each; seat 1 places the last tile.
BLOCK_TIE_HANDS = [
    "6-6 6-1 4-5 5-5 4-4 5-3 4-3",
    "6-2 1-0 5-6 2-2 3-3 3-0 4-0",
    "2-3 0-6 5-0 2-1 2-0 1-1 0-0",
    "3-6 6-4 3-1 4-1 5-1 4-2 5-2",
]
BLOCK_PLAY = ("0:6-6 1:6-2A 2:2-3A 3:3-6A 0:6-1A 1:1-0A 2:0-6A 3:6-4B 0:4-5B 1:5-6B "
              "2:p 3:p 0:p 1:p")
# The same, with seat 0's 4-3 and seat 1's 3-0 swapped: team 0 holds 41, team 1 holds 49.
BLOCK_WIN_HANDS = [
    "6-6 6-1 4-5 5-5 4-4 5-3 3-0",
    "6-2 1-0 5-6 2-2 3-3 4-3 4-0",
    BLOCK_TIE_HANDS[2],
    BLOCK_TIE_HANDS[3],
]
