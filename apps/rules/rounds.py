"""One round as a small state machine (``apps.rules.engine`` plays a match as a sequence of
them, and is where callers import these from).

A :class:`Round` is mutated in place by :meth:`Round.play` because bots search with it and every
copy costs; callers that want the immutable style use :func:`apply` (copy, then play). Nothing
here reads a clock, a file or a global: the same deal and moves always give the same state.

Moves inside the engine are ``(tile, end)`` pairs of small integers: ``end`` is 0..3 for ends
A..D, :data:`OPEN` (or :data:`OPEN_FLIPPED`) for the first tile of a round, and a pass is
:data:`PASS_MOVE`.
"""

from __future__ import annotations

from typing import NamedTuple

from .errors import RuleError
from .presets import Rules, make_rules
from .tiles import HI, LO, NAMES, PIPS, parse_tile

END_NAMES = ("A", "B", "C", "D")
#: First tile of a round laid as written high-first: A takes the high half, B the low one.
OPEN = -1
#: First tile written low-first ("3-5"): A takes the low half.
OPEN_FLIPPED = -2
PASS = -1
PASS_MOVE = (PASS, PASS)


#: FITS[v][t]: tile t has a half equal to v (a list lookup beats two comparisons in hot loops).
FITS: tuple[tuple[bool, ...], ...] = tuple(
    tuple(v in (HI[t], LO[t]) for t in range(28)) for v in range(7))
#: MOVES[t][e]: the shared (tile, end) tuple, so listing legal moves allocates no tuples.
MOVES: tuple[tuple[tuple[int, int], ...], ...] = tuple(
    tuple((t, e) for e in range(4)) for t in range(28))


def round_to_five(points: int) -> int:
    return 5 * ((points + 2) // 5)


class RoundResult(NamedTuple):
    reason: str  # "domino" | "blocked"
    winner: int | None  # side index (team with partners, seat otherwise); None: nobody scores
    tie: bool
    pips: tuple[int, ...]
    points: int


def _join(numbers: list[int]) -> str:
    return ", ".join(str(v) for v in numbers)


class Round:
    """One deal played out: hands, the line's ends, whose turn, and how it ended."""

    __slots__ = (
        "rules", "n", "hands", "boneyard", "bone_pos", "opener", "forced", "turn", "ends",
        "n_ends", "end_double", "end_played", "spinner", "spinner_outer", "spinner_touches",
        "first_tile", "on_table", "passes", "passed_on", "last_placer", "history", "draws",
        "fives", "result", "public_moves",
    )

    def __init__(self, rules: Rules, hands: list[list[int]], boneyard: list[int], opener: int,
                 forced: frozenset[int] | None = None) -> None:
        self.rules = rules
        self.n = rules.players
        self.hands = [list(h) for h in hands]
        self.boneyard = list(boneyard)
        self.bone_pos = 0
        self.opener = opener
        self.forced = forced
        self.turn: int | None = opener
        self.ends: list[int | None] = [None, None, None, None]
        self.n_ends = 0
        self.end_double = [False, False, False, False]
        # C and D count for fives only once somebody has played on them.
        self.end_played = [True, True, False, False]
        self.spinner: int | None = None
        self.spinner_outer = [False, False]
        self.spinner_touches = 0
        self.first_tile: int | None = None
        self.on_table = 0
        self.passes = 0
        self.passed_on = [0] * self.n  # bit v set: the seat passed with v showing
        self.last_placer: int | None = None
        self.history: list[tuple[int, int, int]] = []
        self.draws: list[tuple[int, int, int]] = []  # (seat, count, before_move)
        self.fives = [0] * self.n
        self.result: RoundResult | None = None
        self.public_moves: list[dict] = []

    # -- reading -------------------------------------------------------------------------

    @property
    def over(self) -> bool:
        return self.result is not None

    @property
    def boneyard_count(self) -> int:
        return len(self.boneyard) - self.bone_pos

    def open_ends(self) -> dict[str, int]:
        return {END_NAMES[e]: self.ends[e] for e in range(self.n_ends)}

    def hand_counts(self) -> list[int]:
        return [len(h) for h in self.hands]

    def passed_numbers(self, seat: int) -> list[int]:
        mask = self.passed_on[seat]
        return [v for v in range(6, -1, -1) if mask >> v & 1]

    def legal(self) -> list[tuple[int, int]]:
        """Every legal move of the seat to play, in hand order then end order."""
        if self.result is not None:
            return []
        hand = self.hands[self.turn]
        if not self.on_table:
            forced = self.forced
            if forced is not None:
                return [(t, OPEN) for t in hand if t in forced]
            return [(t, OPEN) for t in hand]
        out = []
        ends = self.ends
        if self.n_ends == 2:
            fa = FITS[ends[0]]
            fb = FITS[ends[1]]
            for t in hand:
                if fa[t]:
                    out.append(MOVES[t][0])
                if fb[t]:
                    out.append(MOVES[t][1])
        else:
            fits = [FITS[ends[e]] for e in range(4)]
            for t in hand:
                for e in range(4):
                    if fits[e][t]:
                        out.append(MOVES[t][e])
        return out or [PASS_MOVE]

    def fitting_ends(self, tile: int) -> list[int]:
        h, lo = HI[tile], LO[tile]
        return [e for e in range(self.n_ends) if self.ends[e] in (h, lo)]

    def ends_total(self) -> int:
        """The open ends added up as all-fives counts them."""
        if self.on_table == 1:
            return PIPS[self.first_tile]
        ends = self.ends
        dbl = self.end_double
        total = 0
        for e in range(self.n_ends):
            if self.end_played[e]:
                total += ends[e] * 2 if dbl[e] else ends[e]
        return total

    @classmethod
    def from_view(cls, view: dict, hands: list[list[int]], boneyard: list[int]) -> Round:
        """The round a view describes, with hidden tiles filled in by the caller.

        Bots sample ``hands`` (every seat's current tiles, their own as the view gives them) and
        ``boneyard`` consistently with the view and search the result; the line, passes, draws
        and fives come from the view's public history, so nothing hidden is read here.
        """
        rules = make_rules(view["rules"], view["players"])
        moves = view["moves"]
        opener = moves[0]["seat"] if moves else view["turn"]
        rnd = cls(rules, hands, boneyard, opener, None)
        for m in moves:
            seat = m["seat"]
            if m.get("pass"):
                for e in range(rnd.n_ends):
                    rnd.passed_on[seat] |= 1 << rnd.ends[e]
                rnd.passes += 1
                rnd.history.append((seat, PASS, PASS))
                continue
            tile, first, second = parse_tile(m["play"])
            if not rnd.on_table:
                end = OPEN_FLIPPED if first < second else OPEN
            elif m.get("end"):
                end = END_NAMES.index(m["end"])
            else:
                end = rnd.fitting_ends(tile)[0]
            rnd._place(tile, end)
            rnd.passes = 0
            rnd.last_placer = seat
            rnd.history.append((seat, tile, end))
        rnd.public_moves = [dict(m) for m in moves]
        rnd.turn = view["turn"]
        rnd.fives = list(view["fives"])
        rnd.draws = [(d["seat"], d["count"], d["before_move"]) for d in view["draws"]]
        if not rnd.on_table and view["legal"]:
            rnd.forced = frozenset(parse_tile(m["play"])[0] for m in view["legal"])
        return rnd

    # -- saving and restoring ------------------------------------------------------------

    #: Every slot but ``rules`` is plain data: a position saves as JSON and comes back whole.
    _STATE_SLOTS = tuple(s for s in __slots__ if s != "rules")

    def to_state(self) -> dict:
        """The whole position as JSON-ready data (it holds hidden tiles: server side only)."""
        out = {name: getattr(self, name) for name in self._STATE_SLOTS}
        # Copies, so that playing on never changes a position already handed out.
        for name, value in out.items():
            if isinstance(value, list):
                out[name] = value[:]
        out["hands"] = [h[:] for h in self.hands]
        out["forced"] = None if self.forced is None else sorted(self.forced)
        out["result"] = None if self.result is None else list(self.result)
        return out

    @classmethod
    def from_state(cls, rules: Rules, state: dict) -> Round:
        """The inverse of :meth:`to_state`: the same position, ready to play on."""
        new = cls.__new__(cls)
        new.rules = rules
        for name in cls._STATE_SLOTS:
            setattr(new, name, state[name])
        new.forced = None if state["forced"] is None else frozenset(state["forced"])
        new.result = None if state["result"] is None else RoundResult(
            state["result"][0], state["result"][1], state["result"][2],
            tuple(state["result"][3]), state["result"][4])
        new.history = [tuple(h) for h in state["history"]]
        new.draws = [tuple(d) for d in state["draws"]]
        return new

    # -- changing ------------------------------------------------------------------------

    def copy(self) -> Round:
        new = Round.__new__(Round)
        new.rules = self.rules
        new.n = self.n
        new.hands = [h[:] for h in self.hands]
        new.boneyard = self.boneyard
        new.bone_pos = self.bone_pos
        new.opener = self.opener
        new.forced = self.forced
        new.turn = self.turn
        new.ends = self.ends[:]
        new.n_ends = self.n_ends
        new.end_double = self.end_double[:]
        new.end_played = self.end_played[:]
        new.spinner = self.spinner
        new.spinner_outer = self.spinner_outer[:]
        new.spinner_touches = self.spinner_touches
        new.first_tile = self.first_tile
        new.on_table = self.on_table
        new.passes = self.passes
        new.passed_on = self.passed_on[:]
        new.last_placer = self.last_placer
        new.history = self.history[:]
        new.draws = self.draws[:]
        new.fives = self.fives[:]
        new.result = self.result
        new.public_moves = self.public_moves[:]
        return new

    def play(self, tile: int, end: int) -> None:
        """Apply a move already known to be legal (see :meth:`check_play`)."""
        seat = self.turn
        self.history.append((seat, tile, end))
        if tile < 0:
            mask = 0
            ends = self.ends
            for e in range(self.n_ends):
                mask |= 1 << ends[e]
            self.passed_on[seat] |= mask
            self.passes += 1
            if self.passes >= self.n:
                self._finish("blocked")
                return
        else:
            hand = self.hands[seat]
            hand.remove(tile)
            self._place(tile, end)
            self.passes = 0
            self.last_placer = seat
            if self.rules.fives:
                total = self.ends_total()
                if total and total % 5 == 0:
                    self.fives[seat] += total
            if not hand:
                self._finish("domino")
                return
        seat += 1
        if seat == self.n:
            seat = 0
        self.turn = seat
        if self.bone_pos < len(self.boneyard) and self.rules.draws:
            self._draw_until_fit(seat)

    def _place(self, tile: int, end: int) -> None:
        h = HI[tile]
        lo = LO[tile]
        double = h == lo
        self.on_table += 1
        if end < 0:
            self.first_tile = tile
            ends = self.ends
            if end == OPEN:
                ends[0], ends[1] = h, lo
            else:
                ends[0], ends[1] = lo, h
            self.n_ends = 2
            self.end_double[0] = self.end_double[1] = double
            if double and self.rules.fives:
                self.spinner = h
                self.spinner_outer = [True, True]
            return
        ends = self.ends
        ends[end] = lo if h == ends[end] else h
        self.end_double[end] = double
        if end >= 2:
            self.end_played[end] = True
        elif self.rules.fives:
            if self.spinner is None:
                if double:
                    self.spinner = h
                    self.spinner_outer[end] = True
                    self.spinner_touches = 1
            elif self.spinner_outer[end]:
                # A tile now touches this long side of the spinner; both touched opens C and D.
                self.spinner_outer[end] = False
                self.spinner_touches += 1
                if self.spinner_touches == 2:
                    ends[2] = ends[3] = self.spinner
                    self.n_ends = 4

    def _draw_until_fit(self, seat: int) -> None:
        hand = self.hands[seat]
        fits = [FITS[self.ends[e]] for e in range(self.n_ends)]
        for t in hand:
            for f in fits:
                if f[t]:
                    return
        count = 0
        bones = self.boneyard
        while self.bone_pos < len(bones):
            t = bones[self.bone_pos]
            self.bone_pos += 1
            hand.append(t)
            count += 1
            if any(f[t] for f in fits):
                break
        self.draws.append((seat, count, len(self.history)))

    def _finish(self, reason: str) -> None:
        self.turn = None
        r = self.rules
        pips = tuple(sum(PIPS[t] for t in h) for h in self.hands)
        if r.partners:
            side_pips = [pips[0] + pips[2], pips[1] + pips[3]]
        else:
            side_pips = list(pips)
        tie = False
        if reason == "domino":
            winner: int | None = r.side_of(self.last_placer)
            kind = r.domino_points
        else:
            kind = r.blocked_points
            low = min(side_pips)
            lowest = [s for s, p in enumerate(side_pips) if p == low]
            if len(lowest) == 1:
                winner = lowest[0]
            else:
                tie = True
                rule = r.blocked_tie
                if rule == "closer_wins":
                    winner = r.side_of(self.last_placer)
                elif rule == "closer_loses":
                    winner = 1 - r.side_of(self.last_placer)
                elif rule == "opener_loses":
                    winner = 1 - r.side_of(self.opener)
                else:
                    winner = None
        points = 0
        if winner is not None:
            own = side_pips[winner]
            others = sum(side_pips) - own
            if kind == "opponents":
                points = others
            elif kind == "opponents_minus_own":
                points = others - own
            elif kind == "all":
                points = others + own
            else:
                points = round_to_five(others)
        self.result = RoundResult(reason, winner, tie, pips, points)

    # -- checking a move from outside ----------------------------------------------------

    def _check_turn(self, seat: int) -> None:
        if self.result is not None:
            raise RuleError("round_over", "the round is already over", key="round_over")
        if seat != self.turn:
            raise RuleError("not_your_turn", f"it is seat {self.turn}'s turn, not seat {seat}'s",
                            key="not_your_turn", turn=self.turn, seat=seat)

    def check_play(self, seat: int, tile: int, end: int | None, flipped: bool = False
                   ) -> tuple[int, int]:
        """Refuse an illegal play with the reason, or return it as an engine move."""
        self._check_turn(seat)
        name = NAMES[tile]
        if tile not in self.hands[seat]:
            raise RuleError("illegal_move", f"seat {seat} does not hold {name}",
                            key="not_in_hand", tile=name, seat=seat)
        if not self.on_table:
            if self.forced is not None and tile not in self.forced:
                need = " or ".join(NAMES[t] for t in sorted(self.forced, reverse=True))
                raise RuleError("must_open_with", f"this round opens with {need}, not {name}",
                                key="must_open_with", tile=name, need=need)
            if end not in (None, 0, 1):
                raise RuleError("illegal_move", f"the first tile has only ends A and B, "
                                f"not {END_NAMES[end]}", key="wrong_end", tile=name)
            return tile, OPEN_FLIPPED if flipped else OPEN
        fits = self.fitting_ends(tile)
        shown = _join([self.ends[e] for e in range(self.n_ends)])
        if not fits:
            word = "neither end" if self.n_ends == 2 else "no end"
            raise RuleError("illegal_move", f"{name} fits {word} ({shown})",
                            key="fits_no_end", tile=name, ends=shown)
        if end is None:
            if len(fits) > 1:
                which = " and ".join(END_NAMES[e] for e in fits)
                raise RuleError("end_required", f"{name} fits ends {which}: say which end",
                                key="end_required", tile=name, ends=which)
            return tile, fits[0]
        if end not in fits:
            shown_end = "closed" if end >= self.n_ends else str(self.ends[end])
            raise RuleError("illegal_move",
                            f"{name} does not fit end {END_NAMES[end]} ({shown_end})",
                            key="wrong_end", tile=name, end=END_NAMES[end], value=shown_end)
        return tile, end

    def check_pass(self, seat: int) -> tuple[int, int]:
        self._check_turn(seat)
        if not self.on_table and self.forced is not None:
            need = " or ".join(NAMES[t] for t in sorted(self.forced, reverse=True))
            raise RuleError("must_open_with", f"this round opens with {need}; no passing",
                            key="must_open_with", need=need)
        legal = self.legal()
        if legal[0] != PASS_MOVE:
            tile, end = legal[0]
            where = "to open the round" if end < 0 else f"on end {END_NAMES[end]}"
            raise RuleError("must_play", f"seat {seat} cannot pass: {NAMES[tile]} can be played "
                            f"{where}", key="must_play", tile=NAMES[tile], seat=seat)
        return PASS_MOVE


def apply(rnd: Round, tile: int, end: int) -> Round:
    """The immutable style: a new round with the (legal) move applied; ``rnd`` is untouched."""
    new = rnd.copy()
    new.play(tile, end)
    return new
