"""``python -m tools.bench_review``: how long the review of a match takes (apps/bots/review.py).

Bots play a few seeded 4-player matches of exactly three rounds (target 500, so no match ends
sooner), each exported as a harness record; then every seat of every match is reviewed in this
one process, with the review's own budget. Printed: moves judged (forced ones included), the
seconds per match and in all, the time per move (p50, p99, max; the time between two progress
calls), and the marks each bot level earned, which is a rough check of the thresholds: the
stronger the level, the fewer marks it should get.
"""

from __future__ import annotations

import argparse
import random
import time

from apps.bots import accuracy, review
from apps.rules.engine import Match, deal
from apps.rules.presets import make_rules
from apps.rules.tiles import NAMES
from tools.arena import bot_chooser, pct


def play_record(preset: str, levels: list[str], seed: int, rounds: int = 3, players: int = 4,
                target: int | None = 500) -> dict:
    """A record of ``rounds`` rounds played by bots, seat ``s`` at ``levels[s % len(levels)]``
    (``target`` None: the preset's own, and fewer rounds if the match ends sooner)."""
    options: dict = {"preset": preset}
    if target is not None:
        options["target"] = target
    rules = make_rules(options, players)
    match = Match(rules)
    rng = random.Random(seed)
    choosers = [bot_chooser(levels[s % len(levels)]) for s in range(players)]
    bot_rngs = [random.Random(seed * 10 + s) for s in range(players)]
    out = []
    for _ in range(rounds):
        if match.over:
            break
        hands, bones, opener = deal(rules, rng)
        derived, _ = match.opener_for(hands)
        rnd = match.start_round(hands, bones, opener if derived is None else None)
        while rnd.result is None:
            seat = rnd.turn
            match.play(*choosers[seat](match, seat, bot_rngs[seat]))
        out.append({"hands": [[NAMES[t] for t in h] for h in hands],
                    "boneyard": [NAMES[t] for t in bones], "opener": rnd.opener,
                    "moves": [dict(m) for m in rnd.public_moves]})
    return {"rules": rules.options(), "players": players, "rounds": out}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.bench_review")
    parser.add_argument("--matches", type=int, default=3)
    parser.add_argument("--preset", default="partners",
                        help="a 4-player preset: partners, partners-66 or pairs-series")
    parser.add_argument("--levels", default="master,easy,expert,medium",
                        help="bot level of seats 0-3 (a shorter list repeats)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--deals", type=int, default=None,
                        help="deals per candidate instead of the review budget's")
    args = parser.parse_args(argv)
    levels = args.levels.split(",")
    budget = review.review_budget(args.deals)
    print(f"review budget: {budget}")

    per_move: list[float] = []
    judged_times: list[float] = []
    marks: dict[str, list[int]] = {}
    total_moves = 0
    total_seconds = 0.0
    for m in range(args.matches):
        record = play_record(args.preset, levels, args.seed * 1000 + m)
        stamps = [time.perf_counter()]

        def tick(done: int, total: int, stamps: list[float] = stamps) -> None:
            stamps.append(time.perf_counter())

        result = review.review_record(record, seed=m, progress=tick, budget=budget)
        assert result["ok"], result
        spent = stamps[-1] - stamps[0]
        gaps = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
        entries = [e for r in result["rounds"] for e in r["moves"]]
        per_move += gaps
        judged_times += [g for g, e in zip(gaps, entries, strict=True) if not e["forced"]]
        total_moves += len(entries)
        total_seconds += spent
        for e in entries:
            tally = marks.setdefault(levels[e["seat"] % len(levels)], [0, 0, 0, 0, 0, []])
            tally[0] += not e["forced"]
            tally[1] += e["mark"] == "inaccuracy"
            tally[2] += e["mark"] == "mistake"
            tally[3] += e["mark"] == "blunder"
            tally[4] += e["loss"]
            if not e["forced"]:
                tally[5].append(e["loss"])
        print(f"match {m + 1}: {len(entries)} moves ({sum(not e['forced'] for e in entries)} "
              f"with a choice) reviewed in {spent:.1f} s")
    print(f"{args.matches} matches ({args.preset}, 3 rounds, all 4 seats): {total_moves} moves "
          f"in {total_seconds:.1f} s, {total_seconds / args.matches:.1f} s per match")
    print(f"per move: p50 {1000 * pct(per_move, 0.5):.0f} ms, p99 {1000 * pct(per_move, 0.99):.0f}"
          f" ms, max {1000 * max(per_move):.0f} ms; moves with a choice: p50 "
          f"{1000 * pct(judged_times, 0.5):.0f} ms, p99 {1000 * pct(judged_times, 0.99):.0f} ms")
    # Accuracy over all the level's judged moves (apps/bots/accuracy.py), as one "match".
    print(f"{'level':<8} {'judged':>6} {'inacc.':>6} {'mistakes':>8} {'blunders':>8} "
          f"{'loss/move':>9} {'accuracy':>8}")
    for level, (n, inacc, mist, blund, loss, losses) in marks.items():
        acc = accuracy.match_accuracy(losses)
        print(f"{level:<8} {n:>6} {inacc:>6} {mist:>8} {blund:>8} {loss / max(1, n):>9.2f} "
              f"{'-' if acc is None else f'{acc:.1f}':>8}")


if __name__ == "__main__":
    main()
