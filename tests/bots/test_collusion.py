"""The collusion check's pure core (apps/bots/collusion.py): the knowing view holds the partner's
hand and nothing else, a record's moves are judged from both views with the counts adding up,
moves a bot or the table made are not the person's, and the statistic flags a colluder's rate
but (within its stated error rate) not an honest one. The benchmark's small version runs too."""

from __future__ import annotations

import math
import random

import pytest

from apps.bots import collusion, search
from apps.bots.state import Public
from apps.rules.engine import Match
from apps.rules.presets import make_rules
from apps.rules.tiles import parse_tile
from apps.rules.view import seat_view
from tools import bench_collusion

#: A small evaluation: these tests check the plumbing, not the evaluation's strength.
SMALL = search.Budget(playouts=0, min_deals=12, blocking=True, infer=0.7)


@pytest.fixture(scope="module")
def record() -> dict:
    """A partners match of random moves (easy bots, fixed seed): cheap to play."""
    return bench_collusion.play_match("easy", "easy", 5, target=50)


def test_the_knowing_view_holds_the_partners_hand_and_nothing_else(record):
    rules = make_rules(record["rules"], 4)
    match = Match(rules)
    raw = record["rounds"][0]
    hands = [[parse_tile(t)[0] for t in h] for h in raw["hands"]]
    rnd = match.start_round(hands, [], raw.get("opener"))
    seat = rnd.turn
    mate = collusion.partner(rules, seat)
    view = seat_view(match, seat)
    own = Public(view)
    know = collusion.knowing_public(view, mate, hands[mate])
    assert set(know.unknown) == set(own.unknown) - set(hands[mate])
    rng = random.Random(1)
    for _ in range(50):
        dealt, _bones = know.sample(rng)
        assert sorted(dealt[mate]) == sorted(hands[mate])
        assert sorted(dealt[seat]) == sorted(hands[seat])
        opponents = dealt[(seat + 1) % 4] + dealt[(seat + 3) % 4]
        assert not set(opponents) & set(hands[mate])
        assert sorted(opponents) == sorted(know.unknown)
    # The plain view still samples the partner's hand like any other.
    assert any(sorted(own.sample(rng)[0][mate]) != sorted(hands[mate]) for _ in range(10))


def test_a_record_is_judged_from_both_views_and_the_counts_add_up(record):
    out = collusion.judge_record(record, seats=[0, 2], seed=3, budget=SMALL)
    assert out["ok"] and set(out["counts"]) == {"0", "2"}
    for c in out["counts"].values():
        assert c["telling"] == c["knowing"] + c["own"] + c["other"]
        assert c["judged"] >= c["telling"] + c["plain"] and c["plain"] >= c["plain_agree"]
    assert sum(c["judged"] for c in out["counts"].values()) > 10
    assert out["telling"], "a random pair meets telling positions"
    for t in out["telling"]:
        assert t["seat"] in (0, 2) and t["own"] != t["knowing"]
        assert t["knowing_gap"] >= collusion.KNOWING_GAP and t["own_gap"] >= collusion.OWN_GAP
        played = record["rounds"][t["round"] - 1]["moves"][t["index"]]
        assert t["played"] == {k: played[k] for k in ("play", "end", "pass") if k in played}
    # The same seed, the same verdict.
    assert collusion.judge_record(record, seats=[0, 2], seed=3, budget=SMALL) == out


def test_moves_made_for_a_person_are_not_theirs(record):
    marked = {**record, "rounds": [
        {**r, "moves": [{**m, "by": "bot"} if m["seat"] == 0 else m for m in r["moves"]]}
        for r in record["rounds"]]}
    out = collusion.judge_record(marked, seats=[0, 2], seed=3, budget=SMALL)
    assert out["counts"]["0"]["judged"] == 0 and out["counts"]["2"]["judged"] > 0


def test_a_table_without_partners_has_nothing_to_judge():
    rec = {"rules": {"preset": "draw"}, "players": 2, "rounds": []}
    assert collusion.judge_record(rec) == {"ok": True, "version": 1, "counts": {},
                                           "telling": []}
    bad = {"rules": {"preset": "nothing"}, "players": 4, "rounds": []}
    assert collusion.judge_record(bad)["ok"] is False


# -- the statistic ----------------------------------------------------------------------------

def counts(knowing: int, own: int, strength: float = 0.7) -> collusion.Counts:
    return collusion.Counts(judged=400, plain=200, plain_agree=round(200 * strength),
                            telling=knowing + own, knowing=knowing, own=own)


def test_the_honest_rate_falls_with_strength_and_stays_in_its_bounds():
    rates = [collusion.honest_rate(s / 20) for s in range(21)]
    assert all(a >= b for a, b in zip(rates, rates[1:], strict=False))
    assert rates[0] == collusion.HONEST_RATE[0][1]
    assert rates[-1] == collusion.HONEST_RATE[-1][1]
    assert collusion.strength(collusion.Counts()) == 0.5


def test_the_verdict_flags_a_colluders_rate_and_not_an_honest_one():
    p0 = collusion.honest_rate(0.7)
    n = 200
    colluder = collusion.verdict(counts(round(n * (p0 + 0.25)), n - round(n * (p0 + 0.25))))
    assert colluder["flagged"] and colluder["llr"] >= collusion.threshold()
    honest = collusion.verdict(counts(round(n * p0), n - round(n * p0)))
    assert not honest["flagged"] and honest["llr"] < 0
    few = collusion.verdict(counts(collusion.MIN_PICKS - 1, 0))
    assert not few["flagged"]  # too few picks, whatever the ratio
    assert collusion.threshold() == pytest.approx(math.log(1 / collusion.ALPHA))


def test_honest_play_crosses_the_threshold_no_more_often_than_alpha():
    """Ville's inequality made concrete: honest sequences at the honest rate, looked at after
    every pick, are flagged at most ALPHA of the time."""
    rng = random.Random(7)
    s = 0.7
    p0 = collusion.honest_rate(s)
    p1 = min(0.95, p0 + collusion.LIFT)
    up, down = math.log(p1 / p0), math.log((1 - p1) / (1 - p0))
    limit = collusion.threshold()
    runs, picks, flagged = 2000, 300, 0
    for _ in range(runs):
        llr = 0.0
        for k in range(picks):
            llr += up if rng.random() < p0 else down
            if llr >= limit and k + 1 >= collusion.MIN_PICKS:
                flagged += 1
                break
    assert flagged / runs <= collusion.ALPHA + 0.005


# -- the benchmark, small ----------------------------------------------------------------------

def test_the_benchmark_tells_a_peeking_pair_from_an_honest_one():
    """Two pairs of the benchmark on the same fixed seeds, two matches each: the always-peeking
    pair picks the partner's hand's move at telling positions more often than an honest expert
    pair. (The figures need the full run: ``python -m tools.bench_collusion``.)"""
    results = bench_collusion.run([("peek", "easy", 11, 2, 50), ("expert", "easy", 11, 2, 50)])
    by = {r["pair"]: r for r in results}
    assert by["peek"]["verdict"]["rate"] > by["expert"]["verdict"]["rate"]
    rows = {row["pair"]: row for row in bench_collusion.table(results)}
    assert rows["peek"]["pairs"] == 1 and rows["expert"]["flagged"] == 0
