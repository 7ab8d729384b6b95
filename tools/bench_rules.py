"""``python -m tools.bench_rules``: random rounds per second for every preset, on one core.

Next to it, in the same process, the PyPI ``dominoes`` library (a test dependency) plays random
2v2 hands with all 28 tiles dealt, the setting comparable to our ``partners`` preset; the ratio
between the two is the figure the README and docs/performance.md quote.
"""

from __future__ import annotations

import argparse
import random
import time

from apps.rules.engine import Match, Round, deal
from apps.rules.presets import make_rules

CASES = [("partners", 4), ("partners-66", 4), ("pairs-series", 4), ("draw", 2), ("draw", 4),
         ("block", 3), ("all-fives", 2), ("all-fives", 4), ("tranca", 2), ("tranca", 4)]


def random_round(rules, rng: random.Random) -> Round:
    """Deal and play one round, every move chosen uniformly among the legal ones."""
    hands, boneyard, random_opener = deal(rules, rng)
    opener, forced = Match(rules).opener_for(hands)
    rnd = Round(rules, hands, boneyard, random_opener if opener is None else opener, forced)
    choice = rng.choice
    while rnd.result is None:
        rnd.play(*choice(rnd.legal()))
    return rnd


def rounds_per_second(rules, seconds: float, seed: int = 1) -> float:
    rng = random.Random(seed)
    done = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(50):
            random_round(rules, rng)
        done += 50
        now = time.perf_counter()
        if now >= deadline:
            return done / (now - start)


def library_hands_per_second(seconds: float, seed: int = 1) -> float | None:
    """Random 2v2 hands of the ``dominoes`` library, as its own random players play them."""
    try:
        import dominoes
    except ImportError:
        return None
    random.seed(seed)  # the library shuffles with the global random module
    done = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(50):
            game = dominoes.Game.new()
            while game.result is None:
                game.make_move(*random.choice(game.valid_moves))
        done += 50
        now = time.perf_counter()
        if now >= deadline:
            return done / (now - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.bench_rules")
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    args = parser.parse_args(argv)
    library = library_hands_per_second(args.seconds)
    ours = {}
    print(f"{'preset':<14} {'players':>7} {'rounds/s':>10}")
    for preset, players in CASES:
        rules = make_rules({"preset": preset}, players)
        ours[(preset, players)] = rate = rounds_per_second(rules, args.seconds)
        print(f"{preset:<14} {players:>7} {rate:>10,.0f}")
    if library is None:
        print("dominoes library not installed: no comparison")
        return
    partners = ours[("partners", 4)]
    print(f"{'dominoes lib':<14} {4:>7} {library:>10,.0f}   (random 2v2 hands, all 28 dealt)")
    print(f"ratio partners / dominoes library: {partners / library:.2f}x")


if __name__ == "__main__":
    main()
