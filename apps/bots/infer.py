"""Inference from how the other seats have played: weights for sampled deals.

Passes already rule deals out (see :meth:`Public.sample`). Beyond that, a seat's earlier plays say
something about what it held: players tend to shed heavy tiles first, so a seat that laid a light
tile while (in a sampled deal) it held a heavier one that fitted is less likely in that deal. The
model is a softmax over each play's pips among the tiles the seat could have laid then:
``P(tile) = exp(beta * pips) / sum(exp(beta * pips of each fitting tile))``, and a deal's weight is
the product over the other seats' plays. Everything is read from the public history and the
sampled hands, so the bot stays blind: the same view gives the same weights.

Only rounds without draws so far are weighed (a seat's hand at an earlier move is then its hand
now plus the tiles it laid since, which is public).
"""

from __future__ import annotations

import math

from apps.rules.engine import Round
from apps.rules.tiles import HI, LO, PIPS

from .state import Public

#: Bit mask of a tile's two numbers.
NUMBERS = tuple((1 << HI[t]) | (1 << LO[t]) for t in range(28))


class Weigher:
    """Log-weights of sampled deals for one view (prepared once, applied per deal)."""

    __slots__ = ("steps", "beta", "active", "ew")

    def __init__(self, pub: Public, beta: float) -> None:
        view = pub.view
        self.beta = beta
        self.ew = [math.exp(beta * PIPS[t]) for t in range(28)]
        self.steps: list[tuple[int, float, int, float]] = []
        moves = view["moves"]
        self.active = beta > 0 and not view["draws"] and bool(moves)
        if not self.active:
            return
        # Each play by another seat: (seat, beta * its pips, mask of the numbers it could be laid
        # on (0: any, the opening), the softmax terms of the tiles that seat laid from then on,
        # this one included, which it held then and which every deal agrees on).
        later: dict[int, list[int]] = {s: [] for s in range(pub.n)}
        masks = _end_masks(view, len(moves))
        rows = []
        for k in range(len(moves) - 1, -1, -1):
            m = moves[k]
            if m.get("pass"):
                continue
            seat = m["seat"]
            tile = pub.base.history[k][1]
            later[seat].append(tile)
            if seat != pub.seat:
                mask = masks[k]
                z_laid = sum(self.ew[t] for t in later[seat] if not mask or mask & NUMBERS[t])
                rows.append((seat, beta * PIPS[tile], mask, z_laid))
        rows.reverse()
        self.steps = rows

    def log_weight(self, hands: list[list[int]]) -> float:
        ew = self.ew
        log = math.log
        total = 0.0
        for seat, gain, mask, z_laid in self.steps:
            z = z_laid
            for t in hands[seat]:
                if not mask or mask & NUMBERS[t]:
                    z += ew[t]
            total += gain - log(z)
        return total


def _end_masks(view: dict, count: int) -> list[int]:
    """For each public move, the bit mask of the numbers showing on the line before it."""
    out = []
    for k in range(count):
        if k == 0:
            out.append(0)
            continue
        partial = dict(view, moves=view["moves"][:k], legal=[], draws=[])
        n = view["players"]
        rnd = Round.from_view(partial, [[] for _ in range(n)], [])
        mask = 0
        for e in range(rnd.n_ends):
            mask |= 1 << rnd.ends[e]
        out.append(mask if rnd.on_table else 0)
    return out
