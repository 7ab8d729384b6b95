"""The search's playouts for the partnership games, without the engine's bookkeeping.

:func:`apps.bots.search.rollout` and :func:`~apps.bots.search.rollout_blocking` play a sampled
deal to its end through :class:`Round`, which records every move, keeps the passes' numbers and
checks for draws and fives: work a playout never reads, and most of a search's time. Where the
game is four seats in two pairs, two ends, no fives and nothing left to draw (partners,
partners-66, pairs-series once the first tile is down), :func:`play_out` plays the same policy
on plain lists and bit masks and returns the same value. It is the same playout, not a
similar one: the same legal moves in the same order, the same random numbers drawn at the same
moments, the same ties broken the same way, so a decision is the same move with or without it
(``tests/bots/test_playout.py`` plays both on many deals and compares every value).
"""

from __future__ import annotations

import random

from apps.rules.engine import Round
from apps.rules.tiles import HI, IS_DOUBLE, LO, PIPS

from .solver import FIT, Solver, points_won
from .solver import applies as _solver_applies

#: The rollout policy's constants, for both playouts (``search.rollout``, ``rollout_blocking``
#: and :func:`play_out`): a tile's weight is its pips plus 3 for a double; a random legal move
#: a fraction EPSILON of the time; with blocking, 8 more for a move the next seat cannot follow.
DOUBLE_BONUS = tuple(3 if d else 0 for d in IS_DOUBLE)
EPSILON = 0.15
BLOCK_BONUS = 8
WEIGHT = tuple(PIPS[t] + DOUBLE_BONUS[t] for t in range(28))


def applies(w: Round) -> bool:
    """Whether :func:`play_out` can take this position: the positions the fast solver takes
    (:func:`apps.bots.solver.applies`: two pairs, two ends, no fives, nothing left to draw, the
    first tile down). Its own name, so that a test can send the search back to the engine."""
    return _solver_applies(w)


def play_out(w: Round, rng: random.Random, side: int, *, blocking: bool) -> float:
    """Play ``w`` (not changed) to its end with the rollout policy; the value for ``side``: its
    points minus the other pair's, as ``search.side_value`` counts them."""
    if w.result is not None:
        res = w.result
        if res.winner is None:
            return 0.0
        return float(res.points if res.winner == side else -res.points)
    hands = [h[:] for h in w.hands]
    masks = [0, 0, 0, 0]
    for s in range(4):
        for t in hands[s]:
            masks[s] |= 1 << t
    a, b = w.ends[0], w.ends[1]
    seat = w.turn
    passes = w.passes
    last = w.last_placer
    rand = rng.random
    fit, hi, lo, weight = FIT, HI, LO, WEIGHT
    while True:
        fa = fit[a]
        fb = fit[b]
        mine = masks[seat]
        if not mine & (fa | fb):
            passes += 1
            if passes >= 4:
                return _value(w, hands, side, "blocked", last)
            seat = seat + 1 if seat < 3 else 0
            continue
        hand = hands[seat]
        # The engine's legal(): hand order, then end A before end B; a move is tile * 2 + end.
        legal = []
        for t in hand:
            if fa >> t & 1:
                legal.append(t + t)
            if fb >> t & 1:
                legal.append(t + t + 1)
        if len(legal) == 1:
            move = legal[0]
        elif rand() < EPSILON:
            move = legal[int(rand() * len(legal))]
        else:
            best = -100
            move = legal[0]
            if blocking:
                # The next seat is always of the other pair: leaving it no tile to play is good.
                nxt = masks[seat + 1 if seat < 3 else 0]
                for m in legal:
                    t = m >> 1
                    k = weight[t]
                    if m & 1:
                        if not nxt & (fit[lo[t] if hi[t] == b else hi[t]] | fa):
                            k += BLOCK_BONUS
                    elif not nxt & (fit[lo[t] if hi[t] == a else hi[t]] | fb):
                        k += BLOCK_BONUS
                    if k > best:
                        best = k
                        move = m
            else:
                for m in legal:
                    k = weight[m >> 1]
                    if k > best:
                        best = k
                        move = m
        t = move >> 1
        hand.remove(t)
        masks[seat] = mine ^ (1 << t)
        if move & 1:
            b = lo[t] if hi[t] == b else hi[t]
        else:
            a = lo[t] if hi[t] == a else hi[t]
        passes = 0
        last = seat
        if not hand:
            return _value(w, hands, side, "domino", last)
        seat = seat + 1 if seat < 3 else 0


def _value(w: Round, hands: list[list[int]], side: int, reason: str, last: int) -> float:
    """``Round._finish`` and ``search.side_value`` for two pairs, counted as the fast solver
    counts an ending (``last`` laid the last tile)."""
    pips = [sum(PIPS[t] for t in h) for h in hands]
    if reason == "domino":
        me = last & 1
        own = pips[me] + pips[me + 2]
        value = points_won(w.rules.domino_points, own, pips[1 - me] + pips[3 - me])
    else:
        value = Solver(w).blocked(pips, last)
    return float(value if (last & 1) == side else -value)
