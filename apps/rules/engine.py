"""The rules engine: one round as a small state machine (:mod:`.rounds`), and a match as a
sequence of rounds.

Nothing here reads a clock, a file or a global: the same deal and moves always give the same
state. Moves inside the engine are ``(tile, end)`` pairs of small integers: ``end`` is 0..3 for
ends A..D, :data:`OPEN` (or :data:`OPEN_FLIPPED`) for the first tile of a round, and a pass is
:data:`PASS_MOVE`. Callers import the round's names from here too.
"""

from __future__ import annotations

from .errors import RuleError
from .presets import Rules
from .rounds import (  # noqa: F401  (the engine's names, for its callers)
    END_NAMES,
    FITS,
    MOVES,
    OPEN,
    OPEN_FLIPPED,
    PASS,
    PASS_MOVE,
    Round,
    RoundResult,
    apply,
    round_to_five,
)
from .tiles import DOUBLE_SIX, HI, IS_DOUBLE, LO, NAMES, PIPS, TILE_ID


def move_dict(seat: int, tile: int, end: int) -> dict:
    """An engine move written as a record writes it."""
    if tile < 0:
        return {"seat": seat, "pass": True}
    if end == OPEN:
        return {"seat": seat, "play": NAMES[tile]}
    if end == OPEN_FLIPPED:
        return {"seat": seat, "play": f"{LO[tile]}-{HI[tile]}"}
    return {"seat": seat, "play": NAMES[tile], "end": END_NAMES[end]}


def legal_dict(tile: int, end: int) -> dict:
    if tile < 0:
        return {"pass": True}
    if end < 0:
        return {"play": NAMES[tile]}
    return {"play": NAMES[tile], "end": END_NAMES[end]}


def heaviest_opener(hands: list[list[int]]) -> tuple[int, frozenset[int]]:
    """tranca: the highest double opens with it; else the heaviest tile, nearest seat 0."""
    best: tuple[int, int] | None = None
    for seat, hand in enumerate(hands):
        for t in hand:
            if IS_DOUBLE[t] and (best is None or HI[t] > best[0]):
                best = (HI[t], seat)
    if best is not None:
        return best[1], frozenset((TILE_ID[(best[0], best[0])],))
    weight = max(PIPS[t] for hand in hands for t in hand)
    for seat, hand in enumerate(hands):
        tiles = frozenset(t for t in hand if PIPS[t] == weight)
        if tiles:
            return seat, tiles
    raise AssertionError("no tile dealt")


class Match:
    """Rounds in order, the running scores, games of a series, and who opens next."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.rounds: list[Round] = []
        self.totals = [0] * rules.sides
        self.games = [0] * rules.sides
        self.over = False
        self.winner: int | None = None
        self.game_over_pending = False  # the next round starts a new game of the series

    def to_state(self) -> dict:
        """The match as JSON-ready data: totals, games, and the last round's whole position.

        Earlier rounds are history (their moves keep them) and are not saved; a restored match
        knows how many there were.
        """
        return {
            "totals": list(self.totals), "games": list(self.games), "over": self.over,
            "winner": self.winner, "game_over_pending": self.game_over_pending,
            "rounds": len(self.rounds),
            "last": self.rounds[-1].to_state() if self.rounds else None,
        }

    @classmethod
    def from_state(cls, rules: Rules, state: dict) -> Match:
        """A match that plays on from a saved position as if it had been replayed.

        Only the last round is a :class:`Round`; the earlier entries of ``rounds`` are None,
        since nothing but the last round (its result, its opener) decides what comes next.
        """
        new = cls(rules)
        new.totals, new.games = list(state["totals"]), list(state["games"])
        new.over, new.winner = state["over"], state["winner"]
        new.game_over_pending = state["game_over_pending"]
        if state["last"] is not None:
            new.rounds = [None] * (state["rounds"] - 1)
            new.rounds.append(Round.from_state(rules, state["last"]))
        return new

    @property
    def current(self) -> Round | None:
        if self.rounds and self.rounds[-1].result is None:
            return self.rounds[-1]
        return None

    def scores(self) -> list[int]:
        """The current game's running totals, with fives already scored this round."""
        out = list(self.totals)
        cur = self.current
        if cur is not None and self.rules.fives:
            for seat, f in enumerate(cur.fives):
                out[self.rules.side_of(seat)] += f
        return out

    def next_opener(self) -> int | None:
        """Who opens the next round, where that is known before the deal."""
        if self.over or self.current is not None or not self.rounds:
            return None
        kind = self.rules.later_opener
        if kind == "heaviest":
            return None
        return self._following_opener()

    def _following_opener(self) -> int:
        prev = self.rounds[-1]
        res = prev.result
        n = self.rules.players
        if self.rules.later_opener == "winner" and res.winner is not None:
            return res.winner
        if res.winner is None and self.rules.blocked_tie == "replay":
            return prev.opener
        return (prev.opener + 1) % n

    def opener_for(self, hands: list[list[int]]) -> tuple[int | None, frozenset[int] | None]:
        """The opener a deal gets by rule (None where it is drawn at random) and forced tiles."""
        r = self.rules
        kind = r.first_opener if not self.rounds else r.later_opener
        if kind == "heaviest":
            return heaviest_opener(hands)
        if kind == "holder_66":
            seat = next(s for s, h in enumerate(hands) if DOUBLE_SIX in h)
            return seat, frozenset((DOUBLE_SIX,)) if r.forced_double_six else None
        if kind == "random":
            return None, None
        return self._following_opener(), None

    def start_round(self, hands: list[list[int]], boneyard: list[int],
                    opener: int | None = None) -> Round:
        """Begin a round on a deal; ``opener`` is required where the preset draws it."""
        if self.over:
            raise RuleError("bad_record", "the match is already over", key="match_over")
        if self.current is not None:
            raise RuleError("bad_record", "the round in progress has not ended",
                            key="round_in_progress")
        derived, forced = self.opener_for(hands)
        if derived is None:
            if opener is None:
                raise RuleError("bad_record", "this preset draws the first opener at random: "
                                "the record must say who opened", key="opener_required")
            if isinstance(opener, bool) or not isinstance(opener, int) \
                    or not 0 <= opener < self.rules.players:
                raise RuleError("bad_record", f"opener {opener!r} is not a seat",
                                key="bad_opener")
            derived = opener
        elif opener is not None and opener != derived:
            raise RuleError("bad_record", f"seat {derived} opens this round by rule, "
                            f"not seat {opener}", key="wrong_opener")
        if self.game_over_pending:
            self.totals = [0] * self.rules.sides
            self.game_over_pending = False
        rnd = Round(self.rules, hands, boneyard, derived, forced)
        self.rounds.append(rnd)
        return rnd

    def play(self, tile: int, end: int, written: dict | None = None) -> Round:
        """Apply a checked move to the round in progress and settle the round if it ended.

        ``written`` is the move as its record wrote it, kept verbatim for the public history.
        """
        rnd = self.current
        seat = rnd.turn
        rnd.play(tile, end)
        rnd.public_moves.append(dict(written) if written else move_dict(seat, tile, end))
        if rnd.result is not None:
            self._settle(rnd)
        return rnd

    def _settle(self, rnd: Round) -> None:
        r = self.rules
        for seat, f in enumerate(rnd.fives):
            self.totals[r.side_of(seat)] += f
        res = rnd.result
        if res.winner is not None:
            self.totals[res.winner] += res.points
        if max(self.totals) < r.target:
            return
        top = max(self.totals)
        leaders = [s for s, v in enumerate(self.totals) if v == top]
        if len(leaders) > 1:
            return  # an exact tie at the top plays another round
        game_winner = leaders[0]
        if r.best_of is None:
            self.over, self.winner = True, game_winner
            return
        self.games[game_winner] += 1
        if self.games[game_winner] >= r.games_to_win:
            self.over, self.winner = True, game_winner
        else:
            self.game_over_pending = True


def deal(rules: Rules, rng) -> tuple[list[list[int]], list[int], int]:
    """Shuffle with ``rng`` (a ``random.Random``; the site passes ``SystemRandom``) and deal.

    Returns the hands, the boneyard in drawing order, and a random seat for presets that draw
    the opener (ignored where the opener is derived).
    """
    tiles = list(range(28))
    rng.shuffle(tiles)
    n, size = rules.players, rules.hand_size
    hands = [tiles[i * size:(i + 1) * size] for i in range(n)]
    return hands, tiles[n * size:], rng.randrange(n)
