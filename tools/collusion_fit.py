"""The collusion benchmark's arithmetic on judged positions: the honest rates fitted from honest
pairs, and pairs' verdicts under a fitted table, in sample and cross-fitted.

Each judged match of a benchmark pair keeps its positions (``judge_record(..., entries=True)``:
``[seat, split, own_gap, knowing_gap, margin, picked]``), so the test's constants can be fitted
and checked again without playing or judging anything. The honest rates that the site uses
(:data:`apps.bots.collusion.HONEST_RATE`) are :func:`fit` of every honest pair of the run in
docs/collusion.md; the error rate that run shows is :func:`crossfit`'s: each honest pair judged
by a table fitted on the *other* half of the honest pairs, so no pair helps set the rate it is
tested against.
"""

from __future__ import annotations

import math

from apps.bots import collusion

HONEST = ("easy", "medium", "expert", "master", "noisy")


def match_counts(entries: list) -> collusion.Counts:
    """One match's counts from its judged positions, by the site's rules of today."""
    total = collusion.Counts()
    for _seat, split, own_gap, knowing_gap, margin, picked in entries:
        entry = {"telling": collusion.tells(split=bool(split), own_gap=own_gap), "picked": picked,
                 "own_gap": own_gap, "knowing_gap": knowing_gap, "margin": margin}
        total.add(collusion.count(entry))
    return total


def pair_matches(result: dict) -> list[collusion.Counts]:
    return [match_counts(entries) for entries in result["positions"]]


def flagged_at(matches: list[collusion.Counts], table: dict | None = None) -> int | None:
    """After which match a pair is first flagged, looked at after every match (None: never)."""
    total = collusion.Counts()
    for m, c in enumerate(matches):
        total.add(c)
        if collusion.verdict(total, table)["flagged"]:
            return m + 1
    return None


def evaluate(results: list[dict], table: dict | None = None) -> list[dict]:
    """Every pair's verdict under ``table`` (None: the site's), looked at after every match."""
    out = []
    for r in results:
        matches = pair_matches(r)
        total = collusion.Counts()
        for c in matches:
            total.add(c)
        at = flagged_at(matches, table)
        out.append({**r, "counts": total.as_dict(),
                    "verdict": {**collusion.verdict(total, table), "flagged": at is not None},
                    "flagged_at": at})
    return out


def fit(results: list[dict], z: float = 2.0) -> dict:
    """The honest rate per own-gap class as a line in strength, ``{class: (at 0, slope)}``.

    The honest pairs are pooled per (level, opponents' level) combination. Per class, a line
    through the rates of the combinations at strength :data:`~apps.bots.collusion.WEAK` or more
    (weighted by their picks; weaker play gets the cap, :func:`~apps.bots.collusion.
    honest_rate`), then raised until no combination's rate is above it by more than ``z`` of
    its standard errors: the line is the honest rate, not the highest combination's sampled
    rate, because a combination's rate over a few hundred picks is itself a sample."""
    combos: dict[tuple[str, str], collusion.Counts] = {}
    for r in results:
        if r["pair"] not in HONEST:
            continue
        total = combos.setdefault((r["pair"], r["opponents"]), collusion.Counts())
        for c in pair_matches(r):
            total.add(c)
    table = {}
    for own_class in collusion.OWN_CLASSES:
        points = []  # (strength, rate, picks)
        for c in combos.values():
            k = o = 0
            for key, (kk, oo) in c.cells.items():
                if collusion.classes(key)[0] == own_class:
                    k, o = k + kk, o + oo
            if k + o and collusion.strength(c) >= collusion.WEAK:
                points.append((collusion.strength(c), k / (k + o), k + o))
        w = sum(n for _s, _r, n in points)
        ms = sum(s * n for s, _r, n in points) / w
        mr = sum(r * n for _s, r, n in points) / w
        var = sum(n * (s - ms) ** 2 for s, _r, n in points)
        slope = min(0.0, sum(n * (s - ms) * (r - mr) for s, r, n in points) / var) if var \
            else 0.0
        at0 = mr - slope * ms
        raise_by = max(r - z * math.sqrt(r * (1 - r) / n) - (at0 + slope * s)
                       for s, r, n in points)
        table[own_class] = (round(at0 + max(0.0, raise_by), 3), round(slope, 3))
    return table


def crossfit(results: list[dict], folds: int = 2) -> tuple[list[dict], list[dict]]:
    """Every pair judged by a table fitted on the honest pairs of the other folds (by seed):
    (the verdicts, the tables)."""
    out, tables = [], []
    for f in range(folds):
        train = [r for r in results if r["seed"] % folds != f]
        table = fit(train)
        tables.append(table)
        out.extend(evaluate([r for r in results if r["seed"] % folds == f], table))
    return out, tables
