"""``python -m tools.arena``: two bot levels play single rounds against each other.

Each deal (from a seeded ``random.Random``) is played twice with the sides swapped, so the luck of
the deal cancels. Side A holds the even seats and side B the odd ones, then the reverse. Points per
side are the round-end points of the engine's ``RoundResult`` plus fives (``all-fives``). Openers
rotate where the preset draws them; elsewhere the deal decides (holder of 6-6, heaviest tile).

A side may also be a player of the PyPI ``dominoes`` library (``probabilistic_alphabeta``,
``bota_gorda``, ``double``, ``random``, with or without a ``lib:`` prefix), only on 4-player
``pairs-series`` whose scoring matches it (use ``--tie replay``). The library is imported only
when such a side is asked for.

A search level's budget can be changed for one side, to compare a variant with the level as it
is: ``--sides master+infer=0.5+playouts=6000,master`` (fields of ``apps.bots.search.Budget``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
import statistics
import time
from collections.abc import Callable

from apps.bots import LEVELS, choose_move, search
from apps.bots.search import Budget
from apps.bots.state import Public
from apps.rules.engine import END_NAMES, OPEN, Match, Round, deal
from apps.rules.presets import make_rules
from apps.rules.tiles import HI, LO, TILE_ID, parse_tile
from apps.rules.view import seat_view

from . import procs

LIB_PLAYERS = ("random", "bota_gorda", "double", "probabilistic_alphabeta")

Chooser = Callable[[Match, int, random.Random], tuple[int, int]]


def variant_budget(spec: str) -> Budget:
    """``master+infer=0.5+playouts=6000``: a search level's budget with fields replaced."""
    level, *changes = spec.split("+")
    if level not in search.BUDGETS:
        raise SystemExit(f"only {', '.join(search.BUDGETS)} take changes, not {level!r}")
    base = search.BUDGETS[level]
    kinds = {f.name: type(getattr(base, f.name)) for f in dataclasses.fields(base)}
    out = {}
    for change in changes:
        name, _, value = change.partition("=")
        if name not in kinds:
            raise SystemExit(f"no budget field {name!r}; one of {', '.join(kinds)}")
        kind = kinds[name]
        out[name] = value in ("1", "true", "yes") if kind is bool else kind(value)
    return dataclasses.replace(base, **out)


def _choose_variant(view: dict, budget: Budget, rng: random.Random) -> dict:
    legal = view["legal"]
    if len(legal) == 1:
        return dict(legal[0])
    return dict(legal[search.choose(Public(view), rng, budget)])


def bot_chooser(level: str) -> Chooser:
    budget = variant_budget(level) if "+" in level else None

    def choose(match: Match, seat: int, rng: random.Random) -> tuple[int, int]:
        view = seat_view(match, seat)
        if budget is None:
            move = choose_move(view, level, rng)
        else:
            move = _choose_variant(view, budget, rng)
        rnd = match.current
        if move.get("pass"):
            return rnd.check_pass(seat)
        tile, first, second = parse_tile(move["play"])
        end = END_NAMES.index(move["end"]) if "end" in move else None
        return rnd.check_play(seat, tile, end, flipped=first < second)
    return choose


def lib_chooser(name: str, samples: int, start_move: int) -> Chooser:
    """A ``dominoes`` library player in our seat, given a library Game of our position.

    The library Game holds every hand, but its players only read ``valid_moves`` and, for
    ``probabilistic_alphabeta``, re-deal the other hands at random consistently with its own
    hand, the hand sizes and the passes (``random_possible_hands``), so it does not cheat.
    """
    import dominoes  # test-only dependency

    players = dominoes.players
    if name == "probabilistic_alphabeta":
        # Heaviest first where it does not search yet, and as the search's move ordering.
        search = players.probabilistic_alphabeta(start_move=start_move, sample_size=samples,
                                                 player=players.bota_gorda)

        def player(game):
            players.bota_gorda(game)
            search(game)
    else:
        player = getattr(players, name)

    def domino(t: int):
        return dominoes.Domino(HI[t], LO[t])

    def choose(match: Match, seat: int, rng: random.Random) -> tuple[int, int]:
        rnd = match.current
        legal = rnd.legal()
        if len(legal) == 1:
            return legal[0]
        board = dominoes.Board()
        moves = []
        for _seat, t, e in rnd.history:
            if t < 0:
                moves.append(None)
                continue
            if e < 0:
                a, b = (HI[t], LO[t]) if e == OPEN else (LO[t], HI[t])
                d = dominoes.Domino(a, b)
                left = True
            else:
                d, left = domino(t), e == 0
            board.add(d, left)
            moves.append((d, left))
        hands = [dominoes.Hand([domino(t) for t in h]) for h in rnd.hands]
        game = dominoes.Game(board, hands, moves, seat, (), rnd.opener, None)
        if rnd.on_table:
            game._update_valid_moves()
        else:
            game.valid_moves = tuple((domino(t), True) for t in rnd.hands[seat])
        # The library draws its samples from the global random module.
        random.seed(rng.getrandbits(64))
        player(game)
        d, left = game.valid_moves[0]
        t = TILE_ID[(d.first, d.second)]
        if not rnd.on_table:
            return t, OPEN
        return rnd.check_play(seat, t, 0 if left else 1)
    return choose


def make_chooser(spec: str, args: argparse.Namespace) -> Chooser:
    if spec.startswith("lib:") or spec in LIB_PLAYERS:
        name = spec.removeprefix("lib:")
        if name not in LIB_PLAYERS:
            raise SystemExit(f"unknown library player {name!r}; one of {', '.join(LIB_PLAYERS)}")
        return lib_chooser(name, args.lib_samples, args.lib_start)
    if spec not in LEVELS and "+" not in spec:
        raise SystemExit(f"unknown level {spec!r}; one of {', '.join(LEVELS)}")
    return bot_chooser(spec)


def play_round(rules, hands, bones, opener, seat_side: list[int], choosers: list[Chooser],
               seed: int, times: list[list[float]]) -> tuple[list[int], int | None]:
    """One round; returns points per arena side (0 = A, 1 = B) and the winning arena side."""
    match = Match(rules)
    derived, _ = match.opener_for(hands)
    rnd: Round = match.start_round([h[:] for h in hands], bones[:],
                                   opener if derived is None else None)
    rngs = [random.Random(seed * 10 + s) for s in range(rules.players)]
    while rnd.result is None:
        seat = rnd.turn
        side = seat_side[seat]
        several = len(rnd.legal()) > 1
        start = time.perf_counter()
        tile, end = choosers[side](match, seat, rngs[seat])
        if several:
            times[side].append(time.perf_counter() - start)
        match.play(tile, end)
    res = rnd.result
    pts = [0, 0]
    win_side = None
    if res.winner is not None:
        seats = [s for s in range(rules.players) if rules.side_of(s) == res.winner]
        win_side = seat_side[seats[0]]
        pts[win_side] += res.points
    for seat, f in enumerate(rnd.fives):
        pts[seat_side[seat]] += f
    return pts, win_side


def ratio_ci(num: list[float], den: list[float]) -> tuple[float, float]:
    """Σnum/Σden and the half-width of its 95% normal interval (delta method over pairs)."""
    total = sum(den)
    if total == 0:
        return float("nan"), float("nan")
    r = sum(num) / total
    n = len(num)
    if n < 2:
        return r, float("nan")
    resid = sum((a - r * b) ** 2 for a, b in zip(num, den, strict=True))
    se = math.sqrt(resid * n / (n - 1)) / total
    return r, 1.96 * se


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.arena")
    parser.add_argument("--preset", default="partners")
    parser.add_argument("--players", type=int, default=None, help="2-4 where the preset allows")
    parser.add_argument("--sides", default="expert,easy", help="A,B: levels or lib:NAME")
    parser.add_argument("--rounds", type=int, default=100, help="deals, each played twice")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tie", default=None, help="pairs-series tie rule")
    parser.add_argument("--lib-samples", type=int, default=8,
                        help="hidden deals per decision of lib:probabilistic_alphabeta")
    parser.add_argument("--lib-start", type=int, default=12,
                        help="move from which lib:probabilistic_alphabeta searches")
    parser.add_argument("--pairs", default=None,
                        help="write each deal pair's points (A's, both sides') as JSON lines "
                             "here, to compare two side A's on the same deals")
    args = parser.parse_args(argv)

    options = {"preset": args.preset}
    if args.tie:
        options["tie"] = args.tie
    players = args.players
    if players is None and args.preset not in ("partners", "partners-66", "pairs-series"):
        players = 2
    rules = make_rules(options, players)
    specs = args.sides.split(",")
    if len(specs) != 2:
        raise SystemExit("--sides takes two levels, A,B")
    if any(s.startswith("lib:") or s in LIB_PLAYERS for s in specs) \
            and rules.preset != "pairs-series":
        raise SystemExit("library players only play pairs-series (4 players, all 28 dealt)")
    choosers = [make_chooser(s, args) for s in specs]
    n = rules.players

    times: list[list[float]] = [[], []]
    pair_pts_a, pair_pts_tot, pair_win_a, pair_win_tot = [], [], [], []
    totals = [0, 0]
    wins = [0, 0]
    started = time.perf_counter()
    for i in range(args.rounds):
        hands, bones, _ = deal(rules, random.Random(args.seed * 1_000_003 + i))
        opener = i % n
        pa = pt = wa = wt = 0
        for swap in (0, 1):
            seat_side = [(s + swap) % 2 for s in range(n)]
            pts, win = play_round(rules, hands, bones, opener, seat_side, choosers,
                                  args.seed * 1_000_003 + 2 * i + swap, times)
            totals[0] += pts[0]
            totals[1] += pts[1]
            pa += pts[0]
            pt += pts[0] + pts[1]
            if win is not None:
                wins[win] += 1
                wa += win == 0
                wt += 1
        pair_pts_a.append(pa)
        pair_pts_tot.append(pt)
        pair_win_a.append(wa)
        pair_win_tot.append(wt)
        if args.pairs:
            with open(args.pairs, "a") as out:
                out.write(json.dumps({"seed": args.seed, "deal": i, "a": pa, "total": pt,
                                      "won_a": wa, "won": wt}) + "\n")
    elapsed = time.perf_counter() - started

    share, half = ratio_ci(pair_pts_a, pair_pts_tot)
    wshare, whalf = ratio_ci(pair_win_a, pair_win_tot)
    print(f"preset {rules.preset}, {n} players, {args.rounds} deals x 2 (sides swapped), "
          f"seed {args.seed}, {elapsed:.0f} s; this machine's loop "
          f"{procs.loop_seconds():.2f} s (tools.procs.loop_seconds: decision times scale "
          "with it)")
    print("95% CI: normal, delta method over deal pairs")
    print(f"{'side':<28} {'rounds won':>18} {'points':>18} {'p50 ms':>8} {'p99 ms':>8}")
    for k in (0, 1):
        s, h = (share, half) if k == 0 else (1 - share, half)
        ws, wh = (wshare, whalf) if k == 0 else (1 - wshare, whalf)
        print(f"{'AB'[k] + ' ' + specs[k]:<28} {100 * ws:>9.1f}% ±{100 * wh:4.1f}  "
              f"{100 * s:>9.1f}% ±{100 * h:4.1f}  {1000 * pct(times[k], 0.5):>8.2f} "
              f"{1000 * pct(times[k], 0.99):>8.2f}")
    print(f"points: A {totals[0]}, B {totals[1]}; rounds won: A {wins[0]}, B {wins[1]}, "
          f"nobody {2 * args.rounds - wins[0] - wins[1]}; decisions timed: "
          f"{len(times[0])}, {len(times[1])} (moves with a choice); "
          f"mean ms {1000 * statistics.fmean(times[0] or [0]):.2f}, "
          f"{1000 * statistics.fmean(times[1] or [0]):.2f}")


if __name__ == "__main__":
    main()
