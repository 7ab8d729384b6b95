"""Differential test: our engine against the PyPI ``dominoes`` library (a test dependency).

The library plays the 4-player partners game with all 28 tiles dealt, which is our
``pairs-series`` preset with the opener given by the record and the tie rule ``replay`` (the
library scores an exact blocked tie 0), and our ``partners`` preset as far as legal moves and
the end of a round go. Both are dealt the same hands, play the same random moves, and must agree
at every step on whose turn it is, which moves are legal, the open ends, when and how the round
ends, the final hands, and (for pairs-series) the points.

Mapping: the library's left end is our end A, its right end our end B. The first tile, written
"a-b" on our side and played as ``Domino(a, b)`` on the library's, gives A = left = a and
B = right = b. The library lists a tile once when both ends show the same number (on the left)
where ours lists it for both ends; it skips a stuck seat by itself (recording None) where ours
lists a pass as that seat's only legal move and needs it played.
"""

from __future__ import annotations

import random

import dominoes
import pytest

from apps.rules.engine import OPEN, OPEN_FLIPPED, PASS_MOVE, Match, deal
from apps.rules.presets import make_rules
from apps.rules.tiles import HI, LO, PIPS, TILE_ID

DEALS = 4000


def lib_domino(t: int) -> dominoes.Domino:
    return dominoes.Domino(HI[t], LO[t])


def tile_of(d: dominoes.Domino) -> int:
    return TILE_ID[(d.first, d.second)]


def lib_game(hands: list[list[int]], opener: int) -> dominoes.Game:
    lib_hands = [dominoes.Hand([lib_domino(t) for t in h]) for h in hands]
    valid = tuple((d, True) for d in lib_hands[opener])
    return dominoes.Game(dominoes.Board(), lib_hands, [], opener, valid, opener, None)


def lib_legal(game: dominoes.Game) -> set[tuple[int, bool]]:
    return {(tile_of(d), left) for d, left in game.valid_moves}


def our_legal_as_lib(rnd) -> set[tuple[int, bool]]:
    """Our legal moves in the library's terms: A -> left, B -> right, deduped like it does."""
    legal = rnd.legal()
    if legal == [PASS_MOVE]:
        return set()
    out = set()
    same = rnd.n_ends == 2 and rnd.ends[0] == rnd.ends[1]
    for t, e in legal:
        if e < 0:
            out.add((t, True))  # the opening: the library lists the hand on the left
        elif e == 0:
            out.add((t, True))
        elif e == 1:
            if not same:
                out.add((t, False))
        else:  # pragma: no cover - no spinner in these presets
            raise AssertionError(f"end {e} in a two-ended preset")
    return out


def hands_of(game: dominoes.Game) -> list[set[int]]:
    return [{tile_of(d) for d in h} for h in game.hands]


def play_both(preset: str, seed: int) -> None:
    rng = random.Random(seed)
    options = {"preset": preset}
    if preset == "pairs-series":
        options["tie"] = "replay"
    rules = make_rules(options, 4)
    hands, boneyard, opener = deal(rules, rng)
    assert boneyard == []
    match = Match(rules)
    if rules.first_opener == "random":
        rnd = match.start_round(hands, boneyard, opener)
    else:  # partners: the holder of 6-6 opens (any tile)
        rnd = match.start_round(hands, boneyard)
        opener = next(s for s, h in enumerate(hands) if TILE_ID[(6, 6)] in h)
    assert rnd.opener == opener
    game = lib_game(hands, opener)

    stuck_passes = None  # after the library declares the game stuck: our passes still owed
    for _step in range(200):
        if rnd.result is not None:
            break
        seat = rnd.turn
        legal = rnd.legal()
        if stuck_passes is not None:
            assert legal == [PASS_MOVE], "library is stuck but our seat can play"
            match.play(*PASS_MOVE)
            stuck_passes -= 1
            continue
        assert game.result is None
        if legal == [PASS_MOVE]:
            # the library skipped this seat already
            assert game.turn != seat
            match.play(*PASS_MOVE)
            continue
        assert game.turn == seat, (game.turn, seat)
        assert our_legal_as_lib(rnd) == lib_legal(game), (seed, rnd.ends[:2], game.board)
        tile, end = rng.choice(legal)
        if end < 0:
            # the opening, in a random orientation, written the same way on both sides
            a, b = (HI[tile], LO[tile]) if rng.random() < 0.5 else (LO[tile], HI[tile])
            end = OPEN if a >= b else OPEN_FLIPPED
            match.play(tile, end)
            game.make_move(dominoes.Domino(a, b), True)
            assert (rnd.ends[0], rnd.ends[1]) == (a, b)
        else:
            # A -> left, B -> right; playing B when A == B is fine for the library too
            match.play(tile, end)
            game.make_move(lib_domino(tile), end == 0)
        if game.result is None:
            assert rnd.result is None
            assert [rnd.ends[0], rnd.ends[1]] == [game.board.left_end(), game.board.right_end()]
        elif game.result.won:
            assert rnd.result is not None and rnd.result.reason == "domino"
        else:
            assert rnd.result is None  # ours needs every seat's pass written
            stuck_passes = 4
            assert [rnd.ends[0], rnd.ends[1]] == [game.board.left_end(), game.board.right_end()]
    else:  # pragma: no cover
        raise AssertionError("round did not end")

    assert game.result is not None
    res = rnd.result
    assert res.reason == ("domino" if game.result.won else "blocked")
    if not game.result.won:
        assert stuck_passes == 0
    assert [set(h) for h in rnd.hands] == hands_of(game)
    assert list(res.pips) == [sum(PIPS[t] for t in h) for h in hands_of(game)]
    if preset == "pairs-series":
        lib_points = game.result.points
        if lib_points == 0:
            assert res.winner is None and res.points == 0 and res.tie
        else:
            assert res.winner == (0 if lib_points > 0 else 1)
            assert res.points == abs(lib_points)
            # the library's last player is the one who went out
            if game.result.won:
                assert game.result.player % 2 == res.winner


@pytest.mark.parametrize("chunk", range(4))
def test_same_play_as_dominoes_library_pairs_series(chunk):
    for seed in range(chunk * DEALS // 4, (chunk + 1) * DEALS // 4):
        play_both("pairs-series", seed)


def test_same_play_as_dominoes_library_partners():
    for seed in range(100_000, 100_500):
        play_both("partners", seed)
