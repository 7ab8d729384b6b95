"""``python -m tools.bench_collusion``: are peeking partners caught, and honest ones left alone?

Bots play ``partners`` matches (target ``--target``, 100 by default as on the site): the
pair under test in seats 0 and 2, honest opponents in 1 and 3. The pair is one of

- ``peek``: an expert that sees its partner's hand on every move (it searches the knowing view,
  :func:`apps.bots.collusion.knowing_public`);
- ``peek3``: the same on a third of its moves (chosen at random), an honest expert otherwise;
- honest: ``easy``, ``medium``, ``expert``, ``master`` (the bench's cheaper master, below) and
  ``noisy`` (people-like: an expert that slips to a random legal move on ``SLIP`` of its
  moves);

against opponents of every honest level. Each pair plays ``--matches`` matches; then every move
of seats 0 and 2 is judged by :func:`apps.bots.collusion.judge_record` (the site's evaluator),
every judged position is kept (``--json``), and the pair's counts go through
:func:`apps.bots.collusion.verdict` after every match, as on the site. Printed: one row per pair
kind with how many pairs were flagged, with the site's honest rates and cross-fitted
(:mod:`tools.collusion_fit`: each pair judged by rates fitted on the other half's honest
pairs); ``--fit`` prints the rates fitted on all the honest pairs (what
``collusion.HONEST_RATE`` is). ``--replay PATH`` does all that from an earlier ``--json`` file
without playing or judging.

``--agreement N`` also judges the positions of N matches with the review's budget (exact
endings, 450+ deals a candidate) and prints how often it agrees with the cheap evaluator on
which positions tell.

Work is spread over ``--procs`` processes (2 at most on the shared machine). ``--json PATH``
writes every pair's counts. :func:`run` is what the test suite calls, small and seeded.
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import random
import time
from dataclasses import replace

from apps.bots import choose_move, collusion, review, search
from apps.bots.state import Public
from apps.rules.engine import END_NAMES, Match, deal
from apps.rules.presets import make_rules
from apps.rules.tiles import NAMES, parse_tile
from apps.rules.view import seat_view
from tools import collusion_fit
from tools.collusion_fit import HONEST

PEEKERS = ("peek", "peek3")
#: The people-like expert's share of random moves.
SLIP = 0.15
#: The peek3 pair's share of moves played with the partner's hand in view.
PEEK_SHARE = 1 / 3
#: The bench's master: the site's master's search (blocking playouts, halving, inference) on a
#: fifth of its deals and without exact endings, so 200 pairs of 20 matches take minutes.
MASTER = replace(search.BUDGETS["master"], playouts=1500, exact_tiles=0)
#: The bench's expert (and the peekers' search): the site's expert on 300 playouts instead of
#: 1000 (same inference, same rollouts), a third of the cost.
EXPERT = replace(search.BUDGETS["expert"], playouts=300, min_deals=25)


def _move(view: dict, pub: Public, rng: random.Random, budget) -> dict:
    legal = view["legal"]
    if len(legal) == 1:
        return dict(legal[0])
    return dict(legal[search.choose(pub, rng, budget)])


def choose(kind: str, match: Match, seat: int, rng: random.Random) -> dict:
    """The move of a bench player of ``kind`` in ``seat``."""
    view = seat_view(match, seat)
    if kind in ("easy", "medium"):
        return choose_move(view, kind, rng)
    if kind == "master":
        return _move(view, Public(view), rng, MASTER)
    if kind == "noisy" and rng.random() < SLIP:
        return dict(rng.choice(view["legal"]))
    peek = kind == "peek" or (kind == "peek3" and rng.random() < PEEK_SHARE)
    if peek:
        mate = collusion.partner(match.rules, seat)
        pub = collusion.knowing_public(view, mate, list(match.current.hands[mate]))
    else:
        pub = Public(view)
    return _move(view, pub, rng, EXPERT)


def _engine(match: Match, seat: int, move: dict) -> tuple[int, int]:
    rnd = match.current
    if move.get("pass"):
        return rnd.check_pass(seat)
    tile, first, second = parse_tile(move["play"])
    end = END_NAMES.index(move["end"]) if "end" in move else None
    return rnd.check_play(seat, tile, end, flipped=first < second)


def play_match(pair: str, opponents: str, seed: int, target: int = 100) -> dict:
    """One match as a harness record: ``pair`` in seats 0 and 2, ``opponents`` in 1 and 3."""
    rules = make_rules({"preset": "partners", "target": target}, 4)
    match = Match(rules)
    rng = random.Random(f"deal:{seed}")
    kinds = [pair, opponents, pair, opponents]
    rngs = [random.Random(f"bot:{seed}:{s}") for s in range(4)]
    rounds = []
    while not match.over:
        hands, bones, opener = deal(rules, rng)
        derived, _ = match.opener_for(hands)
        rnd = match.start_round(hands, bones, opener if derived is None else None)
        while rnd.result is None:
            seat = rnd.turn
            match.play(*_engine(match, seat, choose(kinds[seat], match, seat, rngs[seat])))
        rounds.append({"hands": [[NAMES[t] for t in h] for h in hands],
                       "boneyard": [NAMES[t] for t in bones], "opener": rnd.opener,
                       "moves": [dict(m) for m in rnd.public_moves]})
    return {"rules": rules.options(), "players": 4, "rounds": rounds}


def judge_pair(task: tuple[str, str, int, int, int]) -> dict:
    """``matches`` matches of one pair, judged. The verdict is looked at after every match, as
    the site does: ``flagged`` is whether any look flagged the pair (``flagged_at``: after
    which match)."""
    pair, opponents, seed, matches, target = task
    counts = collusion.Counts()
    started = time.perf_counter()
    judging = 0.0
    judged = []
    positions = []
    moves = 0
    for m in range(matches):
        record = play_match(pair, opponents, seed * 1000 + m, target)
        moves += sum(len(r["moves"]) for r in record["rounds"])
        t = time.perf_counter()
        out = collusion.judge_record(record, seats=[0, 2], seed=m, entries=True)
        judging += time.perf_counter() - t
        mine = collusion.Counts()
        for c in out["counts"].values():
            mine.add(collusion.Counts.of(c))
        judged.append(mine)
        positions.append(out["entries"])
        counts.add(mine)
    flagged_at = collusion_fit.flagged_at(judged)
    found = collusion.verdict(counts)
    found["flagged"] = flagged_at is not None
    return {"pair": pair, "opponents": opponents, "seed": seed, "counts": counts.as_dict(),
            "per_match": [c.as_dict() for c in judged], "positions": positions,
            "verdict": found, "flagged_at": flagged_at, "moves": moves,
            "seconds": time.perf_counter() - started, "judging": judging}


def tasks(*, honest_seeds: int, peek_seeds: int, matches: int, target: int,
          first_seed: int = 1) -> list[tuple[str, str, int, int, int]]:
    """Every (pair, opponents) combination ``seeds`` times, interleaved round by round so that
    a run stopped early still holds every kind."""
    out = []
    seed = first_seed
    for k in range(max(honest_seeds, peek_seeds)):
        for pair in PEEKERS + HONEST:
            if k >= (peek_seeds if pair in PEEKERS else honest_seeds):
                continue
            for opponents in HONEST:
                out.append((pair, opponents, seed, matches, target))
                seed += 1
    return out


def run(task_list: list, procs: int = 1, progress=None, sink=None) -> list[dict]:
    """Every task judged (in ``procs`` processes when more than one); ``sink(result)`` hears
    of each as it comes (the CLI's ``--json`` lines)."""
    results: list[dict] = []

    def got(r: dict) -> None:
        results.append(r)
        if sink:
            sink(r)
        if progress:
            progress(len(results), len(task_list))

    if procs <= 1:
        for t in task_list:
            got(judge_pair(t))
        return results
    with multiprocessing.get_context("fork").Pool(procs) as pool:
        for r in pool.imap_unordered(judge_pair, task_list):
            got(r)
    return results


def table(results: list[dict]) -> list[dict]:
    """One row per pair kind: pairs, flagged, and the mean counts."""
    rows = []
    for kind in PEEKERS + HONEST:
        mine = [r for r in results if r["pair"] == kind]
        if not mine:
            continue
        flagged = sum(r["verdict"]["flagged"] for r in mine)
        n = len(mine)
        rows.append({
            "pair": kind, "pairs": n, "flagged": flagged, "share": flagged / n,
            "telling": sum(r["counts"]["telling"] for r in mine) / n,
            "rate": _mean([r["verdict"]["rate"] for r in mine if r["verdict"]["rate"]
                           is not None]),
            "strength": _mean([r["verdict"]["strength"] for r in mine]),
            "llr": _mean([r["verdict"]["llr"] for r in mine]),
        })
    return rows


def print_table(results: list[dict]) -> None:
    print("| pair | pairs | flagged | share | telling positions a pair | knowing picks "
          "| strength | mean log LR |")
    print("|---|---|---|---|---|---|---|---|")
    for row in table(results):
        print(f"| {row['pair']} | {row['pairs']} | {row['flagged']} | {100 * row['share']:.1f}% "
              f"| {row['telling']:.1f} | {row['rate']:.2f} | {row['strength']:.2f} "
              f"| {row['llr']:.1f} |")


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def agreement(matches: int, seed: int = 77) -> dict:
    """On the positions of ``matches`` matches (an honest expert pair against medium bots, and
    a peeking one), how often the cheap evaluator and the review's budget agree on whether a
    position tells (and, where both say it does, on the knowing move)."""
    review_budget = replace(review.REVIEW_BUDGET)
    same = both = same_move = total = cheap_tells = dear_tells = 0
    for m in range(matches):
        record = play_match("peek3" if m % 2 else "expert", "medium", seed * 1000 + m)
        for k, i, _raw, view, mate, hand, move in collusion.positions(record, [0, 2]):
            cheap = collusion.judge(view, mate, hand, move, f"a:{k}:{i}")
            if cheap is None:
                continue
            dear = collusion.judge(view, mate, hand, move, f"a:{k}:{i}", review_budget)
            total += 1
            same += cheap["telling"] == dear["telling"]
            cheap_tells += cheap["telling"]
            dear_tells += dear["telling"]
            if cheap["telling"] and dear["telling"]:
                both += 1
                same_move += cheap["knowing"] == dear["knowing"]
    # Cohen's kappa: the agreement beyond what two independent verdicts at these rates give.
    pc, pd = cheap_tells / max(1, total), dear_tells / max(1, total)
    chance = pc * pd + (1 - pc) * (1 - pd)
    observed = same / max(1, total)
    return {"positions": total, "same_verdict": observed, "both_tell": both,
            "cheap_tells": cheap_tells, "dear_tells": dear_tells,
            "kappa": (observed - chance) / (1 - chance) if chance < 1 else 1.0,
            "same_knowing_move": same_move / max(1, both)}


def cost(matches: int, seed: int = 91) -> dict:
    """What the site's check costs: ``matches`` partners matches to 100 (the site's default)
    between expert pairs, every seat judged as the site judges a match of four people; CPU
    seconds per match and per move."""
    seconds, moves = [], 0
    for m in range(matches):
        record = play_match("expert", "expert", seed * 1000 + m, 100)
        moves += sum(len(r["moves"]) for r in record["rounds"])
        t = time.process_time()
        collusion.judge_record(record, seats=[0, 1, 2, 3], seed=m)
        seconds.append(time.process_time() - t)
    seconds.sort()
    return {"matches": matches, "moves": moves / matches, "mean": sum(seconds) / matches,
            "p90": seconds[int(0.9 * (matches - 1))], "max": seconds[-1],
            "per_move_ms": 1000 * sum(seconds) / moves}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.bench_collusion")
    parser.add_argument("--matches", type=int, default=20, help="matches per pair")
    parser.add_argument("--honest-seeds", type=int, default=8,
                        help="pairs per (honest level, opponents' level): 8 gives 200")
    parser.add_argument("--peek-seeds", type=int, default=5,
                        help="pairs per (peeker, opponents' level)")
    parser.add_argument("--target", type=int, default=100,
                        help="the match's target (partners: 100 is the site's default)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--agreement", type=int, default=0, metavar="N",
                        help="also compare with the review's budget on N matches")
    parser.add_argument("--cost", type=int, default=0, metavar="N",
                        help="only time the site's check on N matches to 100 (all four seats)")
    parser.add_argument("--replay", default=None, metavar="PATH",
                        help="play nothing: read the pairs of an earlier --json run")
    parser.add_argument("--fit", action="store_true",
                        help="also print the honest rates fitted on this run's honest pairs")
    parser.add_argument("--json", default=None,
                        help="write every pair's result here, a JSON line each as it comes")
    args = parser.parse_args(argv)
    if args.cost:
        c = cost(args.cost)
        print(f"the site's check, all four seats, {c['matches']} partners matches to 100 "
              f"({c['moves']:.0f} moves a match): {c['mean']:.2f} s of CPU per match (p90 "
              f"{c['p90']:.2f}, max {c['max']:.2f}), {c['per_move_ms']:.1f} ms per move")
        return
    task_list = tasks(honest_seeds=args.honest_seeds, peek_seeds=args.peek_seeds,
                      matches=args.matches, target=args.target,
                      first_seed=args.seed * 100000)
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        if done % 10 == 0 or done == total:
            print(f"  {done}/{total} pairs, {time.perf_counter() - started:.0f} s", flush=True)

    sink_file = open(args.json, "w", encoding="utf-8") if args.json else None  # noqa: SIM115

    def sink(r: dict) -> None:
        if sink_file:
            sink_file.write(json.dumps(r) + "\n")
            sink_file.flush()

    try:
        if args.replay:
            results = load(args.replay)
        else:
            results = run(task_list, procs=min(2, args.procs), progress=progress, sink=sink)
    finally:
        if sink_file:
            sink_file.close()
    spent = time.perf_counter() - started
    where = f"replayed from {args.replay}" if args.replay else f"partners, target {args.target}"
    print(f"{len(results)} pairs of {args.matches} matches ({where}) in "
          f"{spent:.0f} s; judging {sum(r.get('judging', 0) for r in results):.0f} s for "
          f"{len(results) * args.matches} matches")
    print(f"test: Wald's log LR over classes of telling positions, tuned for peeking on "
          f"{collusion.PEEK_SHARE:.2f} of moves; alpha {collusion.ALPHA}, flag at log LR >= "
          f"{collusion.threshold():.2f}, at least {collusion.MIN_PICKS} picks")
    print("With the site's honest rates (collusion.HONEST_RATE):")
    report(collusion_fit.evaluate(results))
    honest_pairs = [r for r in results if r["pair"] in HONEST]
    if len({r["seed"] % 2 for r in honest_pairs}) == 2:
        crossed, tables = collusion_fit.crossfit(results)
        print("Cross-fitted (each pair judged by honest rates fitted on the honest pairs of "
              "the other half of the seeds):")
        report(crossed)
        for f, t in enumerate(tables):
            print(f"  rates fitted without seeds = {f} mod 2: {t}")
    if args.fit:
        print(f"HONEST_RATE fitted on all {len(honest_pairs)} honest pairs: "
              f"{collusion_fit.fit(results)}")
    if args.agreement:
        a = agreement(args.agreement)
        print(f"agreement with the review's budget on {a['positions']} positions: the check's "
              f"evaluator says {a['cheap_tells']} tell, the review's {a['dear_tells']}, both "
              f"{a['both_tell']}; same verdict (tells or not) {100 * a['same_verdict']:.1f}% "
              f"(kappa {a['kappa']:.2f}); where both say it tells, the same knowing move "
              f"{100 * a['same_knowing_move']:.1f}%")


def load(path: str) -> list[dict]:
    """The pairs of an earlier ``--json`` run (gzipped or not)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def report(results: list[dict]) -> None:
    print_table(results)
    honest = [r for r in results if r["pair"] in HONEST]
    if honest:
        print(f"honest pairs flagged: {sum(r['verdict']['flagged'] for r in honest)} of "
              f"{len(honest)}")
    for name, kind in (("always-peeking", "peek"), ("one-third peeking", "peek3")):
        rows = [r for r in results if r["pair"] == kind]
        if rows:
            at = sorted(r["flagged_at"] for r in rows if r["flagged_at"])
            print(f"{name} pairs flagged: {len(at)} of {len(rows)}"
                  + (f" (after {at[0]} to {at[-1]} matches, median {at[len(at) // 2]})"
                     if at else ""))


if __name__ == "__main__":
    main()
