"""What a seat's view tells a bot, and hidden deals sampled consistently with it.

Everything here reads only the view (own hand, public moves, passes, counts), so a bot built on
it cannot depend on a hidden tile: the fairness guarantee lives in this module.
"""

from __future__ import annotations

import random

from apps.rules.engine import END_NAMES, OPEN, PASS_MOVE, Round
from apps.rules.presets import Rules, make_rules
from apps.rules.tiles import HI, LO, parse_tile

BONEYARD = -1


def shuffle(x: list, rng: random.Random) -> None:
    """``rng.shuffle(x)``, the same permutation from the same draws, at about half the cost:
    the sampler shuffles several times per sampled deal, and CPython's shuffle calls a method
    per element (``tests/bots/test_playout.py`` checks the two agree)."""
    getrandbits = rng.getrandbits
    for i in range(len(x) - 1, 0, -1):
        n = i + 1
        k = n.bit_length()
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        x[i], x[j] = x[j], x[i]


def parse_legal(move: dict) -> tuple[int, int]:
    """A view's legal move as an engine (tile, end) pair."""
    if move.get("pass"):
        return PASS_MOVE
    tile = parse_tile(move["play"])[0]
    end = move.get("end")
    return (tile, OPEN) if end is None else (tile, END_NAMES.index(end))


class Public:
    """The public table plus the seat's own hand, read once from a view.

    ``known`` (seat -> tiles) adds hands the seat is told beyond its view: only the collusion
    check (:mod:`apps.bots.collusion`) passes one, to judge a move as a player who sees their
    partner's hand would. A bot never gets one.
    """

    __slots__ = ("view", "rules", "seat", "n", "hand", "legal", "unknown", "counts",
                 "boneyard_count", "void", "base", "known", "_plan")

    def __init__(self, view: dict, known: dict[int, list[int]] | None = None) -> None:
        self.view = view
        self.known = {s: list(tiles) for s, tiles in (known or {}).items()}
        self.rules: Rules = make_rules(view["rules"], view["players"])
        self.seat: int = view["seat"]
        self.n: int = view["players"]
        self.hand = [parse_tile(t)[0] for t in view["hand"]]
        self.legal = [parse_legal(m) for m in view["legal"]]
        seen = set(self.hand)
        for tiles in self.known.values():
            seen.update(tiles)
        for m in view["moves"]:
            if not m.get("pass"):
                seen.add(parse_tile(m["play"])[0])
        self.unknown = [t for t in range(28) if t not in seen]
        self.counts = list(view["hand_counts"])
        self.boneyard_count: int = view["boneyard_count"]
        # Bit v of void[s]: seat s passed with v showing. Passing only happens with an empty (or
        # never drawn) boneyard, so the seat can never hold v again this round.
        self.void = [0] * self.n
        for s, numbers in view["passed_on"].items():
            for v in numbers:
                self.void[int(s)] |= 1 << v
        self._plan = None
        self._build_base()

    def _build_base(self) -> None:
        hands: list[list[int]] = [[] for _ in range(self.n)]
        hands[self.seat] = list(self.hand)
        for s, tiles in self.known.items():
            hands[s] = list(tiles)
        # No boneyard: the base round is for looking at the line, never for drawing.
        self.base = Round.from_view(self.view, hands, [])

    def _make_plan(self, others: list[int]) -> tuple[list[list[tuple[int, list[int]]]], list[int]]:
        """The unknown tiles some seat may not hold, grouped by how many places may take them
        (fewest first), and the tiles any place may take."""
        n = self.n
        void = self.void
        by_size: dict[int, list[tuple[int, list[int]]]] = {}
        free = []
        for t in self.unknown:
            mask = (1 << HI[t]) | (1 << LO[t])
            seats = [s for s in others if not void[s] & mask]
            if len(seats) == len(others):
                free.append(t)
                continue
            seats.append(n)
            by_size.setdefault(len(seats), []).append((t, seats))
        return [by_size[k] for k in sorted(by_size)], free

    def side(self, seat: int) -> int:
        return self.rules.side_of(seat)

    def world(self, hands: list[list[int]], boneyard: list[int]) -> Round:
        """The base round with a sampled deal of the hidden tiles filled in."""
        w = self.base.copy()
        w.hands = hands
        w.boneyard = boneyard
        w.bone_pos = 0
        return w

    def sample(self, rng: random.Random) -> tuple[list[list[int]], list[int]]:
        """A deal of the unknown tiles to the other seats and the boneyard, respecting passes.

        Most-constrained tiles go first, each to a seat drawn in proportion to the room left in
        it, which is close to uniform over consistent deals and never needs many retries.
        """
        others = [s for s in range(self.n) if s != self.seat and s not in self.known]
        plan = self._plan
        if plan is None:
            plan = self._plan = self._make_plan(others)
        groups, free = plan
        n = self.n
        rand = rng.random
        for _attempt in range(30):
            room = [0] * (n + 1)
            for s in others:
                room[s] = self.counts[s]
            room[n] = self.boneyard_count
            hands: list[list[int]] = [[] for _ in range(n)]
            bones: list[int] = []
            ok = True
            # Most-constrained tiles first (shuffled within a group of equal freedom), each to a
            # seat drawn in proportion to the room left in it.
            for group in groups:
                order = group[:]
                shuffle(order, rng)
                for t, seats in order:
                    total = 0
                    for s in seats:
                        total += room[s]
                    if total == 0:
                        ok = False
                        break
                    pick = int(rand() * total)
                    for s in seats:
                        pick -= room[s]
                        if pick < 0:
                            break
                    room[s] -= 1
                    if s == n:
                        bones.append(t)
                    else:
                        hands[s].append(t)
                if not ok:
                    break
            if ok:
                # Tiles any seat may hold fill the room left: a shuffle is the same draw.
                rest = free[:]
                shuffle(rest, rng)
                pos = 0
                for s in others:
                    hands[s].extend(rest[pos:pos + room[s]])
                    pos += room[s]
                bones.extend(rest[pos:])
                hands[self.seat] = list(self.hand)
                for s, tiles in self.known.items():
                    hands[s] = list(tiles)
                shuffle(bones, rng)
                return hands, bones
        # Inconsistent passes cannot happen in a real view; fall back to ignoring them.
        tiles = self.unknown[:]
        shuffle(tiles, rng)
        hands = [[] for _ in range(self.n)]
        pos = 0
        for s in others:
            hands[s] = tiles[pos:pos + self.counts[s]]
            pos += self.counts[s]
        hands[self.seat] = list(self.hand)
        for s, tiles in self.known.items():
            hands[s] = list(tiles)
        return hands, tiles[pos:]
