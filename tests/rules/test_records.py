"""Each preset's distinguishing rules, as game records replayed through the harness."""

from __future__ import annotations

import pytest

from apps.rules.harness import replay, view

from .records import (
    BLOCK_PLAY,
    BLOCK_TIE_HANDS,
    BLOCK_WIN_HANDS,
    deal,
    record,
    rotate,
)


def ok(rec: dict) -> dict:
    out = replay(rec)
    assert out["ok"], out
    return out


def refused(rec: dict, code: str) -> dict:
    out = replay(rec)
    assert not out["ok"], out
    assert out["error"]["code"] == code, out
    return out["error"]


def result(out: dict, k: int = 0) -> dict:
    return out["rounds"][k]["result"]


BLOCK_TIE = deal(BLOCK_TIE_HANDS, play=BLOCK_PLAY)
BLOCK_WIN = deal(BLOCK_WIN_HANDS, play=BLOCK_PLAY)

# block, 2 players: seat 0 holds 6-6 and no other six, seat 1 holds no six: blocked at once.
# Seat 0 keeps 28 pips, seat 1 keeps 21.
TWO_BLOCK_HANDS = ["6-6 5-5 4-0 3-1 2-1 1-0 3-3", "0-0 1-1 2-0 2-2 3-0 4-1 5-0"]
TWO_BLOCK_BONES = "6-5 6-4 6-3 6-2 6-1 6-0 5-4 5-3 5-2 5-1 4-4 4-3 4-2 3-2"
# Seat 0 plays out while seat 1, holding only 0..3, cannot follow 4s, 5s and 6s.
TWO_DOMINO_HANDS = ["6-6 6-5 5-5 5-4 4-4 6-4 4-3", "0-0 1-0 1-1 2-0 2-1 2-2 3-0"]
TWO_DOMINO_PLAY = "0:6-6 1:p 0:6-5A 1:p 0:5-5A 1:p 0:5-4A 1:p 0:4-4A 1:p 0:6-4B 1:p 0:4-3A"


class TestOpeners:
    def test_partners_double_six_holder_opens_with_any_tile(self):
        hands = BLOCK_WIN_HANDS
        out = ok(record("partners", [deal(hands, play="0:6-1")]))
        assert out["rounds"][0]["opener"] == 0
        assert out["rounds"][0]["first_tile"] == "6-1"
        assert out["current"]["ends"] == {"A": 6, "B": 1}
        refused(record("partners", [deal(hands, play="1:6-2")]), "not_your_turn")

    def test_partners_later_rounds_open_at_the_seat_after_the_last_opener(self):
        out = ok(record("partners", [BLOCK_WIN]))
        assert out["match"]["next_opener"] == 1
        # Seat 0 still holds 6-6, but seat 1 opens round 2, with any tile.
        out = ok(record("partners", [BLOCK_WIN, deal(BLOCK_WIN_HANDS, play="1:1-0")]))
        assert out["rounds"][1]["opener"] == 1
        assert out["current"]["turn"] == 2
        out = ok(record("partners", [BLOCK_WIN, deal(BLOCK_WIN_HANDS)]))
        assert out["current"]["turn"] == 1
        assert len(out["current"]["legal"]) == 7

    def test_partners_66_must_open_with_the_double_six_in_round_one_only(self):
        err = refused(record("partners-66", [deal(BLOCK_WIN_HANDS, play="0:6-1")]),
                      "must_open_with")
        assert "6-6" in err["message"]
        refused(record("partners-66", [deal(BLOCK_WIN_HANDS, play="0:p")]), "must_open_with")
        out = ok(record("partners-66", [deal(BLOCK_WIN_HANDS)]))
        assert out["current"]["legal"] == [{"play": "6-6"}]
        out = ok(record("partners-66", [BLOCK_WIN, deal(BLOCK_WIN_HANDS, play="1:5-6")]))
        assert out["rounds"][1]["opener"] == 1

    def test_tranca_highest_double_opens_with_it(self):
        rnd = deal(BLOCK_TIE_HANDS)
        out = ok(record("tranca", [rnd], players=4))
        assert out["current"]["turn"] == 0
        assert out["current"]["legal"] == [{"play": "6-6"}]
        refused(record("tranca", [deal(BLOCK_TIE_HANDS, play="0:6-1")], players=4),
                "must_open_with")
        # Without the 6-6 dealt, the 5-5 is the highest double and its holder opens.
        out = ok(record("tranca", [deal(["6-1 5-5 4-0 3-1 2-1", "6-2 4-4 2-0 1-1 0-0"])],
                        players=2, hand_size=5))
        assert out["current"]["turn"] == 0 and out["current"]["legal"] == [{"play": "5-5"}]
        out = ok(record("tranca", [deal(["6-1 1-0 4-0 3-1 2-1", "6-2 4-4 2-0 5-5 0-0"])],
                        players=2, hand_size=5))
        assert out["current"]["turn"] == 1 and out["current"]["legal"] == [{"play": "5-5"}]
        assert out["match"]["next_opener"] is None

    def test_tranca_without_doubles_heaviest_tile_nearest_seat_zero(self):
        # Both seats' heaviest tile weighs 9 (6-3 and 5-4); seat 0 is nearest, holding two.
        hands = ["6-3 5-4 1-0 2-0 3-1", "6-3".replace("6-3", "4-2") + " 5-3 6-2 2-1 3-0"]
        out = ok(record("tranca", [deal(hands)], players=2, hand_size=5))
        assert out["current"]["turn"] == 0
        assert out["current"]["legal"] == [{"play": "6-3"}, {"play": "5-4"}]
        ok(record("tranca", [deal(hands, play="0:5-4")], players=2, hand_size=5))
        refused(record("tranca", [deal(hands, play="0:3-1")], players=2, hand_size=5),
                "must_open_with")
        # Only seat 1 holds a 9: seat 1 opens.
        hands = ["6-2 4-3 1-0 2-0 3-1", "6-3 5-3 4-2 2-1 3-0"]
        out = ok(record("tranca", [deal(hands)], players=2, hand_size=5))
        assert out["current"]["turn"] == 1 and out["current"]["legal"] == [{"play": "6-3"}]

    def test_pairs_series_random_first_opener_then_rotating(self):
        refused(record("pairs-series", [deal(BLOCK_WIN_HANDS)]), "bad_record")
        out = ok(record("pairs-series", [deal(BLOCK_WIN_HANDS, opener=2)]))
        assert out["current"]["turn"] == 2
        out = ok(record("pairs-series", [rotate(BLOCK_WIN, 0) | {"opener": 0}]))
        assert out["match"]["next_opener"] == 1
        second = deal(BLOCK_WIN_HANDS, opener=1)
        ok(record("pairs-series", [BLOCK_WIN | {"opener": 0}, second]))
        refused(record("pairs-series", [BLOCK_WIN | {"opener": 0}, second | {"opener": 3}]),
                "bad_record")
        # A given opener must agree with the rule where the engine derives it.
        refused(record("partners", [deal(BLOCK_WIN_HANDS, opener=1)]), "bad_record")

    def test_block_winner_opens_next_round(self):
        rnd = deal(TWO_BLOCK_HANDS, TWO_BLOCK_BONES, opener=0, play="0:6-6 1:p 0:p")
        out = ok(record("block", [rnd], players=2))
        assert result(out)["winner"] == {"seat": 1}
        assert out["match"]["next_opener"] == 1
        # The next round's opener is derived: seat 0 opening would be refused.
        again = deal(TWO_BLOCK_HANDS, TWO_BLOCK_BONES, play="0:6-6")
        refused(record("block", [rnd, again], players=2), "not_your_turn")

    def test_after_a_blocked_round_with_no_single_winner_the_seat_after_its_opener(self):
        # Three players, five tiles each: seat 1 opens 6-6 and nobody holds another six.
        third = "5-5 4-4 3-3 5-4 5-3"  # 41 pips
        rnd = deal(["1-0 2-0 1-1 0-0 2-1", "6-6 3-0 2-2 4-0 3-2", third], opener=1,
                   play="1:6-6 2:p 0:p 1:p")
        out = ok(record("block", [rnd], players=3))
        assert result(out) == {"reason": "blocked", "winner": {"seat": 0}, "tie": False,
                               "pips": [8, 16, 41], "points": 16 + 41 - 8}
        assert out["match"]["next_opener"] == 0  # the winner, not the seat after the opener
        # Seats 0 and 1 tie on the fewest pips: nobody scores, seat 2 opens next.
        rnd = deal(["4-0 3-1 2-2 3-0 1-1", "6-6 0-0 2-1 4-3 5-2", third], opener=1,
                   play="1:6-6 2:p 0:p 1:p")
        out = ok(record("block", [rnd], players=3))
        assert result(out) == {"reason": "blocked", "winner": None, "tie": True,
                               "pips": [17, 17, 41], "points": 0}
        assert out["scores"] == [0, 0, 0]
        assert out["match"]["next_opener"] == 2
        nxt = deal(["4-0 3-1 2-2 3-0 1-1", "6-6 0-0 2-1 4-3 5-2", third], play="2:5-5")
        out = ok(record("block", [rnd, nxt], players=3))
        assert out["rounds"][1]["opener"] == 2


class TestPassesAndDraws:
    def test_a_pass_is_refused_while_a_tile_fits(self):
        err = refused(record("partners", [deal(BLOCK_TIE_HANDS, play="0:6-6 1:p")]), "must_play")
        assert "6-2" in err["message"]
        assert err["round"] == 0 and err["move"] == 1

    def test_passes_are_public_with_the_numbers_passed_on(self):
        out = ok(record("partners", [deal(BLOCK_TIE_HANDS, play=BLOCK_PLAY.rsplit(" ", 2)[0])]))
        assert out["current"]["passed_on"] == {"2": [6], "3": [6]}
        assert out["current"]["legal"] == [{"pass": True}]
        seat3 = view(record("partners", [deal(BLOCK_TIE_HANDS, play="0:6-6")]), 3)
        assert seat3["legal"] == [] and seat3["turn"] == 1

    def test_draws_happen_by_themselves_until_a_tile_fits(self):
        hands = ["6-6 5-5 4-0 3-1 2-1 1-0 3-3", "0-0 1-1 2-0 2-2 3-0 4-1 5-0"]
        bones = "4-4 5-1 6-3 6-5 6-4 6-2 6-1 6-0 5-4 5-3 5-2 4-3 4-2 3-2"
        rec = record("draw", [deal(hands, bones, opener=0, play="0:6-6")], players=2)
        out = ok(rec)
        assert out["rounds"][0]["draws"] == [{"seat": 1, "count": 3, "before_move": 1}]
        cur = out["current"]
        assert cur["turn"] == 1 and cur["hand_counts"] == [6, 10] and cur["boneyard_count"] == 11
        assert cur["legal"] == [{"play": "6-3", "end": "A"}, {"play": "6-3", "end": "B"}]
        mine = view(rec, 1)
        assert mine["hand"][-3:] == ["4-4", "5-1", "6-3"]
        assert mine["draws"] == [{"seat": 1, "count": 3, "before_move": 1}]
        theirs = view(rec, 0)
        assert not {"4-4", "5-1", "6-3"} & set(str(theirs).split("'"))
        refused(record("draw", [deal(hands, bones, opener=0, play="0:6-6 1:p")], players=2),
                "must_play")
        ok(record("draw", [deal(hands, bones, opener=0, play="0:6-6 1:6-3A")], players=2))
        refused(record("draw", [deal(hands, bones, opener=0, play="0:6-6 1:6-3")], players=2),
                "end_required")

    def test_a_seat_that_drains_the_boneyard_without_a_fit_passes(self):
        hands = ["6-6 6-5 6-4 6-3 6-2 6-1 6-0", "0-0 1-1 2-0 2-2 3-0 4-1 5-0"]
        bones = "5-5 4-4 3-3 1-0 2-1 3-1 3-2 4-0 4-2 4-3 5-1 5-2 5-3 5-4"
        rec = record("draw", [deal(hands, bones, opener=0, play="0:6-6")], players=2)
        out = ok(rec)
        assert out["rounds"][0]["draws"] == [{"seat": 1, "count": 14, "before_move": 1}]
        assert out["current"]["legal"] == [{"pass": True}]
        assert out["current"]["boneyard_count"] == 0
        rec = record("draw", [deal(hands, bones, opener=0, play="0:6-6 1:p 0:6-5A")], players=2)
        out = ok(rec)
        assert out["current"]["passed_on"] == {"1": [6]}
        assert out["current"]["turn"] == 1 and out["current"]["ends"] == {"A": 5, "B": 6}

    def test_block_never_draws(self):
        rnd = deal(TWO_BLOCK_HANDS, TWO_BLOCK_BONES, opener=0, play="0:6-6")
        out = ok(record("block", [rnd], players=2))
        assert out["current"]["legal"] == [{"pass": True}]
        assert out["current"]["boneyard_count"] == 14
        assert out["rounds"][0]["draws"] == []


class TestScoring:
    def test_partners_blocked_fewer_pips_scores_the_other_teams(self):
        out = ok(record("partners", [BLOCK_WIN]))
        assert result(out) == {"reason": "blocked", "winner": {"team": 0}, "tie": False,
                               "pips": [29, 21, 12, 28], "points": 49}
        assert out["scores"] == [49, 0]

    def test_partners_exact_tie_goes_to_the_team_that_placed_the_last_tile(self):
        out = ok(record("partners", [BLOCK_TIE]))
        assert result(out)["winner"] == {"team": 1}  # seat 1 placed 5-6 last
        assert result(out)["tie"] is True and result(out)["points"] == 45
        out = ok(record("partners", [rotate(BLOCK_TIE, 1)], ))
        # Rotated, seat 2 places the last tile and its team wins; seat 1 held 6-6 and opened.
        assert result(out)["winner"] == {"team": 0}

    def test_partners_66_exact_tie_the_closing_team_loses(self):
        out = ok(record("partners-66", [BLOCK_TIE]))
        assert result(out)["winner"] == {"team": 0} and result(out)["tie"]
        assert out["scores"] == [45, 0]

    @pytest.mark.parametrize(("tie", "winner", "points", "next_opener"), [
        ("closer_loses", {"team": 0}, 90, 1),
        ("opener_loses", {"team": 1}, 90, 1),
        ("replay", None, 0, 0),
    ])
    def test_pairs_series_tie_rules(self, tie, winner, points, next_opener):
        out = ok(record("pairs-series", [BLOCK_TIE | {"opener": 0}], tie=tie))
        assert result(out)["winner"] == winner
        assert result(out)["tie"] is True
        assert result(out)["points"] == points
        assert out["match"]["next_opener"] == next_opener

    def test_pairs_series_scores_every_pip_left(self):
        out = ok(record("pairs-series", [BLOCK_WIN | {"opener": 0}]))
        assert result(out)["winner"] == {"team": 0} and result(out)["points"] == 90

    def test_tranca_blocked_scores_all_pips_and_ties_are_tablas(self):
        out = ok(record("tranca", [BLOCK_WIN], players=4))
        assert result(out)["winner"] == {"team": 0} and result(out)["points"] == 90
        out = ok(record("tranca", [BLOCK_TIE], players=4))
        assert result(out)["winner"] is None and result(out)["tie"] and out["scores"] == [0, 0]

    def test_block_blocked_scores_others_minus_own(self):
        rnd = deal(TWO_BLOCK_HANDS, TWO_BLOCK_BONES, opener=0, play="0:6-6 1:p 0:p")
        out = ok(record("block", [rnd], players=2))
        assert result(out) == {"reason": "blocked", "winner": {"seat": 1}, "tie": False,
                               "pips": [28, 21], "points": 7}
        assert out["scores"] == [0, 7]

    def test_block_domino_scores_the_others_pips(self):
        rnd = deal(TWO_DOMINO_HANDS, opener=0, play=TWO_DOMINO_PLAY)
        out = ok(record("block", [rnd], players=2))
        assert result(out) == {"reason": "domino", "winner": {"seat": 0}, "tie": False,
                               "pips": [0, 15], "points": 15}
        refused(record("block", [deal(TWO_DOMINO_HANDS, opener=0,
                                      play=TWO_DOMINO_PLAY + " 1:p")], players=2), "round_over")

    def test_tranca_domino_scores_opponents_pips(self):
        # tranca, 2 players, 7 tiles: the 6-6 holder opens; seat 1 draws when stuck, so give
        # the boneyard only tiles of 0..3 that never fit until seat 0 is out.
        bones = "3-1 3-2 3-3 4-0 4-1 4-2 5-0 5-1 5-2 5-3 6-0 6-1 6-2 6-3"
        rnd = deal(TWO_DOMINO_HANDS, bones, play="0:6-6")
        out = ok(record("tranca", [rnd], players=2))
        # seat 1 cannot follow 6: it draws until 6-0 (the 11th tile) fits.
        assert out["rounds"][0]["draws"] == [{"seat": 1, "count": 11, "before_move": 1}]


class TestAllFives:
    HANDS = ["5-5 5-3 3-3 6-0 6-1 1-0 1-1", "5-0 5-2 5-4 6-6 2-2 4-0 4-1"]

    def rec(self, play: str) -> dict:
        return record("all-fives", [deal(self.HANDS, opener=0, play=play)], players=2)

    def test_spinner_alone_counts_once_and_scores(self):
        out = ok(self.rec("0:5-5"))
        assert out["rounds"][0]["fives"] == [10, 0]
        assert out["scores"] == [10, 0]

    def test_spinner_opens_c_and_d_once_both_long_sides_are_touched(self):
        out = ok(self.rec("0:5-5 1:5-0A"))
        assert out["rounds"][0]["fives"] == [10, 10]  # 0 + the spinner's 10
        assert out["current"]["ends"] == {"A": 0, "B": 5}
        out = ok(self.rec("0:5-5 1:5-0A 0:5-3B"))
        assert out["current"]["ends"] == {"A": 0, "B": 3, "C": 5, "D": 5}
        assert out["rounds"][0]["fives"] == [10, 10]  # 0 + 3, untouched C and D count nothing
        legal = out["current"]["legal"]
        assert {"play": "5-2", "end": "C"} in legal and {"play": "5-2", "end": "D"} in legal
        assert {"play": "4-0", "end": "A"} in legal
        refused(self.rec("0:5-5 1:5-0A 0:5-3B 1:5-2"), "end_required")
        out = ok(self.rec("0:5-5 1:5-0A 0:5-3B 1:5-2C"))
        assert out["rounds"][0]["fives"] == [10, 15]  # 0 + 3 + 2
        out = ok(self.rec("0:5-5 1:5-0A 0:5-3B 1:5-2C 0:3-3B"))
        assert out["rounds"][0]["fives"] == [10, 15]  # 0 + 6 + 2: a later double counts twice
        out = ok(self.rec("0:5-5 1:5-0A 0:5-3B 1:5-2C 0:3-3B 1:5-4D"))
        assert out["rounds"][0]["fives"] == [10, 15]  # 0 + 6 + 2 + 4 = 12
        out = ok(self.rec("0:5-5 1:5-0A 0:5-3B 1:5-2C 0:3-3B 1:5-4D 0:6-0A"))
        assert out["rounds"][0]["fives"] == [10, 15]  # 6 + 6 + 2 + 4 = 18
        out = ok(self.rec("0:5-5 1:5-0A 0:5-3B 1:5-2C 0:3-3B 1:5-4D 0:6-0A 1:6-6A"))
        assert out["rounds"][0]["fives"] == [10, 15]  # 12 + 6 + 2 + 4 = 24
        out = ok(self.rec("0:5-5 1:5-0A 0:5-3B 1:5-2C 0:3-3B 1:5-4D 0:6-0A 1:2-2C"))
        assert out["rounds"][0]["fives"] == [10, 15 + 20]  # 6 + 6 + 4 + 4: a double on C

    def test_later_doubles_open_nothing(self):
        hands = ["6-4 4-4 6-0 1-0 1-1 2-1 3-1", "4-3 6-6 0-0 2-0 3-0 5-1 5-0"]
        rec = record("all-fives", [deal(hands, opener=0, play="0:6-4 1:4-3B 0:6-0A 1:0-0A")],
                     players=2)
        out = ok(rec)
        assert out["rounds"][0]["fives"] == [10, 0]  # 6-4 alone: 10; then 9, 3, 0+3 = 3
        assert out["current"]["ends"] == {"A": 0, "B": 3}


def test_spinner_played_after_the_first_tile():
    hands = ["6-5 5-3 1-0 1-1 2-1 3-1 0-0", "5-5 6-2 4-0 2-0 3-0 4-1 6-6"]
    rec = record("all-fives", [deal(hands, opener=0, play="0:6-5 1:5-5B")], players=2)
    out = ok(rec)
    assert out["rounds"][0]["fives"] == [0, 0]  # 6 + 10 = 16
    assert out["current"]["ends"] == {"A": 6, "B": 5}
    out = ok(record("all-fives", [deal(hands, opener=0, play="0:6-5 1:5-5B 0:5-3B")], players=2))
    assert out["current"]["ends"] == {"A": 6, "B": 3, "C": 5, "D": 5}
    assert out["rounds"][0]["fives"] == [0, 0]  # 6 + 3 = 9
    out = ok(record("all-fives", [deal(hands, opener=0, play="0:6-5 1:5-5B 0:5-3B 1:6-2A")],
                    players=2))
    assert out["rounds"][0]["fives"] == [0, 5]  # 2 + 3 = 5
