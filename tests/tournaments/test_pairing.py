"""The pure pairing rules (apps/tournaments/pairing.py), as properties over generated fields:
a tournament's whole history is played out round after round with random winners."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from apps.tournaments import pairing as p


def brute_rematch_free(teams: list[int], met: dict[int, set[int]]) -> bool:
    """Whether the teams can be paired with no rematch (exhaustively)."""
    if not teams:
        return True
    first, rest = teams[0], teams[1:]
    return any(other not in met[first]
               and brute_rematch_free([t for t in rest if t != other], met) for other in rest)


def play_swiss(n: int, rounds: int, winners: list[int]):
    """Run a Swiss of n teams for ``rounds`` rounds; ``winners`` picks each game's winner (0: a,
    1: b, 2: nobody). Yields (results before the round, the pairing) for each round."""
    teams = list(range(100, 100 + n))
    results: list[p.Result] = []
    draw = itertools.cycle(winners or [0])
    for _round in range(rounds):
        pairing = p.swiss_pairings(teams, results)
        yield teams, list(results), pairing
        for a, b in pairing.pairs:
            pick = next(draw)
            results.append(p.Result(a, b, (a, b, None)[pick]))
        if pairing.bye is not None:
            results.append(p.Result(pairing.bye, None, pairing.bye))


swiss = st.tuples(st.integers(2, 9), st.integers(1, 7),
                  st.lists(st.integers(0, 2), min_size=1, max_size=30))


@settings(max_examples=300, deadline=None)
@given(swiss)
def test_every_team_plays_once_per_round_and_the_bye_only_when_odd(args):
    n, rounds, winners = args
    for teams, _results, pairing in play_swiss(n, rounds, winners):
        seen = [t for pair in pairing.pairs for t in pair]
        if pairing.bye is not None:
            seen.append(pairing.bye)
        assert sorted(seen) == sorted(teams)  # each exactly once
        assert all(a != b for a, b in pairing.pairs)
        assert (pairing.bye is not None) == (n % 2 == 1)


@settings(max_examples=300, deadline=None)
@given(swiss)
def test_no_rematch_while_a_pairing_without_one_exists(args):
    n, rounds, winners = args
    for teams, results, pairing in play_swiss(n, rounds, winners):
        recs = p.records(teams, results)
        met = {t: set(recs[t].opponents) for t in teams}
        rematches = [pair for pair in pairing.pairs if pair[1] in met[pair[0]]]
        # The bye goes first to the fewest byes (below); among those choices, is there a
        # pairing without a rematch at all?
        if n % 2:
            fewest = min(recs[t].byes for t in teams)
            possible = any(brute_rematch_free([t for t in teams if t != bye], met)
                           for bye in teams if recs[bye].byes == fewest)
        else:
            possible = brute_rematch_free(teams, met)
        if possible:
            assert rematches == [], (teams, results, pairing)
        assert pairing.rematches == len(rematches)


@settings(max_examples=300, deadline=None)
@given(swiss)
def test_byes_rotate(args):
    n, rounds, winners = args
    for teams, results, pairing in play_swiss(n, rounds, winners):
        if pairing.bye is None:
            continue
        recs = p.records(teams, results)
        assert recs[pairing.bye].byes == min(r.byes for r in recs.values())


def all_pairings(teams: list[int]):
    if not teams:
        yield []
        return
    for i in range(1, len(teams)):
        for rest in all_pairings(teams[1:i] + teams[i + 1:]):
            yield [(teams[0], teams[i])] + rest


def spread(pairs, score) -> int:
    return sum((score[a] - score[b]) ** 2 for a, b in pairs)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=10).filter(lambda s: len(s) % 2 == 0))
def test_score_groups_are_kept_when_nothing_else_forbids_it(scores):
    """Teams with given scores (won from byes, so nobody has met anybody yet): no pairing
    keeps the score groups closer, and a team that floats meets the next group, not the
    bottom (2 meets 1 and 1 meets 0, rather than 2 meets 0 and 1 meets 1)."""
    teams = list(range(len(scores)))
    results = [p.Result(t, None, t) for t, s in zip(teams, scores, strict=True)
               for _ in range(s)]
    pairing = p.swiss_pairings(teams, results)
    score = dict(zip(teams, scores, strict=True))
    assert spread(pairing.pairs, score) == min(spread(q, score) for q in all_pairings(teams))
    order = [s.team for s in p.swiss_standings(teams, results)]
    if len(set(scores)) == 1:
        # one group: the top meets the next, and so on down
        assert pairing.pairs == [(order[i], order[i + 1]) for i in range(0, len(order), 2)]


@settings(max_examples=200, deadline=None)
@given(st.tuples(st.integers(2, 8), st.integers(1, 6),
                 st.lists(st.integers(0, 2), min_size=1, max_size=30)))
def test_score_groups_respected_as_far_as_possible(args):
    """Every round of a played-out Swiss: among all the pairings without a rematch (with the
    bye the rotation gives), none keeps the score groups closer than the one chosen."""
    n, rounds, winners = args
    for teams, results, pairing in play_swiss(n, rounds, winners):
        if pairing.rematches:
            continue
        recs = p.records(teams, results)
        score = {t: recs[t].score for t in teams}
        met = {t: set(recs[t].opponents) for t in teams}
        playing = [t for t in teams if t != pairing.bye]
        allowed = [q for q in all_pairings(playing) if all(b not in met[a] for a, b in q)]
        assert spread(pairing.pairs, score) == min(spread(q, score) for q in allowed)


@given(st.lists(st.integers(0, 2), min_size=0, max_size=20))
def test_standings_rank_everybody_once_and_scores_add_up(winners):
    for teams, results, _pairing in play_swiss(5, 4, winners):
        table = p.swiss_standings(teams, results)
        assert [s.rank for s in table] == list(range(1, len(teams) + 1))
        assert sorted(s.team for s in table) == sorted(teams)
        scores = [s.score for s in table]
        assert scores == sorted(scores, reverse=True)
        won = sum(1 for r in results if r.winner is not None)
        assert sum(scores) == won


def test_tie_breaks_in_order_buchholz_then_sonneborn_berger_then_direct_encounter():
    # Four teams, seeds 1..4. After three rounds, 1, 2 and 3 have two points each.
    a, b, c, d = 1, 2, 3, 4
    results = [p.Result(a, b, a), p.Result(c, d, c),
               p.Result(a, c, c), p.Result(b, d, b),
               p.Result(a, d, a), p.Result(b, c, b)]
    table = p.swiss_standings([a, b, c, d], results)
    assert [s.score for s in table] == [2, 2, 2, 0]
    # Each of a, b, c met the other two (4 points) and d (0): Buchholz 4 for all; each beat
    # one of the others (2) and d... a beat b and d: SB 2; b beat c, d: 2; c beat a, d: 2.
    assert {s.buchholz for s in table[:3]} == {4}
    assert {s.sonneborn_berger for s in table[:3]} == {2}
    # the direct encounter among the three is a cycle: one win each, so the seed decides.
    assert [s.team for s in table] == [a, b, c, d]

    # e, f and g have a point each. g met e and h (1 + 0), e met g (1): Buchholz 1 each, and
    # Sonneborn-Berger puts e (beat g, who has a point) before g (beat h, who has none); f
    # met only h: Buchholz 0, last of the three.
    e, f, g, h = 5, 6, 7, 8
    results = [p.Result(e, g, e), p.Result(f, h, f), p.Result(g, h, g)]
    table = p.swiss_standings([f, e, g, h], results)
    assert [(s.team, s.score, s.buchholz, s.sonneborn_berger) for s in table] == [
        (e, 1, 1, 1), (g, 1, 1, 0), (f, 1, 0, 0), (h, 0, 2, 0)]


@settings(max_examples=300, deadline=None)
@given(swiss)
def test_the_direct_encounter_breaks_a_tie_the_other_tie_breaks_leave(args):
    n, rounds, winners = args
    for teams, results, _pairing in play_swiss(n, rounds, winners):
        table = p.swiss_standings(teams, results)
        for first, second in zip(table, table[1:], strict=False):
            same = (first.score, first.buchholz, first.sonneborn_berger) == \
                   (second.score, second.buchholz, second.sonneborn_berger)
            group = [s for s in table if (s.score, s.buchholz, s.sonneborn_berger)
                     == (first.score, first.buchholz, first.sonneborn_berger)]
            if same and len(group) == 2:
                lost = p.Result(first.team, second.team, second.team) in results or \
                    p.Result(second.team, first.team, second.team) in results
                won = p.Result(first.team, second.team, first.team) in results or \
                    p.Result(second.team, first.team, first.team) in results
                assert not (lost and not won)  # who beat the other is never behind
            if not same:
                assert (first.score, first.buchholz, first.sonneborn_berger) > \
                       (second.score, second.buchholz, second.sonneborn_berger)


def test_three_teams_over_three_rounds_each_gets_one_bye_and_meets_both_others():
    teams = [1, 2, 3]
    results: list[p.Result] = []
    byes = []
    for _round in range(3):
        pairing = p.swiss_pairings(teams, results)
        byes.append(pairing.bye)
        (a, b), = pairing.pairs
        results += [p.Result(a, b, a), p.Result(pairing.bye, None, pairing.bye)]
    assert sorted(byes) == teams
    met = {frozenset(r.sides()) for r in results if r.b is not None}
    assert met == {frozenset(x) for x in itertools.combinations(teams, 2)}


# -- knockout -----------------------------------------------------------------------------

@given(st.integers(2, 40))
def test_the_bracket_seeds_one_against_last_and_byes_go_to_the_top(n):
    seeded = list(range(1, n + 1))  # the team ids are their seeds here
    ties = p.knockout_first_round(seeded)
    size = p.bracket_size(n)
    assert len(ties) == size // 2 and size >= n > size // 2
    seen = [t for tie in ties for t in tie if t is not None]
    assert sorted(seen) == seeded
    byes = sorted(a if b is None else b for a, b in ties if a is None or b is None)
    assert byes == list(range(1, size - n + 1))  # the top seeds, exactly as many as missing
    for a, b in ties:
        if a is not None and b is not None:
            assert a + b == size + 1  # seed i meets seed size + 1 - i
    assert all(tie[0] is not None for tie in ties)
    # Seeds 1 and 2 sit in opposite halves: they can meet only in the final.
    half = len(ties) // 2
    if half:
        flat = [t for tie in ties for t in tie]
        assert (1 in flat[:len(flat) // 2]) != (2 in flat[:len(flat) // 2])


@given(st.integers(2, 33), st.randoms(use_true_random=False))
def test_a_knockout_played_out_ends_with_one_champion_and_shared_places(n, rng):
    seeded = list(range(1, n + 1))
    ties = p.knockout_first_round(seeded)
    rounds = []
    while True:
        played = []
        for a, b in ties:
            if a is None or b is None:
                played.append((a, b, a if b is None else b))
            else:
                played.append((a, b, rng.choice((a, b))))
        rounds.append(played)
        winners = [w for _a, _b, w in played]
        if len(winners) == 1:
            break
        ties = p.knockout_next_round(winners)
    places = p.knockout_places(rounds)
    assert len(places[0]) == 1 and len(places[1]) == 1
    assert sorted(t for group in places for t in group) == seeded
    out_in = {t: i for i, played in enumerate(rounds) for a, b, w in played
              for t in (a, b) if t is not None and t != w}
    for group in places[1:]:
        assert len({out_in[t] for t in group}) == 1  # who share a place went out together
    later = [out_in[group[0]] for group in places[1:]]
    assert later == sorted(later, reverse=True)  # who went out later is placed better


@given(st.integers(0, 5), st.integers(0, 5), st.sampled_from([1, 3, 5]))
def test_a_tie_is_won_by_a_majority_of_its_matches(wins_a, wins_b, best_of):
    need = best_of // 2 + 1
    if wins_a >= need and wins_b >= need:
        return
    winner = p.tie_winner(1, 2, wins_a, wins_b, best_of)
    if wins_a >= need:
        assert winner == 1
    elif wins_b >= need:
        assert winner == 2
    else:
        assert winner is None


# -- partners and prizes --------------------------------------------------------------------

@given(st.lists(st.integers(800, 1600), min_size=0, max_size=15))
def test_people_alone_are_paired_strong_with_weak_and_the_last_odd_one_waits(ratings):
    people = [(i, r) for i, r in enumerate(ratings)]
    pairs, left = p.pair_solos(people)
    if len(people) % 2:
        assert left == people[-1][0]
    else:
        assert left is None
    paired = [x for pair in pairs for x in pair]
    assert sorted(paired + ([left] if left is not None else [])) == list(range(len(people)))
    sums = [ratings[a] + ratings[b] for a, b in pairs]
    if sums:
        # strongest with weakest: the spread of the pairs' totals is the smallest of all
        # pairings' (checked against every pairing for small fields)
        if len(pairs) <= 4:
            ids = paired

            def pairings(xs):
                if not xs:
                    yield []
                    return
                for i in range(1, len(xs)):
                    for rest in pairings(xs[1:i] + xs[i + 1:]):
                        yield [(xs[0], xs[i])] + rest

            best = min(max(ratings[a] + ratings[b] for a, b in q)
                       - min(ratings[a] + ratings[b] for a, b in q) for q in pairings(ids))
            assert max(sums) - min(sums) == best


@given(st.integers(0, 10_000), st.lists(st.integers(1, 4), min_size=1, max_size=5),
       st.sampled_from([[100], [60, 40], [50, 30, 20], [60, 30, 10], [40, 30, 20, 10]]))
def test_prizes_give_the_whole_pot_and_shared_places_share(pot, sizes, split):
    team = itertools.count(1)
    places = [[next(team) for _ in range(size)] for size in sizes]
    shares = p.prize_shares(places, split, pot)
    assert sum(shares.values()) == pot
    assert all(c > 0 for c in shares.values())
    # a better place never gets less than a worse one (the first also takes the rounding)
    flat = [shares.get(t, 0) for group in places for t in group]
    assert flat == sorted(flat, reverse=True)
    for group in places:
        assert len({shares.get(t, 0) for t in group[1:]} | ({shares.get(group[0], 0)}
                   if group is not places[0] else set())) <= 1


@given(st.integers(0, 1000), st.integers(1, 2))
def test_a_team_prize_splits_between_its_people(coins, n):
    parts = p.split_between(coins, list(range(n)))
    assert sum(parts.values()) == coins and max(parts.values()) - min(parts.values()) <= 1
