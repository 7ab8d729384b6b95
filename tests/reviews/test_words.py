"""The review in sentences (apps.reviews.words): every reason code of docs/review.md has its own
sentence in each language, with its tile, numbers and seat in words; a round's summary per seat."""

from __future__ import annotations

import pytest
from django.utils import translation

from apps.reviews import words

NAMES = ["ana", "bea", "caio", "dani"]
#: Every code of docs/review.md, "Reasons", with parameters as apps.bots.review writes them.
REASONS = [
    {"code": "fives_missed", "points": 10},
    {"code": "lock_missed", "seat": 1, "numbers": [6, 2]},
    {"code": "pass_told", "seat": 3, "numbers": [4]},
    {"code": "wrong_end", "tile": "2-1", "end": "B"},
    {"code": "double_held", "tile": "6-6"},
    {"code": "heavy_kept", "tile": "6-5", "pips": 4},
]


@pytest.mark.parametrize("language", ["en", "es", "pt-br"])
def test_every_reason_has_its_own_sentence(language):
    with translation.override(language):
        fallback = words.no_reason()
        said = {r["code"]: words.reason(r["code"], r, NAMES) for r in REASONS}
    assert len(set(said.values())) == len(REASONS) and fallback not in said.values()
    six = {"en": "six", "es": "seis", "pt-br": "seis"}[language]
    assert f"{six}-{six}" in said["double_held"]
    assert "bea" in said["lock_missed"] and six in said["lock_missed"]
    assert "dani" in said["pass_told"]
    assert "10" in said["fives_missed"] and "4" in said["heavy_kept"]


def test_numbers_and_counts_read_as_sentences():
    with translation.override("en"):
        assert words.reason("lock_missed", {"seat": 1, "numbers": [6, 2, 0]}, NAMES).count(
            "six, two or blank") == 1
        assert words.reason("unknown", {}, NAMES) == words.no_reason()
        assert words.summary("ana", {"judged": 0}) == ["ana had no choice to make this round."]
        assert words.summary("ana", {"judged": 1, "loss": 0.4, "mistakes": 0,
                                     "inaccuracies": 0, "reasons": []}) == [
            "ana: no costly move in 1 choice (0.4 points given up in all)."]
        lines = words.summary("bea", {"judged": 6, "loss": 21.25, "mistakes": 2,
                                      "inaccuracies": 1,
                                      "reasons": [{"code": "double_held", "count": 2},
                                                  {"code": "pass_told", "count": 1}]})
        assert lines == [
            "bea gave up 21.2 points in 6 choices: 2 mistakes, 1 inaccuracy.",
            "Where the points went: a double held too long (2 times); a number the next "
            "opponent had passed on, covered instead of left showing (1 time)."]
    with translation.override("es"):
        assert words.summary("bea", {"judged": 2, "loss": 9.5, "mistakes": 1,
                                     "inaccuracies": 0, "reasons": []}) == [
            "bea cedió 9,5 puntos en 2 decisiones: 1 error."]
        # A blunder, counted first (reviews stored before blunders have no count: none).
        assert words.summary("bea", {"judged": 3, "loss": 29.0, "blunders": 1, "mistakes": 1,
                                     "inaccuracies": 0, "reasons": []}) == [
            "bea cedió 29,0 puntos en 3 decisiones: 1 error grave, 1 error."]


def test_a_marked_move_without_a_reason_still_says_why():
    result = {"rounds": [{"number": 1, "moves": [
        {"index": 0, "seat": 0, "mark": "mistake", "reasons": []},
        {"index": 1, "seat": 1, "mark": None, "reasons": []},
        {"index": 2, "seat": 2, "mark": "inaccuracy", "reasons": [REASONS[4]]}],
        "summary": {"0": {"judged": 0}}}]}
    with translation.override("en"):
        out = words.for_result(result, [NAMES])
    assert out["moves"] == {"0:0": [words.no_reason()],
                            "0:2": [words.reason("double_held", REASONS[4], NAMES)]}
    assert out["summary"] == {"0": {"0": ["ana had no choice to make this round."]}}
