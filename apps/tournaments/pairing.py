"""Who plays whom: the Swiss pairing and standings, the knockout bracket, partners for the
people who registered alone, and the prizes' shares. Pure Python (no Django): a team is an int
(the caller's id), and everything the functions need comes in as arguments, so the rules can be
tried exhaustively (``tests/tournaments/test_pairing.py``) and read in docs/tournaments.md.

The order of teams given to the functions is their **seed order**, strongest first (the
tournament sorts by rating at registration's close): it breaks every tie that nothing else
breaks, so the same inputs always give the same pairings.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

#: How many sets of teams the Swiss search may weigh before it settles for the first pairing
#: it finds (top down, nearest first). Measured on six-round Swisses with random results: up to
#: 21 teams it paired exactly as an unbounded search; a round of 64 took at most 0.44 s.
SEARCH_BUDGET = 50_000


@dataclass(frozen=True)
class Result:
    """One game of a round: ``b`` is None for a bye; ``winner`` is None when neither side won
    (both failed to show up)."""

    a: int
    b: int | None
    winner: int | None

    def sides(self) -> tuple[int, ...]:
        return (self.a,) if self.b is None else (self.a, self.b)


@dataclass(frozen=True)
class Pairing:
    pairs: list[tuple[int, int]]
    bye: int | None = None
    #: Pairs that meet again because no pairing without a rematch existed.
    rematches: int = 0


# -- the Swiss system -------------------------------------------------------------------------

@dataclass
class Record:
    team: int
    seed: int
    score: int = 0
    byes: int = 0
    opponents: list[int] = field(default_factory=list)
    beaten: list[int] = field(default_factory=list)


def records(teams: Sequence[int], results: Iterable[Result]) -> dict[int, Record]:
    """Each team's score (a win or a bye is a point), byes, opponents and whom it beat."""
    out = {team: Record(team, seed) for seed, team in enumerate(teams)}
    for res in results:
        if res.b is None:
            out[res.a].byes += 1
            out[res.a].score += 1
            continue
        out[res.a].opponents.append(res.b)
        out[res.b].opponents.append(res.a)
        if res.winner is not None:
            loser = res.b if res.winner == res.a else res.a
            out[res.winner].score += 1
            out[res.winner].beaten.append(loser)
    return out


def swiss_pairings(teams: Sequence[int], results: Iterable[Result]) -> Pairing:
    """The next round's pairs.

    1. With an odd number of teams, the bye goes to the lowest-placed team among those with
       the fewest byes (so nobody has a second bye while another has none), preferring one
       whose absence leaves a pairing without rematches.
    2. The others are paired with no rematch, keeping score groups together as far as
       possible: of all such pairings, the one with the smallest sum of the squared score
       differences of its pairs (a team that must float meets the next group down, not the
       bottom of the table); among equals, each team from the top meets the nearest team
       below it that it has not met.
    3. Only when no pairing at all avoids a rematch (a small field late on) are rematches
       allowed, and then the same rule picks among all pairings.
    """
    results = list(results)
    recs = records(teams, results)
    order = [s.team for s in swiss_standings(teams, results)]
    met = {t: set(recs[t].opponents) for t in teams}
    scores = {t: recs[t].score for t in teams}
    if len(order) % 2 == 0:
        return _pair_all(order, met, scores)
    fewest = min(recs[t].byes for t in order)
    candidates = [t for t in reversed(order) if recs[t].byes == fewest]
    for bye in candidates:
        pairs = _search([t for t in order if t != bye], met, scores)
        if pairs is not None:
            return Pairing(pairs, bye)
    bye = candidates[0]
    return _pair_all([t for t in order if t != bye], met, scores, bye=bye)


def _pair_all(order: list[int], met: dict[int, set[int]], scores: dict[int, int], *,
              bye: int | None = None) -> Pairing:
    pairs = _search(order, met, scores)
    if pairs is not None:
        return Pairing(pairs, bye)
    pairs = _search(order, {t: set() for t in order}, scores)
    assert pairs is not None  # without the rematch rule, any even field pairs
    return Pairing(pairs, bye, sum(b in met[a] for a, b in pairs))


def _search(order: list[int], met: dict[int, set[int]],
            scores: dict[int, int]) -> list[tuple[int, int]] | None:
    """The best pairing of ``order`` (standings order) without a rematch, by the rule of
    :func:`swiss_pairings`; None when there is none.

    The search pairs the first team left with each possible opponent, nearest first, and
    remembers the best completion of every set of teams left. Past ``SEARCH_BUDGET`` steps (a
    very large field) it keeps to the first pairing found, top down and nearest first."""

    def cost(a: int, b: int) -> int:
        return (scores[a] - scores[b]) ** 2

    best: dict[int, tuple[int, list[tuple[int, int]]] | None] = {0: (0, [])}
    steps = [0]

    def go(left: int, greedy: bool) -> tuple[int, list[tuple[int, int]]] | None:
        if left in best:
            return best[left]
        steps[0] += 1
        if steps[0] > SEARCH_BUDGET and not greedy:
            raise _OverBudget
        first = (left & -left).bit_length() - 1
        team = order[first]
        rest = left & ~(1 << first)
        found = None
        scan = rest
        while scan:
            bit = scan & -scan
            scan &= ~bit
            other = order[bit.bit_length() - 1]
            if other in met[team]:
                continue
            tail = go(rest & ~bit, greedy)
            if tail is None:
                continue
            total = cost(team, other) + tail[0]
            if found is None or total < found[0]:
                found = (total, [(team, other)] + tail[1])
                if greedy:
                    break
        best[left] = found
        return found

    full = (1 << len(order)) - 1
    try:
        done = go(full, greedy=False)
    except _OverBudget:
        best.clear()
        best[0] = (0, [])
        done = _greedy(order, met)
    return None if done is None else done[1]


class _OverBudget(Exception):
    pass


def _greedy(order: list[int], met: dict[int, set[int]]
            ) -> tuple[int, list[tuple[int, int]]] | None:
    """Top down, nearest first, backtracking only when stuck; sets found unpairable are
    remembered."""
    dead: set[int] = set()

    def go(left: int) -> list[tuple[int, int]] | None:
        if left == 0:
            return []
        if left in dead:
            return None
        first = (left & -left).bit_length() - 1
        team = order[first]
        rest = left & ~(1 << first)
        scan = rest
        while scan:
            bit = scan & -scan
            scan &= ~bit
            other = order[bit.bit_length() - 1]
            if other not in met[team]:
                tail = go(rest & ~bit)
                if tail is not None:
                    return [(team, other)] + tail
        dead.add(left)
        return None

    pairs = go((1 << len(order)) - 1)
    return None if pairs is None else (0, pairs)


@dataclass(frozen=True)
class Standing:
    team: int
    rank: int
    score: int
    buchholz: int
    sonneborn_berger: int
    wins: int
    byes: int


def swiss_standings(teams: Sequence[int], results: Iterable[Result]) -> list[Standing]:
    """Standings, best first. Ties on points are broken by, in order:

    1. Buchholz: the sum of the scores of the opponents met (a bye adds nothing);
    2. Sonneborn-Berger: the sum of the scores of the opponents beaten;
    3. the direct encounter: among teams still equal, the points each made against the
       others of that group;
    4. the seed (rating at the start), which no two teams share: so ranks are never shared.
    """
    results = list(results)
    recs = records(teams, results)

    def key(t: int) -> tuple[int, int, int]:
        r = recs[t]
        return (r.score, sum(recs[o].score for o in r.opponents),
                sum(recs[o].score for o in r.beaten))

    groups: dict[tuple, list[int]] = {}
    for t in teams:
        groups.setdefault(key(t), []).append(t)
    order: list[int] = []
    for k in sorted(groups, reverse=True):
        group = set(groups[k])
        direct = {t: sum(1 for o in recs[t].beaten if o in group) for t in group}
        order += sorted(group, key=lambda t: (-direct[t], recs[t].seed))
    out = []
    for rank, t in enumerate(order, start=1):
        r = recs[t]
        score, buchholz, sb = key(t)
        out.append(Standing(t, rank, score, buchholz, sb, len(r.beaten), r.byes))
    return out


# -- knockout ---------------------------------------------------------------------------------

def bracket_size(n: int) -> int:
    size = 1
    while size < n:
        size *= 2
    return size


def bracket_order(size: int) -> list[int]:
    """Seed numbers (1-based) in bracket order: 1, 16, 8, 9, 4, 13, ... so that seed 1 meets
    seed ``size`` first and seeds 1 and 2 can meet only in the final."""
    order = [1]
    while len(order) < size:
        span = len(order) * 2 + 1
        order = [x for seed in order for x in (seed, span - seed)]
    return order


def knockout_first_round(seeded: Sequence[int]) -> list[tuple[int, int | None]]:
    """The first round's ties in bracket order: seed i meets seed (size + 1 - i); when the
    field is not a power of two the top seeds meet nobody (a bye: ``(team, None)``)."""
    size = bracket_size(len(seeded))
    slots = [seeded[s - 1] if s <= len(seeded) else None for s in bracket_order(size)]
    return [(slots[i], slots[i + 1]) for i in range(0, size, 2)]  # type: ignore[misc]


def knockout_next_round(winners: Sequence[int | None]) -> list[tuple[int | None, int | None]]:
    """The next round from the previous round's winners in bracket order (None: a tie that
    nobody won, both sides absent; whoever meets it goes through)."""
    return [(winners[i], winners[i + 1]) for i in range(0, len(winners), 2)]


def tie_winner(a: int, b: int, wins_a: int, wins_b: int, best_of: int) -> int | None:
    """The side that won a best-of-``best_of`` tie, or None while it is still on."""
    need = best_of // 2 + 1
    if wins_a >= need:
        return a
    if wins_b >= need:
        return b
    return None


def knockout_places(rounds: Sequence[Sequence[tuple[int | None, int | None, int | None]]]
                    ) -> list[list[int]]:
    """Places from the rounds played, each a list of ties (a, b, winner): the champion, the
    finalist, then the teams that went out in each earlier round, who share a place (the two
    losing semi-finalists share third). Best first; each entry lists the teams sharing it."""
    places: list[list[int]] = []
    for back, ties in enumerate(reversed(rounds)):
        if back == 0:
            champions = [w for _a, _b, w in ties if w is not None]
            if champions:
                places.append(champions)
        out = [t for a, b, w in ties for t in (a, b) if t is not None and t != w]
        if out:
            places.append(out)
    return places


# -- partners for people who registered alone ---------------------------------------------------

def pair_solos(people: Sequence[tuple[int, int]]) -> tuple[list[tuple[int, int]], int | None]:
    """People who asked for a partner, as (person, rating): the strongest plays with the
    weakest, the second with the second weakest, and so on, so that the pairs come out as even
    as their ratings allow. With an odd number, the last to register (the last in ``people``,
    which is in registration order) is left without a partner."""
    people = list(people)
    left = None
    if len(people) % 2:
        left = people.pop()[0]
    ranked = sorted(people, key=lambda p: (-p[1], people.index(p)))
    n = len(ranked)
    return [(ranked[i][0], ranked[n - 1 - i][0]) for i in range(n // 2)], left


# -- prizes -------------------------------------------------------------------------------------

def prize_shares(places: Sequence[Sequence[int]], split: Sequence[int], pot: int, *,
                 champion: bool = True) -> dict[int, int]:
    """Coins for each team: ``split`` gives place 1, 2, ... its percent of ``pot``; teams
    sharing a place share the prizes of the places they cover in equal parts (two third
    places share the third and fourth prizes). Every coin of the pot is given (what rounding,
    or a place nobody reached, leaves goes to the best placed team); with nobody placed at
    all, nothing is (the caller refunds).

    Without a ``champion`` (a knockout final nobody won) nobody gets what would have been the
    winner's: the first prize, the rounding and the places nobody reached. The teams placed
    first (the two finalists) share the prizes of the places they cover but the first; the
    caller gives back what is left (:func:`returned_shares`)."""
    amounts = [pot * pct // 100 for pct in split]
    if not champion and amounts:
        amounts[0] = 0
    out: dict[int, int] = {}
    start = 0
    for group in places:
        share = sum(amounts[start:start + len(group)]) // len(group)
        for team in group:
            out[team] = out.get(team, 0) + share
        start += len(group)
    if champion and places and places[0]:
        best = places[0][0]
        out[best] = out.get(best, 0) + pot - sum(out.values())
    return {t: c for t, c in out.items() if c}


def returned_shares(coins: int, entries: Sequence[tuple[int, int]]) -> dict[int, int]:
    """``coins`` given back to whoever paid the entries, ``entries`` as (payer, entries paid)
    in the order they paid: the same part for each entry, and what does not divide one coin
    for each of the first entries paid."""
    paid = [payer for payer, n in entries for _entry in range(n)]
    if not paid:
        return {}
    each, rest = divmod(coins, len(paid))
    out: dict[int, int] = {}
    for k, payer in enumerate(paid):
        out[payer] = out.get(payer, 0) + each + (1 if k < rest else 0)
    return {p: c for p, c in out.items() if c}


def split_between(coins: int, people: Sequence[int]) -> dict[int, int]:
    """A team's prize between its people: equal parts, the remainder to the first."""
    share, rest = divmod(coins, len(people))
    return {p: share + (rest if i == 0 else 0) for i, p in enumerate(people)}
