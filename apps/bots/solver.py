"""Exact solving of a sampled deal for the partnership games (4 seats, two sides, two ends).

The search's general :func:`apps.bots.search.solve` copies an engine :class:`Round` per node. Here a
position is four hand bit masks, the two ends, whose turn and how many passes in a row: a
negamax with alpha-beta and a transposition table (the same tiles laid in another order, or the
ends the other way round, are the same position), shared by the candidates of one deal. It
scores the end of a round exactly as :meth:`Round._finish` does, for the rules that have no fives
and no boneyard to draw from (partners, partners-66, pairs-series).
"""

from __future__ import annotations

from apps.rules.engine import Round, round_to_five
from apps.rules.tiles import HI, LO, PIPS

#: FIT[v]: mask of the tiles with a half v.
FIT = tuple(sum(1 << t for t in range(28) if v in (HI[t], LO[t])) for v in range(7))
#: OTHER[t][v]: the half of tile t left showing when it is laid on an end v.
OTHER = tuple(tuple((LO[t] if HI[t] == v else HI[t]) for v in range(7)) for t in range(28))

EXACT, LOWER, UPPER = 0, 1, 2


def applies(w: Round) -> bool:
    """Whether :func:`solve` can take this position."""
    r = w.rules
    return (r.partners and not r.fives and w.n == 4 and w.on_table > 0 and w.n_ends == 2
            and (w.bone_pos >= len(w.boneyard) or not r.draws))


def points_won(kind: str, own: int, others: int) -> int:
    """What a pair that won with ``own`` pips against ``others`` scores, by the preset's kind
    (``Rules.domino_points`` / ``blocked_points``), as ``Round._finish`` scores it."""
    if kind == "opponents":
        return others
    if kind == "opponents_minus_own":
        return others - own
    if kind == "all":
        return others + own
    return round_to_five(others)


class Solver:
    """Exact values of the positions of one deal, remembered between calls."""

    def __init__(self, w: Round) -> None:
        r = w.rules
        self.table: dict = {}
        self.domino_kind = r.domino_points
        self.blocked_kind = r.blocked_points
        self.tie = r.blocked_tie
        self.opener_side = r.side_of(w.opener)
        self.side_of = r.side_of

    def value(self, w: Round, side: int) -> float:
        """The exact value for ``side`` (its points minus the other side's) of ``w``."""
        res = w.result
        if res is not None:
            if res.winner is None:
                return 0.0
            return float(res.points if res.winner == side else -res.points)
        hands = [0, 0, 0, 0]
        pips = [0, 0, 0, 0]
        for s in range(4):
            for t in w.hands[s]:
                hands[s] |= 1 << t
                pips[s] += PIPS[t]
        v = self._nm(hands, pips, w.ends[0], w.ends[1], w.turn, w.passes, -10_000, 10_000)
        return float(v if self.side_of(w.turn) == side else -v)

    def blocked(self, pips: list[int], turn: int) -> int:
        """Value for the side of ``turn`` (the last to lay a tile) of a blocked round."""
        me = turn & 1
        mine = pips[me] + pips[me + 2]
        theirs = pips[1 - me] + pips[3 - me]
        if mine != theirs:
            won = mine < theirs
        else:
            tie = self.tie
            if tie == "closer_wins":
                won = True
            elif tie == "closer_loses":
                won = False
            elif tie == "opener_loses":
                won = self.opener_side != me
            else:
                return 0
        if won:
            return points_won(self.blocked_kind, mine, theirs)
        return -points_won(self.blocked_kind, theirs, mine)

    def _nm(self, hands: list[int], pips: list[int], a: int, b: int, turn: int, passes: int,
            alpha: int, beta: int) -> int:
        """Negamax value for the side of ``turn``."""
        if a > b:
            a, b = b, a
        key = (hands[0], hands[1], hands[2], hands[3], a, b, turn, passes)
        hit = self.table.get(key)
        if hit is not None:
            flag, v = hit
            if flag == EXACT:
                return v
            if flag == LOWER:
                if v >= beta:
                    return v
            elif v <= alpha:
                return v
        alpha0 = alpha
        nxt = turn + 1 if turn < 3 else 0
        mine = hands[turn]
        movable = mine & (FIT[a] | FIT[b])
        if not movable:
            if passes + 1 >= 4:
                best = self.blocked(pips, turn)
                self.table[key] = (EXACT, best)
                return best
            best = -self._nm(hands, pips, a, b, nxt, passes + 1, -beta, -alpha)
            self._store(key, best, alpha0, beta)
            return best
        best = -100_000
        m = movable
        while m:
            t = m.bit_length() - 1
            m ^= 1 << t
            rest = mine ^ (1 << t)
            p = PIPS[t]
            if not rest:
                # Domino: the seat's side takes the points.
                me = turn & 1
                own = pips[me] + pips[me + 2] - p
                others = pips[1 - me] + pips[3 - me]
                v = points_won(self.domino_kind, own, others)
            else:
                v = None
            on = OTHER[t]
            for end in (0, 1):
                if end == 0:
                    if not (FIT[a] >> t & 1):
                        continue
                    na, nb = on[a], b
                else:
                    if not (FIT[b] >> t & 1) or (a == b):
                        continue
                    na, nb = a, on[b]
                if v is None:
                    hands[turn] = rest
                    pips[turn] -= p
                    score = -self._nm(hands, pips, na, nb, nxt, 0, -beta, -alpha)
                    hands[turn] = mine
                    pips[turn] += p
                else:
                    score = v
                if score > best:
                    best = score
                    if best > alpha:
                        alpha = best
                        if alpha >= beta:
                            break
                if v is not None:
                    break  # the round ends whichever end it goes on
            if alpha >= beta:
                break
        self._store(key, best, alpha0, beta)
        return best

    def _store(self, key: tuple, best: int, alpha0: int, beta: int) -> None:
        if best <= alpha0:
            self.table[key] = (UPPER, best)
        elif best >= beta:
            self.table[key] = (LOWER, best)
        else:
            self.table[key] = (EXACT, best)
