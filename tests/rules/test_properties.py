"""Property tests of the rules engine over random deals and random legal play.

Every example is driven by one integer seed drawn by hypothesis and fed to ``random.Random``, so
a failure shrinks to a small seed and reproduces exactly. The expected values (legal moves,
openers, draws, round results, match scores) are recomputed here from the text of
``shared/specs/rules.md`` and ``shared/specs/harness.md``; the engine's own scoring is never
called to check itself.

No Django is needed: the engine is pure Python.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.rules import harness
from apps.rules.engine import OPEN, OPEN_FLIPPED, PASS_MOVE, Match, deal, move_dict
from apps.rules.errors import RuleError
from apps.rules.presets import make_rules
from apps.rules.view import seat_view

# -- the set, written independently of apps.rules.tiles ---------------------------------------

ALL = [(a, b) for a in range(7) for b in range(a, 7)]  # (low, high)
assert len(ALL) == 28


def halves(tile_id: int) -> tuple[int, int]:
    """Halves of an engine tile id, read back from its canonical name (no engine table)."""
    from apps.rules.tiles import NAMES

    a, b = NAMES[tile_id].split("-")
    return int(a), int(b)


def tid(name: str) -> int:
    from apps.rules.tiles import TILE_ID

    a, b = (int(x) for x in name.split("-"))
    return TILE_ID[(a, b)]


def name(tile_id: int) -> str:
    a, b = halves(tile_id)
    return f"{a}-{b}"


def pips(tile_id: int) -> int:
    return sum(halves(tile_id))


def is_double(tile_id: int) -> bool:
    a, b = halves(tile_id)
    return a == b


TILE_RE = re.compile(r"^([0-6])-([0-6])$")
END_LETTERS = "ABCD"
MOVE_CODES = {"not_your_turn", "illegal_move", "end_required", "must_play", "must_open_with",
              "round_over"}

# -- the configurations under test -------------------------------------------------------------

CONFIGS = [
    ("partners", 4, {}),
    ("partners-66", 4, {}),
    ("pairs-series", 4, {"tie": "closer_loses"}),
    ("pairs-series", 4, {"tie": "opener_loses"}),
    ("pairs-series", 4, {"tie": "replay"}),
]
CONFIGS += [(p, n, {}) for p in ("draw", "block", "all-fives") for n in (2, 3, 4)]
CONFIGS += [("tranca", n, {"hand_size": h}) for n in (2, 3, 4) for h in (5, 7)]
IDS = [f"{p}-{n}" + "".join(f"-{v}" for v in o.values()) for p, n, o in CONFIGS]

PARTNER_PRESETS = ("partners", "partners-66", "pairs-series")
DRAW_PRESETS = ("draw", "all-fives", "tranca")  # tranca only while a boneyard exists


def is_partners(preset: str, n: int) -> bool:
    return preset in PARTNER_PRESETS or (preset == "tranca" and n == 4)


def side_of(preset: str, n: int, seat: int) -> int:
    return seat % 2 if is_partners(preset, n) else seat


def round5(x: int) -> int:
    """Nearest multiple of 5 (integers never sit half-way)."""
    q, r = divmod(x, 5)
    return 5 * (q + (1 if r >= 3 else 0))


# -- an independent scorer, from the scoring table of rules.md ---------------------------------


def expected_result(preset: str, tie_rule: str | None, n: int, hands: list[list[int]],
                    reason: str, last_placer: int, opener: int) -> dict:
    seat_pips = [sum(pips(t) for t in h) for h in hands]
    partners = is_partners(preset, n)
    if partners:
        side_pips = [seat_pips[0] + seat_pips[2], seat_pips[1] + seat_pips[3]]
    else:
        side_pips = list(seat_pips)
    sides = len(side_pips)
    total = sum(side_pips)

    def side(seat):
        return side_of(preset, n, seat)

    tie = False
    if reason == "domino":
        winner = side(last_placer)
        others = total - side_pips[winner]
        if preset in ("partners", "partners-66"):
            points = others  # both opponents' hands
        elif preset in ("draw", "block"):
            points = others - side_pips[winner]  # own is 0
        elif preset == "all-fives":
            points = round5(others)
        elif preset == "tranca":
            points = others
        else:  # pairs-series: every hand, partner's included
            points = total
        return dict(reason=reason, winner=winner, tie=False, pips=seat_pips, points=points)

    low = min(side_pips)
    lowest = [s for s in range(sides) if side_pips[s] == low]
    if len(lowest) == 1:
        winner = lowest[0]
    else:
        tie = True
        if preset == "partners":
            winner = side(last_placer)
        elif preset == "partners-66":
            winner = 1 - side(last_placer)
        elif preset == "pairs-series":
            if tie_rule == "closer_loses":
                winner = 1 - side(last_placer)
            elif tie_rule == "opener_loses":
                winner = 1 - side(opener)
            else:
                winner = None
        else:
            winner = None
    if winner is None:
        points = 0
    else:
        own = side_pips[winner]
        others = total - own
        if preset in ("partners", "partners-66"):
            points = others
        elif preset in ("draw", "block"):
            points = others - own
        elif preset == "all-fives":
            points = round5(others)
        else:  # tranca, pairs-series: all pips still in hands
            points = total
    return dict(reason=reason, winner=winner, tie=tie, pips=seat_pips, points=points)


def expected_opening(preset: str, round_index: int, hands: list[list[int]],
                     prev: dict | None, random_opener: int) -> tuple[int, set[int] | None]:
    """(opener, forced opening tiles or None) per the presets table of rules.md."""
    n = len(hands)
    dd = tid("6-6")
    if preset == "tranca":
        doubles = [(halves(t)[0], s, t) for s, h in enumerate(hands) for t in h if is_double(t)]
        if doubles:
            _, seat, t = max(doubles)
            return seat, {t}
        weight = max(pips(t) for h in hands for t in h)
        for seat in range(n):
            heavy = {t for t in hands[seat] if pips(t) == weight}
            if heavy:
                return seat, heavy
        raise AssertionError
    if round_index == 0:
        if preset in ("partners", "partners-66"):
            seat = next(s for s, h in enumerate(hands) if dd in h)
            return seat, ({dd} if preset == "partners-66" else None)
        return random_opener, None
    if preset in PARTNER_PRESETS:
        if preset == "pairs-series" and prev["winner"] is None:
            return prev["opener"], None  # "se repite": the same seat opens again
        return (prev["opener"] + 1) % n, None
    # draw, block, all-fives: the winner; no single winner: the seat after the opener
    if prev["winner"] is not None:
        return prev["winner"], None
    return (prev["opener"] + 1) % n, None


# -- driving a match ---------------------------------------------------------------------------


class Driver:
    """Plays random legal moves through ``Match`` and checks every step against the spec."""

    def __init__(self, preset: str, n: int, options: dict, rng: random.Random,
                 full_checks: bool = True, target: int | None = None, best_of: int | None = None):
        self.preset, self.n, self.rng = preset, n, rng
        # probes (refused moves, harness checks) draw from their own generator, so the moves
        # played are the same with and without them
        self.prng = random.Random(rng.getrandbits(64))
        self.options = {"preset": preset, **options}
        if target is not None:
            self.options["target"] = target
        if best_of is not None:
            self.options["best_of"] = best_of
        self.rules = make_rules(self.options, n)
        self.match = Match(self.rules)
        self.full = full_checks
        self.record = {"rules": dict(self.options), "players": n, "rounds": []}
        self.prev: dict | None = None  # last round: opener, winner
        self.totals = [0] * (2 if is_partners(preset, n) else n)
        self.games = [0] * len(self.totals)
        self.reset_pending = False
        self.draws_any = preset in DRAW_PRESETS

    # ---- one round

    def play_round(self) -> None:
        rules, rng, n = self.rules, self.rng, self.n
        k = len(self.match.rounds)
        hands, boneyard, rand_opener = deal(rules, rng)
        assert sorted([t for h in hands for t in h] + boneyard) == list(range(28))
        exp_opener, exp_forced = expected_opening(self.preset, k, hands, self.prev, rand_opener)
        opener_arg = rand_opener if (k == 0 and rules.first_opener == "random") else None
        raw_round = {"hands": [[name(t) for t in h] for h in hands],
                     "boneyard": [name(t) for t in boneyard], "moves": []}
        if opener_arg is not None:
            raw_round["opener"] = opener_arg
        self.record["rounds"].append(raw_round)
        if self.reset_pending:
            self.totals = [0] * len(self.totals)
            self.reset_pending = False

        rnd = self.match.start_round(hands, boneyard, opener_arg)
        assert rnd.opener == exp_opener
        assert rnd.turn == exp_opener

        # my own model of the round
        self.my_hands = [list(h) for h in hands]
        self.my_bones = list(boneyard)
        self.my_bone_pos = 0
        self.played: list[int] = []
        self.my_draws: list[tuple[int, int, int]] = []
        self.passes_in_row = 0
        self.last_placer = None
        self.forced = exp_forced
        self.line = LineModel(self.rules.fives)
        self.my_fives = [0] * n
        boneyard_exists = len(boneyard) > 0
        draws_here = self.draws_any and boneyard_exists
        moves = raw_round["moves"]
        probe_step = self.prng.randrange(60)
        bound = 28 * n + n + 1

        for step in range(bound + 1):
            self.check_state(rnd, raw_round)
            if rnd.result is not None:
                break
            assert step < bound, "the round did not end within the bound"
            seat = rnd.turn
            legal = rnd.legal()
            self.check_legal(rnd, seat, legal)
            if self.full:
                self.check_refusals(rnd, seat, legal)
                if step == probe_step:
                    self.probe_harness(raw_round, rnd, seat, legal)
            # draws: a pass only with an empty boneyard
            if legal == [PASS_MOVE]:
                if draws_here:
                    assert rnd.boneyard_count == 0, "passed while the boneyard still holds tiles"
            tile, end = rng.choice(legal)
            if end == OPEN and rng.random() < 0.5 and not is_double(tile):
                end = OPEN_FLIPPED
            before_ends = list(rnd.ends[:rnd.n_ends])
            nxt = (seat + 1) % n
            next_hand_before = list(self.my_hands[nxt])
            written = move_dict(seat, tile, end)
            self.match.play(tile, end)
            moves.append(written)
            # my model follows the move
            if tile < 0:
                self.passes_in_row += 1
            else:
                self.my_hands[seat].remove(tile)
                self.played.append(tile)
                self.passes_in_row = 0
                self.last_placer = seat
                self.check_ends_after_play(rnd, before_ends, tile, end)
                gained = self.line.place(tile, end)
                if self.rules.fives and gained and gained % 5 == 0:
                    self.my_fives[seat] += gained
            # the line as rules.md describes it, and all-fives' points during play
            assert list(rnd.ends[:rnd.n_ends]) == self.line.ends, (self.line.ends, rnd.ends)
            assert rnd.fives == self.my_fives
            if rnd.result is None:
                assert rnd.turn == nxt
                self.expect_draw(rnd, nxt, next_hand_before, draws_here, len(moves))
            else:
                assert rnd.turn is None
        else:  # pragma: no cover
            raise AssertionError("round did not end")

        self.check_round_end(rnd, raw_round, k)

    # ---- per-step checks

    def check_state(self, rnd, raw_round) -> None:
        # tiles are conserved: hands + line + boneyard remainder = the 28, no duplicates
        in_hands = [t for h in rnd.hands for t in h]
        line = [t for (_, t, _) in rnd.history if t >= 0]
        rest = list(rnd.boneyard[rnd.bone_pos:])
        everything = in_hands + line + rest
        assert len(everything) == 28 and set(everything) == set(range(28)), everything
        # and they agree with my own model
        assert [sorted(h) for h in rnd.hands] == [sorted(h) for h in self.my_hands]
        assert sorted(line) == sorted(self.played)
        assert rest == self.my_bones[self.my_bone_pos:]
        assert rnd.boneyard_count == len(self.my_bones) - self.my_bone_pos
        if self.preset == "block" or not self.draws_any:
            assert rnd.draws == []
        assert list(rnd.draws) == self.my_draws
        if self.full:
            self.check_views(rnd)

    def check_legal(self, rnd, seat, legal) -> None:
        hand = self.my_hands[seat]
        if not self.played:
            tiles = set(hand) if self.forced is None else set(hand) & self.forced
            assert tiles, "the opener must hold its forced tile"
            assert sorted(legal) == sorted((t, OPEN) for t in tiles)
        else:
            ends = list(rnd.ends[:rnd.n_ends])
            expect = [(t, e) for t in hand for e in range(len(ends)) if ends[e] in halves(t)]
            if expect:
                assert sorted(legal) == sorted(expect)
            else:
                assert legal == [PASS_MOVE]
        # every listed move is accepted by check_play / check_pass
        for t, e in legal:
            if t < 0:
                assert rnd.check_pass(seat) == PASS_MOVE
            elif e < 0:
                assert rnd.check_play(seat, t, None) == (t, OPEN)
                if not is_double(t):
                    assert rnd.check_play(seat, t, None, flipped=True) == (t, OPEN_FLIPPED)
            else:
                assert rnd.check_play(seat, t, e) == (t, e)

    def expected_code(self, rnd, seat, tile, end) -> str | None:
        """The refusal the harness spec gives a play, or None when it is legal."""
        hand = self.my_hands[seat]
        if tile not in hand:
            return "illegal_move"
        if not self.played:
            if self.forced is not None and tile not in self.forced:
                return "must_open_with"
            if end in (2, 3):
                return "illegal_move"
            return None
        ends = list(rnd.ends[:rnd.n_ends])
        fits = [e for e in range(len(ends)) if ends[e] in halves(tile)]
        if not fits:
            return "illegal_move"
        if end is None:
            return "end_required" if len(fits) > 1 else None
        return None if end in fits else "illegal_move"

    def check_refusals(self, rnd, seat, legal) -> None:
        rng = self.prng
        legal_set = set(legal)
        snapshot = (sorted(legal), [list(h) for h in rnd.hands], rnd.turn, list(rnd.ends))
        for _ in range(6):
            tile = rng.randrange(28)
            end = rng.choice([None, 0, 1, 2, 3])
            if self.played and end is not None and (tile, end) in legal_set:
                continue
            code = self.expected_code(rnd, seat, tile, end)
            if code is None:
                continue
            with pytest.raises(RuleError) as info:
                rnd.check_play(seat, tile, end)
            assert info.value.code == code, (name(tile), end, info.value.message)
        # a tile in hand on every end it is not listed for
        if self.played:
            for t in self.my_hands[seat]:
                for e in range(4):
                    if (t, e) not in legal_set:
                        with pytest.raises(RuleError) as info:
                            rnd.check_play(seat, t, e)
                        assert info.value.code == "illegal_move"
        # a pass that is not listed
        if legal != [PASS_MOVE]:
            with pytest.raises(RuleError) as info:
                rnd.check_pass(seat)
            expect = "must_open_with" if (not self.played and self.forced) else "must_play"
            assert info.value.code == expect
        # another seat
        other = (seat + 1 + rng.randrange(self.n - 1)) % self.n
        with pytest.raises(RuleError) as info:
            rnd.check_pass(other)
        assert info.value.code == "not_your_turn"
        if self.my_hands[other]:
            with pytest.raises(RuleError) as info:
                rnd.check_play(other, self.my_hands[other][0], None)
            assert info.value.code == "not_your_turn"
        # refusals change nothing
        assert snapshot == (sorted(rnd.legal()), [list(h) for h in rnd.hands], rnd.turn,
                            list(rnd.ends))

    def probe_harness(self, raw_round, rnd, seat, legal) -> None:
        """Mid-round: the harness agrees on the position, its views, and refuses bad moves."""
        out = harness.replay(self.record)
        assert out["ok"], out
        cur = out["current"]
        assert cur["turn"] == seat
        assert cur["legal"] == [_legal_json(t, e) for t, e in legal]
        assert cur["hand_counts"] == [len(h) for h in self.my_hands]
        for s in range(self.n):
            assert harness.view(self.record, s) == seat_view(self.match, s)
        # an illegal move appended to the record is refused, with the right code and index
        i = len(raw_round["moves"])
        bad = None
        if legal != [PASS_MOVE]:
            bad, code = {"seat": seat, "pass": True}, (
                "must_open_with" if (not self.played and self.forced) else "must_play")
        else:
            t = self.my_hands[seat][0]
            bad, code = {"seat": seat, "play": name(t), "end": "A"}, "illegal_move"
        other = (seat + 1) % self.n
        for move, want in ((bad, code), ({"seat": other, "pass": True}, "not_your_turn")):
            raw_round["moves"].append(move)
            try:
                res = harness.replay(self.record)
            finally:
                raw_round["moves"].pop()
            assert res["ok"] is False and res["error"]["code"] == want, res
            assert res["error"]["move"] == i
            assert res["error"]["round"] == len(self.record["rounds"]) - 1
            assert harness.exit_code(res) == 1

    def check_ends_after_play(self, rnd, before_ends, tile, end) -> None:
        a, b = halves(tile)
        after = list(rnd.ends[:rnd.n_ends])
        if end < 0:
            first, second = (max(a, b), min(a, b)) if end == OPEN else (min(a, b), max(a, b))
            assert after == [first, second]
            return
        old = before_ends[end]
        assert old in (a, b)
        assert after[end] == (b if a == old else a)
        for e in range(len(before_ends)):
            if e != end:
                assert after[e] == before_ends[e]
        if len(after) > len(before_ends):
            # only all-fives opens C and D, on the spinner's number
            assert self.rules.fives and len(after) == 4
            assert after[2] == after[3]

    def expect_draw(self, rnd, seat, hand_before, draws_here, move_index) -> None:
        """A seat draws only when nothing fits, stops at the first tile that fits."""
        if not draws_here:
            return
        ends = set(rnd.ends[:rnd.n_ends])
        if any(set(halves(t)) & ends for t in hand_before):
            return  # something fits: no draw
        count = 0
        while self.my_bone_pos < len(self.my_bones):
            t = self.my_bones[self.my_bone_pos]
            self.my_bone_pos += 1
            self.my_hands[seat].append(t)
            count += 1
            if set(halves(t)) & ends:
                break
        if count:
            self.my_draws.append((seat, count, move_index))

    def check_views(self, rnd) -> None:
        over = rnd.result is not None
        played = set(self.played)
        for s in range(self.n):
            v = seat_view(self.match, s)
            own = set(self.my_hands[s])
            assert sorted(tid(x) for x in v["hand"]) == sorted(own)
            assert v["hand_counts"] == [len(h) for h in self.my_hands]
            assert v["boneyard_count"] == len(self.my_bones) - self.my_bone_pos
            if rnd.turn != s:
                assert v["legal"] == []
            if not over:
                assert v["revealed"] is None
                for text in _strings(v):
                    m = TILE_RE.match(text)
                    if m:
                        t = tid(text)
                        assert t in own or t in played, (
                            f"seat {s}'s view shows {text}, neither its own nor played")
            else:
                assert v["turn"] is None
                revealed = v["revealed"]
                assert [sorted(tid(x) for x in h) for h in revealed] == \
                    [sorted(h) for h in self.my_hands]

    # ---- end of round

    def check_round_end(self, rnd, raw_round, k) -> None:
        n = self.n
        res = rnd.result
        if any(not h for h in self.my_hands):
            reason = "domino"
            assert sum(1 for h in self.my_hands if not h) == 1
            assert self.passes_in_row == 0
        else:
            reason = "blocked"
            assert self.passes_in_row == n
        exp = expected_result(self.preset, self.rules.tie, n, self.my_hands, reason,
                              self.last_placer, rnd.opener)
        got = dict(reason=res.reason, winner=res.winner, tie=res.tie, pips=list(res.pips),
                   points=res.points)
        assert got == exp
        # the match totals, kept here independently
        fives_side = [0] * len(self.totals)
        for seat, f in enumerate(rnd.fives):
            if not self.rules.fives:
                assert f == 0
            else:
                assert f % 5 == 0 and f >= 0
            fives_side[side_of(self.preset, n, seat)] += f
        for s in range(len(self.totals)):
            self.totals[s] += fives_side[s]
        if exp["winner"] is not None:
            self.totals[exp["winner"]] += exp["points"]
        self.prev = {"opener": rnd.opener, "winner": exp["winner"]}

        over, winner = False, None
        target = self.rules.target
        top = max(self.totals)
        leaders = [s for s, v in enumerate(self.totals) if v == top]
        if top >= target and len(leaders) == 1:
            if self.preset == "pairs-series":
                self.games[leaders[0]] += 1
                need = (self.rules.best_of or 1) // 2 + 1
                if self.games[leaders[0]] >= need:
                    over, winner = True, leaders[0]
                else:
                    self.reset_pending = True
            else:
                over, winner = True, leaders[0]
        assert self.match.over == over
        assert self.match.winner == winner
        assert self.match.scores() == self.totals

        # the harness replays the record to the same verdict
        out = harness.replay(self.record)
        assert out["ok"], out
        assert out["current"] is None
        r = out["rounds"][k]
        assert r["opener"] == rnd.opener
        assert r["first_tile"] == raw_round["moves"][0]["play"]
        assert r["draws"] == [{"seat": s, "count": c, "before_move": i}
                              for s, c, i in self.my_draws]
        assert r["fives"] == list(rnd.fives)

        def side_json(x):
            if x is None:
                return None
            return {"team": x} if is_partners(self.preset, n) else {"seat": x}

        assert r["result"] == {"reason": exp["reason"], "winner": side_json(exp["winner"]),
                               "tie": exp["tie"], "pips": exp["pips"], "points": exp["points"]}
        assert out["scores"] == self.totals
        assert out["match"]["over"] == over
        assert out["match"]["winner"] == side_json(winner)
        assert out["match"]["games"] == (self.games if self.preset == "pairs-series"
                                         else [0] * len(self.totals))
        # next_opener per the preset's rule (null in tranca and once the match is over)
        if over or self.preset == "tranca":
            exp_next = None
        else:
            exp_next = expected_opening(self.preset, k + 1, [[]] * n, self.prev, -1)[0]
        assert out["match"]["next_opener"] == exp_next
        assert self.match.next_opener() == exp_next


class LineModel:
    """The line of rules.md: ends A and B, and in all-fives the spinner opening C and D.

    ``place`` returns the open ends added up as all-fives counts them after the tile.
    """

    def __init__(self, fives: bool):
        self.fives = fives
        self.first: int | None = None
        self.ends: list[int] = []
        self.arms: list[list[int]] = [[], [], [], []]  # tiles laid on each end, in order
        self.spinner: tuple[int, int] | None = None  # (arm, index in arm); arm -1: first tile

    def place(self, tile: int, end: int) -> int:
        a, b = halves(tile)
        if end < 0:
            self.first = tile
            self.ends = [max(a, b), min(a, b)] if end == OPEN else [min(a, b), max(a, b)]
            if self.fives and a == b:
                self.spinner = (-1, 0)
            return pips(tile)
        old = self.ends[end]
        self.ends[end] = b if a == old else a
        self.arms[end].append(tile)
        if self.fives and self.spinner is None and a == b:
            self.spinner = (end, len(self.arms[end]) - 1)
        if self.fives and len(self.ends) == 2 and self.spinner is not None:
            arm, i = self.spinner
            if arm < 0:
                both = bool(self.arms[0]) and bool(self.arms[1])
            else:
                both = len(self.arms[arm]) > i + 1  # its inner side touches the line already
            if both:
                v = halves(self.first if arm < 0 else self.arms[arm][i])[0]
                self.ends += [v, v]
        total = 0
        for e, value in enumerate(self.ends):
            if self.arms[e]:
                outer = self.arms[e][-1]
            elif e < 2:
                outer = self.first
            else:
                continue  # a side of the spinner nobody has played on counts nothing
            total += value * (2 if is_double(outer) else 1)
        return total


def _legal_json(t, e):
    if t < 0:
        return {"pass": True}
    if e < 0:
        return {"play": name(t)}
    return {"play": name(t), "end": END_LETTERS[e]}


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _strings(v)


SEEDS = st.integers(min_value=0, max_value=2**63 - 1)
FAST = settings(max_examples=25, deadline=None, derandomize=False,
                suppress_health_check=[HealthCheck.too_slow])


# -- the properties ----------------------------------------------------------------------------


@pytest.mark.parametrize(("preset", "players", "options"), CONFIGS, ids=IDS)
@FAST
@given(seed=SEEDS)
def test_random_round_keeps_every_rule(preset, players, options, seed):
    """One or two rounds of random legal play with every per-step check switched on."""
    rng = random.Random(seed)
    d = Driver(preset, players, options, rng, full_checks=True)
    d.play_round()
    if not d.match.over:
        d.play_round()  # a later round: its opener follows the previous one


@pytest.mark.parametrize(("preset", "players", "options"), CONFIGS, ids=IDS)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=SEEDS)
def test_whole_match_terminates_with_a_winner(preset, players, options, seed):
    rng = random.Random(seed)
    d = Driver(preset, players, options, rng, full_checks=False)
    for _ in range(400):
        d.play_round()
        if d.match.over:
            break
    else:
        raise AssertionError("the match did not end within 400 rounds")
    w = d.match.winner
    assert w is not None
    assert d.totals[w] >= d.rules.target
    assert all(v < d.totals[w] for s, v in enumerate(d.totals) if s != w)
    with pytest.raises(RuleError):
        d.match.start_round(*deal(d.rules, rng)[:2])


@pytest.mark.parametrize("tie", ["closer_loses", "opener_loses", "replay"])
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=SEEDS)
def test_pairs_series_best_of_three(tie, seed):
    """Games of a series: scores reset after each game, the opener keeps rotating."""
    rng = random.Random(seed)
    d = Driver("pairs-series", 4, {"tie": tie}, rng, full_checks=False, target=50, best_of=3)
    for _ in range(400):
        d.play_round()
        if d.match.over:
            break
    else:
        raise AssertionError("the series did not end")
    assert max(d.games) == 2
    assert d.match.games == d.games


TIE_CONFIGS = [c for c in CONFIGS if c[0] in PARTNER_PRESETS] + [
    ("block", 2, {}), ("block", 4, {}), ("draw", 3, {}), ("tranca", 4, {"hand_size": 7})]


@pytest.mark.parametrize(("preset", "players", "options"), TIE_CONFIGS,
                         ids=[f"{p}-{n}" + "".join(f"-{v}" for v in o.values())
                              for p, n, o in TIE_CONFIGS])
def test_blocked_ties_follow_the_preset_rule(preset, players, options):
    """Exact blocked ties are rare in random play: look for a few by seed and check them fully,
    together with the round after (pairs-series ``replay``: the same seat opens again)."""
    found = 0
    for seed in range(1_000_000, 1_002_500):
        d = Driver(preset, players, options, random.Random(seed), full_checks=False)
        d.play_round()
        if not d.match.rounds[-1].result.tie:
            continue
        found += 1
        d = Driver(preset, players, options, random.Random(seed), full_checks=True)
        d.play_round()
        assert d.match.rounds[-1].result.tie
        if not d.match.over:
            d.play_round()
        if found == 3:
            break
    assert found, "no blocked tie found in the seeds scanned"
