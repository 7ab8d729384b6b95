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

from apps.rules.engine import Round, round_to_five
from apps.rules.tiles import HI, IS_DOUBLE, LO, PIPS

from .solver import FIT

#: The rollout policy's constants, for both playouts (``search.rollout``, ``rollout_blocking``
#: and :func:`play_out`): a tile's weight is its pips plus 3 for a double; a random legal move
#: a fraction EPSILON of the time; with blocking, 8 more for a move the next seat cannot follow.
DOUBLE_BONUS = tuple(3 if d else 0 for d in IS_DOUBLE)
EPSILON = 0.15
BLOCK_BONUS = 8
WEIGHT = tuple(PIPS[t] + DOUBLE_BONUS[t] for t in range(28))


def applies(w: Round) -> bool:
    """Whether :func:`play_out` can take this position (one already opened)."""
    r = w.rules
    return (r.partners and not r.fives and w.n == 4 and w.n_ends == 2 and w.on_table > 0
            and (w.bone_pos >= len(w.boneyard) or not r.draws))


def _points(kind: str, own: int, others: int) -> int:
    if kind == "opponents":
        return others
    if kind == "opponents_minus_own":
        return others - own
    if kind == "all":
        return others + own
    return round_to_five(others)


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
    """``Round._finish`` and ``search.side_value`` for two pairs, in one."""
    r = w.rules
    pips = [sum(PIPS[t] for t in h) for h in hands]
    side_pips = [pips[0] + pips[2], pips[1] + pips[3]]
    if reason == "domino":
        winner = last & 1
        kind = r.domino_points
    else:
        kind = r.blocked_points
        if side_pips[0] != side_pips[1]:
            winner = 0 if side_pips[0] < side_pips[1] else 1
        else:
            rule = r.blocked_tie
            if rule == "closer_wins":
                winner = last & 1
            elif rule == "closer_loses":
                winner = 1 - (last & 1)
            elif rule == "opener_loses":
                winner = 1 - (w.opener & 1)
            else:
                return 0.0
    own = side_pips[winner]
    points = _points(kind, own, side_pips[0] + side_pips[1] - own)
    return float(points if winner == side else -points)
