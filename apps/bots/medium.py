"""The `medium` bot: a weighted rule of thumb over the legal moves, no search."""

from __future__ import annotations

import random

from apps.rules.engine import Round
from apps.rules.tiles import HI, IS_DOUBLE, LO, PIPS

from .search import fives_after
from .state import Public

# Weights, tuned by hand against `easy` and `expert` in the arena; pips are the unit.
W_DOUBLE = 5.0  # a double only ever fits one number, so it gets stuck: shed it early
W_DOUBLE_SCARCE = 1.5  # ... all the more when few tiles of its number are still out
W_SPREAD = 2.0  # per distinct number kept in hand: more ways to follow later
W_CONTROL = 1.5  # per tile kept that follows an end we leave
W_OPP_PASSED = 5.0  # leave an end an opponent has passed on: they must pass again
W_PARTNER_PASSED = 5.0  # ... and not one the partner passed on
W_SCORE = 2.0  # all-fives: points scored now
W_DANGER = 1.0  # all-fives: expected points handed to the next player


def ends_after(rnd: Round, tile: int, end: int) -> tuple[list[int], int, Round]:
    """Open ends, fives scored and the round after the seat to play places ``tile``.

    ``rnd`` holds the mover's real hand and empty hidden hands: enough to look at the line.
    """
    w = rnd.copy()
    seat = w.turn
    before = w.fives[seat]
    w.play(tile, end)
    return [w.ends[e] for e in range(w.n_ends)], w.fives[seat] - before, w


def danger(w: Round, unknown: list[int], void: int) -> float:
    """Expected points the next seat scores at once, over tiles it may hold (all-fives)."""
    if not unknown:
        return 0.0
    best_sum = 0.0
    for t in unknown:
        if void & ((1 << HI[t]) | (1 << LO[t])):
            continue
        best = 0
        for e in range(w.n_ends):
            v = w.ends[e]
            if v == HI[t] or v == LO[t]:
                best = max(best, fives_after(w, t, e))
        best_sum += best
    return best_sum / len(unknown)


def score_moves(pub: Public) -> list[float]:
    """A score per legal move of the view; higher is better."""
    rules = pub.rules
    hand = pub.hand
    me = pub.seat
    my_side = pub.side(me)
    opp_void = 0
    partner_void = 0
    for s in range(pub.n):
        if s == me:
            continue
        if pub.side(s) == my_side:
            partner_void |= pub.void[s]
        else:
            opp_void |= pub.void[s]
    out_count = [0] * 7
    for t in pub.unknown:
        out_count[HI[t]] += 1
        if LO[t] != HI[t]:
            out_count[LO[t]] += 1
    base = pub.base
    base.hands[me] = list(hand)
    nxt = (me + 1) % pub.n
    scores = []
    for tile, end in pub.legal:
        if tile < 0:
            scores.append(0.0)
            continue
        s = float(PIPS[tile])
        if IS_DOUBLE[tile]:
            s += W_DOUBLE + W_DOUBLE_SCARCE * max(0, 3 - out_count[HI[tile]])
        rest = [t for t in hand if t != tile]
        numbers = 0
        for t in rest:
            numbers |= (1 << HI[t]) | (1 << LO[t])
        s += W_SPREAD * bin(numbers).count("1")
        ends, scored, w = ends_after(base, tile, end)
        for v in set(ends):
            s += W_CONTROL * min(2, sum(1 for t in rest if HI[t] == v or LO[t] == v))
            if opp_void >> v & 1:
                s += W_OPP_PASSED
            if partner_void >> v & 1:
                s -= W_PARTNER_PASSED
        if rules.fives and w.result is None:
            s += W_SCORE * scored
            if pub.side(nxt) != my_side:
                s -= W_DANGER * danger(w, pub.unknown, pub.void[nxt])
        elif rules.fives:
            s += W_SCORE * scored
        scores.append(s)
    return scores


def choose(pub: Public, rng: random.Random) -> int:
    """Index into ``pub.legal`` of the medium bot's move."""
    scores = score_moves(pub)
    # A tiny random tie-break so equal moves do not always go to the first listed.
    best = max(range(len(scores)), key=lambda i: scores[i] + rng.random() * 1e-6)
    return best
