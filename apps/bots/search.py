"""`expert` and `master`: determinized search over hidden deals sampled from the view.

Each sampled deal (see :meth:`Public.sample`) is played out once per candidate move, with the
same deal and the same rollout seed for every candidate, so the comparison between moves is not
drowned by the luck of the deal. Small endings without a boneyard are solved exactly per deal
(alpha-beta; :mod:`apps.bots.solver` where it applies, with a transposition table) instead of
rolled out. Deals are drawn in proportion to how well they explain the other seats' plays so far
(:mod:`apps.bots.infer`). The move with the best mean value for the bot's side wins.
`master` spends its budget by sequential halving: a first batch of deals for every candidate, then
more deals for the better half only, and so on down to two, so the close calls get the most deals.

Budgets are counts of deals, never wall-clock time, so a decision is reproducible from the rng.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from apps.rules.engine import Round
from apps.rules.tiles import HI, LO, PIPS

from .infer import Weigher
from .playout import BLOCK_BONUS, DOUBLE_BONUS, EPSILON
from .playout import applies as partnership_playout_applies
from .playout import play_out as partnership_play_out
from .solver import Solver, applies
from .state import Public

# Rollout policy: heaviest tile first (doubles count a little more, DOUBLE_BONUS), now and then
# a random one (EPSILON) so that a deal is not played out the same way every time; its
# constants live with the partnership games' fast playout (:mod:`apps.bots.playout`), which
# must play exactly as these do.


@dataclass(frozen=True)
class Budget:
    #: Playouts per decision, shared among the distinct candidate moves.
    playouts: int
    #: Fewest deals sampled per decision, however many candidates there are.
    min_deals: int
    #: Solve exactly when at most this many tiles remain in hands (no boneyard); 0: never.
    exact_tiles: int = 0
    #: Deals sampled when solving exactly (a solve costs many playouts).
    exact_deals: int = 0
    #: Playouts where each seat also tries to make the next seat pass (see rollout_blocking).
    blocking: bool = False
    #: Sequential halving: spend the budget in rounds, keeping the better half of the candidates
    #: after each, so the close contenders get many more deals than the clearly worse moves.
    halving: bool = False
    #: Solve exactly with :mod:`apps.bots.solver` where it applies (the same values, faster).
    fast_solve: bool = True
    #: Weigh deals by how the other seats played (see :mod:`apps.bots.infer`): the softmax's
    #: beta per pip; 0: every deal consistent with the passes counts the same.
    infer: float = 0.0
    #: With ``infer``, deals are drawn from a pool this many times larger, in proportion to
    #: their weights (with replacement).
    pool: int = 4


BUDGETS = {
    "expert": Budget(playouts=1000, min_deals=40, exact_tiles=0, infer=0.7),
    "master": Budget(playouts=7200, min_deals=100, exact_tiles=18, exact_deals=180,
                     blocking=True, halving=True, infer=0.7),
}


def fives_after(w: Round, t: int, e: int) -> int:
    """Points the move would score in all-fives, ignoring the spinner opening its sides."""
    if not w.on_table:
        p = PIPS[t]
        return p if p % 5 == 0 else 0
    ends = w.ends
    v = ends[e]
    new = LO[t] if HI[t] == v else HI[t]
    dbl = w.end_double
    played = w.end_played
    total = 0
    for k in range(w.n_ends):
        if k == e:
            total += new * 2 if HI[t] == LO[t] else new
        elif played[k]:
            total += ends[k] * 2 if dbl[k] else ends[k]
    return total if total and total % 5 == 0 else 0


def rollout(w: Round, rng: random.Random) -> None:
    """Play ``w`` to its end with the fast policy."""
    fives = w.rules.fives
    rand = rng.random
    while w.result is None:
        legal = w.legal()
        if len(legal) == 1:
            w.play(*legal[0])
            continue
        if rand() < EPSILON:
            w.play(*legal[int(rand() * len(legal))])
            continue
        best = -1
        move = legal[0]
        for m in legal:
            t = m[0]
            k = PIPS[t] + DOUBLE_BONUS[t]
            if fives:
                k += 3 * fives_after(w, t, m[1])
            if k > best:
                best = k
                move = m
        w.play(*move)


def rollout_blocking(w: Round, rng: random.Random) -> None:
    """Like :func:`rollout`, but a seat also counts whether the next seat could follow.

    In the sampled deal every hand is known, so "leave ends the next opponent cannot play on,
    and the next partner can" costs a scan of one hand per candidate move.
    """
    fives = w.rules.fives
    side_of = w.rules.side_of
    rand = rng.random
    n = w.n
    while w.result is None:
        legal = w.legal()
        if len(legal) == 1:
            w.play(*legal[0])
            continue
        if rand() < EPSILON:
            w.play(*legal[int(rand() * len(legal))])
            continue
        seat = w.turn
        nxt = seat + 1 if seat + 1 < n else 0
        sign = BLOCK_BONUS if side_of(nxt) != side_of(seat) else -BLOCK_BONUS
        nxt_hand = w.hands[nxt]
        ends = w.ends
        n_ends = w.n_ends
        best = -100
        move = legal[0]
        for m in legal:
            t, e = m
            k = PIPS[t] + DOUBLE_BONUS[t]
            if fives:
                k += 3 * fives_after(w, t, e)
            if e >= 0:
                new = LO[t] if HI[t] == ends[e] else HI[t]
                stuck = True
                for x in nxt_hand:
                    if HI[x] == new or LO[x] == new:
                        stuck = False
                        break
                    for j in range(n_ends):
                        if j != e and (HI[x] == ends[j] or LO[x] == ends[j]):
                            stuck = False
                            break
                    if not stuck:
                        break
                if stuck:
                    k += sign
            if k > best:
                best = k
                move = m
        w.play(*move)


def side_value(w: Round, side: int, fives_before: list[int]) -> float:
    """Points of ``side`` minus the mean of the other sides' points, from now to the end."""
    r = w.rules
    sides = r.sides
    pts = [0] * sides
    res = w.result
    if res is not None and res.winner is not None:
        pts[res.winner] += res.points
    if r.fives:
        for seat, f in enumerate(w.fives):
            pts[r.side_of(seat)] += f - fives_before[seat]
    mine = pts[side]
    return mine - (sum(pts) - mine) / (sides - 1)


def distinct(pub: Public) -> list[int]:
    """Indices of legal moves leading to different positions (one of each equal pair)."""
    base = pub.base
    keep = []
    seen = set()
    for i, (t, e) in enumerate(pub.legal):
        if t >= 0 and e >= 0 and not pub.rules.fives:
            key = (t, base.ends[e])
        else:
            key = (t, e)
        if key not in seen:
            seen.add(key)
            keep.append(i)
    return keep


def _tiles_left(w: Round) -> int:
    return sum(len(h) for h in w.hands)


def solve(w: Round, side: int, fives_before: list[int], alpha: float, beta: float) -> float:
    """Exact value for ``side`` of a perfect-information position (paranoid for 3+ sides)."""
    if w.result is not None:
        return side_value(w, side, fives_before)
    maximize = w.rules.side_of(w.turn) == side
    legal = w.legal()
    if len(legal) > 1:
        legal.sort(key=lambda m: -PIPS[m[0]] if m[0] >= 0 else 0)
    best = float("-inf") if maximize else float("inf")
    for m in legal:
        c = w.copy()
        c.play(*m)
        v = solve(c, side, fives_before, alpha, beta)
        if maximize:
            if v > best:
                best = v
            if best > alpha:
                alpha = best
        else:
            if v < best:
                best = v
            if best < beta:
                beta = best
        if alpha >= beta:
            break
    return best


@dataclass
class Estimate:
    """What the search thought of each distinct legal move of a view.

    ``values[k]`` holds, deal by deal, the value for the seat's side of playing
    ``pub.legal[candidates[k]]``; every candidate saw the same deals in the same order (halving
    only stops a weak one early), so two candidates compare pairwise over their common prefix.
    """

    candidates: list[int]
    values: list[list[float]]
    chosen: int  #: index into ``candidates`` of the move the bot plays

    def mean(self, k: int) -> float:
        v = self.values[k]
        return sum(v) / len(v) if v else 0.0


#: Where only the plain solver (:func:`solve`) can take the game (all-fives, two or three
#: players...), the ending it solves exactly is smaller, and no hand may be large: a two-player
#: ending with hands of 4 and 12 tiles ran for minutes on one deal (the tree grows with the
#: product of the hands' branching, not with their sum).
PLAIN_EXACT_TILES = 12
PLAIN_EXACT_HAND = 5


def exact_applies(pub: Public, budget: Budget) -> bool:
    """Whether to solve this decision's deals exactly instead of rolling them out."""
    # Only where nothing is left to draw: drawing would make it a game of chance.
    no_draws = pub.boneyard_count == 0 or not pub.rules.draws
    tiles = sum(pub.counts)
    if not (budget.exact_tiles and no_draws and tiles <= budget.exact_tiles):
        return False
    if budget.fast_solve and applies(pub.base):
        return True
    return tiles <= PLAIN_EXACT_TILES and max(pub.counts) <= PLAIN_EXACT_HAND


def estimate(pub: Public, rng: random.Random, level: str | Budget) -> Estimate:
    """Every distinct candidate's sampled values at ``level`` (a level's name or a budget of
    one's own, e.g. a review's), and the search's choice."""
    cands = distinct(pub)
    if len(cands) == 1:
        return Estimate(cands, [[]], 0)
    budget = BUDGETS[level] if isinstance(level, str) else level
    side = pub.side(pub.seat)
    fives_before = list(pub.base.fives)
    deals = max(budget.min_deals, budget.playouts // len(cands))
    exact = exact_applies(pub, budget)
    if exact:
        deals = budget.exact_deals
    play_out = rollout_blocking if budget.blocking else rollout
    values: list[list[float]] = [[] for _ in cands]

    weigher = Weigher(pub, budget.infer) if budget.infer > 0 else None
    draw = _weighted_deals(pub, rng, weigher, budget.pool) if weigher and weigher.active \
        else None
    solved: dict[tuple[int, int], float] = {}

    def run(active: list[int], count: int) -> None:
        for _ in range(count):
            if draw is None:
                key = -1
                hands, bones = pub.sample(rng)
            else:
                key, hands, bones = draw()
            world = pub.world(hands, bones)
            seed = rng.getrandbits(32)
            fast = Solver(world) if exact and budget.fast_solve and applies(world) else None
            for k in active:
                if exact and key >= 0 and (key, k) in solved:
                    values[k].append(solved[key, k])
                    continue
                w = world.copy()
                w.play(*pub.legal[cands[k]])
                if exact:
                    v = fast.value(w, side) if fast is not None else \
                        solve(w, side, fives_before, float("-inf"), float("inf"))
                    values[k].append(v)
                    if key >= 0:
                        solved[key, k] = v
                elif partnership_playout_applies(w):
                    values[k].append(partnership_play_out(w, random.Random(seed), side,
                                                          blocking=budget.blocking))
                else:
                    play_out(w, random.Random(seed))
                    values[k].append(side_value(w, side, fives_before))

    active = list(range(len(cands)))
    if not budget.halving:
        run(active, deals)
    else:
        # Every candidate still in play has seen the same deals (and rollout seeds), so their
        # totals stay paired comparisons however many rounds they survived.
        work = deals * len(cands)
        per_round = work // max(1, (len(cands) - 1).bit_length())
        while True:
            run(active, max(deals // 4, per_round // len(active)))
            if len(active) <= 2:
                break
            active.sort(key=lambda k: -sum(values[k]))
            active = active[:(len(active) + 1) // 2]
    best = max(active, key=lambda k: sum(values[k]))
    return Estimate(cands, values, best)


def _weighted_deals(pub: Public, rng: random.Random, weigher: Weigher, pool: int):
    """A function drawing deals in proportion to their inferred weights.

    Deals come in batches: ``pool`` fresh samples per deal wanted, then as many draws among them
    by weight. Each draw returns (a key naming the pooled deal, hands, boneyard).
    """
    batch: list[tuple[int, list[list[int]], list[int]]] = []
    serial = [0]

    def refill(size: int) -> None:
        deals = [pub.sample(rng) for _ in range(size * pool)]
        logs = [weigher.log_weight(h) for h, _ in deals]
        top = max(logs)
        weights = [math.exp(x - top) for x in logs]
        picks = rng.choices(range(len(deals)), weights=weights, k=size)
        base = serial[0]
        serial[0] += len(deals)
        batch.extend((base + i, deals[i][0], deals[i][1]) for i in reversed(picks))

    def draw():
        if not batch:
            refill(16)
        return batch.pop()
    return draw


def choose(pub: Public, rng: random.Random, level: str | Budget) -> int:
    """Index into ``pub.legal`` of the search bot's move."""
    est = estimate(pub, rng, level)
    return est.candidates[est.chosen]
