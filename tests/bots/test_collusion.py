"""The collusion check's pure core (apps/bots/collusion.py): the knowing view holds the partner's
hand and nothing else, a record's moves are judged from both views with the counts adding up,
moves a bot or the table made are not the person's, and the statistic flags a colluder's rate
but (within its stated error rate) not an honest one. The benchmark's small version runs too."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from apps.bots import collusion, search
from apps.bots.state import Public
from apps.rules.engine import Match
from apps.rules.presets import make_rules
from apps.rules.tiles import parse_tile
from apps.rules.view import seat_view
from tools import bench_collusion, collusion_fit

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
        # Every pick of one of the two moves is kept in its class, and nothing else is.
        assert sum(k for k, _o in c["cells"].values()) == c["knowing"]
        assert sum(o for _k, o in c["cells"].values()) == c["own"]
    assert sum(c["judged"] for c in out["counts"].values()) > 10
    assert out["telling"], "a random pair meets telling positions"
    for t in out["telling"]:
        assert t["seat"] in (0, 2) and t["own"] != t["knowing"]
        assert t["own_gap"] >= collusion.OWN_GAP and t["knowing_gap"] >= 0
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
    assert collusion.judge_record(rec) == {"ok": True, "version": 2, "counts": {},
                                           "telling": []}
    bad = {"rules": {"preset": "nothing"}, "players": 4, "rounds": []}
    assert collusion.judge_record(bad)["ok"] is False


# -- the statistic ----------------------------------------------------------------------------

def counts(knowing: int, own: int, strength: float = 0.7, key: str = "4:6") -> collusion.Counts:
    return collusion.Counts(judged=400, plain=200, plain_agree=round(200 * strength),
                            telling=knowing + own, knowing=knowing, own=own,
                            cells={key: [knowing, own]})


def test_counts_add_their_classes_and_survive_a_round_trip():
    a = collusion.Counts(judged=3, telling=2, knowing=1, own=1, cells={"1:0": [1, 0],
                                                                       "8:6": [0, 1]})
    b = collusion.Counts(judged=2, telling=1, own=1, cells={"8:6": [0, 1]})
    total = collusion.Counts().add(a).add(b)
    assert total.judged == 5 and total.cells == {"1:0": [1, 0], "8:6": [0, 2]}
    assert a.cells == {"1:0": [1, 0], "8:6": [0, 1]}  # adding never touches the addend
    assert collusion.Counts.of(total.as_dict()) == total
    assert collusion.Counts.of({"judged": 4}) == collusion.Counts(judged=4)  # before classes
    assert collusion.cell(1.0, 0.0) == "1:0" and collusion.cell(5.2, 7.9) == "4:6"
    assert collusion.cell(30.0, 2.9) == "8:0"


@pytest.mark.parametrize("own_class", collusion.OWN_CLASSES)
def test_the_honest_rate_falls_with_strength_and_stays_in_its_bounds(own_class):
    rates = [collusion.honest_rate(s / 20, own_class) for s in range(21)]
    assert all(a >= b for a, b in zip(rates, rates[1:], strict=False))
    low, high = collusion.RATE_BOUNDS
    assert all(low <= r <= high for r in rates)
    assert collusion.strength(collusion.Counts()) == 0.5
    for knowing_class in collusion.KNOWING_CLASSES:
        p0 = collusion.honest_rate(0.7, own_class)
        assert collusion.colluder_rate(p0, knowing_class) >= p0 + collusion.MIN_LIFT


def test_an_honest_player_clearer_about_their_own_move_rarely_picks_the_other():
    """The fitted classes order as the game does: the more the own view prefers its move, the
    less often an honest strong player picks the partner's hand's move."""
    rates = [collusion.honest_rate(0.8, c) for c in collusion.OWN_CLASSES]
    assert rates == sorted(rates, reverse=True) and rates[0] > rates[-1]


def test_the_verdict_flags_a_colluders_rate_and_not_an_honest_one():
    p0 = collusion.honest_rate(0.7, 4.0)
    n = 200
    k = round(n * (p0 + 0.25))
    colluder = collusion.verdict(counts(k, n - k))
    assert colluder["flagged"] and colluder["llr"] >= collusion.threshold()
    honest = collusion.verdict(counts(round(n * p0), n - round(n * p0)))
    assert not honest["flagged"] and honest["llr"] < 0
    assert honest["p0"] == pytest.approx(p0, abs=0.001)
    few = collusion.verdict(counts(collusion.MIN_PICKS - 1, 0))
    assert not few["flagged"]  # too few picks, whatever the ratio
    assert collusion.threshold() == pytest.approx(math.log(1 / collusion.ALPHA))
    # The same picks weigh more where honest players rarely pick the other move.
    clear = collusion.verdict(counts(30, 30, key="8:6"))["llr"]
    vague = collusion.verdict(counts(30, 30, key="1:0"))["llr"]
    assert clear > vague


def test_honest_play_crosses_the_threshold_no_more_often_than_alpha():
    """Ville's inequality made concrete: honest picks at each class's honest rate, the classes
    mixed as in play, looked at after every pick, are flagged at most ALPHA of the time."""
    rng = random.Random(7)
    s = 0.7
    steps = {}
    for own_class in collusion.OWN_CLASSES:
        for knowing_class in collusion.KNOWING_CLASSES:
            p0 = collusion.honest_rate(s, own_class)
            p1 = collusion.colluder_rate(p0, knowing_class)
            steps[own_class, knowing_class] = (p0, math.log(p1 / p0),
                                               math.log((1 - p1) / (1 - p0)))
    keys = list(steps)
    limit = collusion.threshold()
    runs, picks, flagged = 2000, 400, 0
    for _ in range(runs):
        llr = 0.0
        for k in range(picks):
            p0, up, down = steps[keys[rng.randrange(len(keys))]]
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


# -- fitting the honest rates (tools/collusion_fit.py) ----------------------------------------

def synthetic_pair(kind: str, seed: int, strength: float, rates: dict, picks: int = 300) -> dict:
    """A benchmark result whose judged positions pick the knowing move at ``rates[class]``."""
    rng = random.Random(f"{kind}:{seed}")
    match = []
    for own_class, rate in rates.items():
        for _ in range(picks):
            picked = "knowing" if rng.random() < rate else "own"
            match.append([0, 1, own_class + 0.5, 7.0, 0.0, picked])
    for _ in range(picks):  # plain positions: the strength
        match.append([0, 0, 0.0, 0.0, 3.0, "own" if rng.random() < strength else "other"])
    return {"pair": kind, "opponents": "easy", "seed": seed, "positions": [match]}


def test_the_fitted_rates_cover_every_honest_combination():
    levels = {"easy": (0.4, 0.5), "medium": (0.6, 0.4), "expert": (0.75, 0.3),
              "master": (0.85, 0.2)}
    results = [synthetic_pair(kind, seed, s, {c: r * (1.2 if c == 1.0 else 1.0)
                                              for c in collusion.OWN_CLASSES})
               for kind, (s, r) in levels.items() for seed in range(4)]
    table = collusion_fit.fit(results)
    assert set(table) == set(collusion.OWN_CLASSES)
    for s, r in levels.values():
        for c in collusion.OWN_CLASSES:
            assert collusion.honest_rate(s, c, table) >= r * (1.2 if c == 1.0 else 1.0) - 0.04
    # ... and an honest pair is then not flagged, a peeking one is.
    judged = {r["pair"]: r for r in collusion_fit.evaluate(results, table)}
    assert not any(r["verdict"]["flagged"] for r in judged.values())
    peeker = synthetic_pair("peek3", 99, 0.75, {c: 0.5 for c in collusion.OWN_CLASSES})
    assert collusion_fit.evaluate([peeker], table)[0]["verdict"]["flagged"]


def test_cross_fitting_judges_each_pair_by_rates_fitted_without_it():
    results = [synthetic_pair("expert", seed, 0.75, {c: 0.3 for c in collusion.OWN_CLASSES})
               for seed in range(6)]
    results.append(synthetic_pair("medium", 6, 0.6, {c: 0.45 for c in collusion.OWN_CLASSES}))
    results.append(synthetic_pair("medium", 7, 0.6, {c: 0.45 for c in collusion.OWN_CLASSES}))
    judged, tables = collusion_fit.crossfit(results)
    assert len(judged) == len(results)
    for f in (0, 1):
        assert tables[f] == collusion_fit.fit([r for r in results if r["seed"] % 2 != f])


def test_the_benchmarks_run_gives_the_sites_rates_and_meets_the_figures():
    """The run in docs/collusion.md, kept (every judged position of its 240 pairs): fitting it
    again gives the site's honest rates, and the figures the docs state still hold for today's
    test. Changing a constant of the test without running the benchmark again fails here."""
    results = bench_collusion.load(str(Path(__file__).parent / "data"
                                       / "collusion-bench-100.jsonl.gz"))
    assert len(results) == 240
    assert collusion_fit.fit(results) == collusion.HONEST_RATE

    def flagged(rows: list[dict], kinds: tuple[str, ...]) -> tuple[int, int]:
        mine = [r for r in rows if r["pair"] in kinds]
        return sum(r["verdict"]["flagged"] for r in mine), len(mine)

    for rows in (collusion_fit.evaluate(results), collusion_fit.crossfit(results)[0]):
        assert flagged(rows, ("peek",)) == (20, 20)
        assert flagged(rows, ("peek3",)) == (20, 20)
        assert flagged(rows, collusion_fit.HONEST) == (0, 200)
