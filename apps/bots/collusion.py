"""Partners who see each other's tiles: the moves that tell, and a test with a stated error rate.

A player who cannot see their partner's hand chooses from their own view; one who is told it
(a phone call, a second screen, one person on two accounts) chooses from the *knowing* view: their
view plus their partner's hand. Most moves are the same from both views. Where the two views'
best moves differ by enough (a **telling position**), an honest player picks the knowing view's
move only as often as their own judgement happens to land there; a colluder picks it far more
often. This module finds those positions in a finished match's record (the harness format of
``shared/specs/harness.md``, as the site's ``record.json`` gives it) and keeps the counts; the
test on the counts is :func:`verdict`. ``docs/collusion.md`` has the numbers and how they were
measured (``python -m tools.bench_collusion``).

Each move of a partnership seat with a choice is judged twice with the review's machinery
(:func:`apps.bots.search.estimate`, every candidate on the same deals, no halving): from the
seat's view, and from the same view with the partner's hand known (:class:`~apps.bots.state.
Public` with ``known``), so only the opponents' hands and the boneyard are sampled. The own
view's best move is ``own``, the knowing view's ``knowing``. The position tells when they lead
to different positions and the own view rates ``own`` at least :data:`OWN_GAP` points better
than ``knowing`` (on paired deals). A telling position's class is its own view's gap (how
clearly an honest player should keep to their own move) and its knowing view's gap (how much
the partner's hand says to change it): the test weighs each class with its own rates.

Counts (per seat, summed per pair or per person over partners):

- ``judged``: moves with a choice; ``plain``: those that do not tell and where the own view's
  best beats its second best by :data:`STRENGTH_MARGIN` points, ``plain_agree``: of them, the
  ones where the move played was ``own`` (the player's strength, :func:`strength`);
- ``telling``: telling positions; ``knowing`` / ``own`` / ``other``: what was played there;
- ``cells``: the knowing and own picks per class (:func:`cell`).

Pure Python, no Django: the site's worker calls :func:`judge_record` and :func:`verdict`.
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass, field, fields

from apps.rules import harness
from apps.rules.engine import Match
from apps.rules.errors import RuleError
from apps.rules.presets import make_rules
from apps.rules.tiles import parse_tile
from apps.rules.view import seat_view

from . import search
from .review import engine_move, position_key
from .state import Public

VERSION = 2

#: The evaluator's budget: ``min_deals`` rollouts per candidate, the same deals for each (no
#: halving, no exact endings), the master's playouts and inference. The review's budget gives
#: at least 450 deals and exact endings: too dear for every match of the site (docs/capacity.md);
#: docs/collusion.md says how often the two agree on which positions tell, and why fewer deals
#: than these will not do.
BUDGET = search.Budget(playouts=0, min_deals=80, exact_tiles=0, blocking=True, halving=False,
                       infer=0.7)
#: A position tells when the own view rates its own best at least this many points above the
#: knowing view's best (where the own view hardly prefers its move, honest players split about
#: evenly between the two and the position says little).
OWN_GAP = 1.0
#: A plain position measures strength when the own view's best beats its second best by this
#: many points (where the moves are near equal, any choice is as good).
STRENGTH_MARGIN = 2.0

#: Telling positions fall into classes by the two gaps: the own view's (how clearly an honest
#: player should prefer their own move: class edges in points) ...
OWN_CLASSES = (1.0, 2.0, 4.0, 8.0)
#: ... and the knowing view's (how much a colluder gains by the other move).
KNOWING_CLASSES = (0.0, 3.0, 6.0)
#: Honest play's rate of picking the knowing move, per own-gap class, as a line in strength
#: (the share of plain moves played as the own view's best): ``(at 0, slope)``, fitted on the
#: 200 honest pairs of the benchmark's run (docs/collusion.md: ``python -m
#: tools.bench_collusion --replay ... --fit``, :func:`tools.collusion_fit.fit`). The honest
#: rate falls as the own view's preference grows and as the player gets stronger.
HONEST_RATE = {1.0: (0.507, -0.002), 2.0: (0.547, -0.147), 4.0: (0.638, -0.382),
               8.0: (0.889, -0.919)}
#: An honest rate is kept within these bounds, whatever the line says.
RATE_BOUNDS = (0.05, 0.65)
#: Below this strength (play not far from random: the easy bot's is 0.4) the honest rate is the
#: upper bound in every class: such players split about evenly between any two moves, and the
#: lines are fitted on stronger play only.
WEAK = 0.5
#: An always-peeking expert's rate of picking the knowing move, per knowing-gap class.
PEEK_RATE = {0.0: 0.52, 3.0: 0.62, 6.0: 0.82}
#: The colluder the test is tuned for peeks on this share of their moves: their rate is
#: ``p0 + PEEK_SHARE * (PEEK_RATE - p0)``, at least ``p0 + MIN_LIFT``. (Those who peek more are
#: caught sooner; the error rate does not depend on this choice, only the power does.)
PEEK_SHARE = 1 / 3
MIN_LIFT = 0.03
#: The test's false-flag bound: an honest pair whose rate is at most the honest rate is ever
#: flagged with probability at most ALPHA (Ville's inequality: the likelihood ratio is a
#: martingale under the honest rate), however many matches they play.
ALPHA = 0.01
#: Wald's lower bound (with BETA, the miss rate at the colluder's rate): below it the pair is
#: "clear" for now; the counting goes on.
BETA = 0.05
#: No flag on fewer picks than this, whatever the ratio.
MIN_PICKS = 30

PARTNER_OF = {0: 2, 1: 3, 2: 0, 3: 1}


@dataclass
class Counts:
    judged: int = 0
    plain: int = 0
    plain_agree: int = 0
    telling: int = 0
    knowing: int = 0
    own: int = 0
    other: int = 0
    #: The telling positions' picks by class: ``"own class:knowing class"`` (the classes' lower
    #: edges) to ``[knowing, own]``.
    cells: dict[str, list[int]] = field(default_factory=dict)

    def add(self, other: Counts) -> Counts:
        for f in fields(self):
            if f.name == "cells":
                for key, (k, o) in other.cells.items():
                    mine = self.cells.setdefault(key, [0, 0])
                    mine[0] += k
                    mine[1] += o
            else:
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        return self

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def of(cls, data: dict) -> Counts:
        return cls(**{f.name: int(data.get(f.name, 0)) for f in fields(cls) if f.name != "cells"},
                   cells={k: [int(v[0]), int(v[1])] for k, v in data.get("cells", {}).items()})


# -- the knowing view ------------------------------------------------------------------------

def partner(rules, seat: int) -> int | None:
    """The seat's partner, or None at a table without partners."""
    if not rules.partners or rules.players != 4:
        return None
    return PARTNER_OF[seat]


def knowing_public(view: dict, partner_seat: int, partner_hand: list[int]) -> Public:
    """The seat's view with its partner's hand known: what a colluder chooses from."""
    return Public(view, known={partner_seat: list(partner_hand)})


# -- judging one move ------------------------------------------------------------------------

def _index(pub: Public, est: search.Estimate, key: tuple[int, int]) -> int | None:
    for k, c in enumerate(est.candidates):
        if position_key(pub, pub.legal[c]) == key:
            return k
    return None


def _gap(values: list[list[float]], better: int, worse: int) -> float:
    a, b = values[better], values[worse]
    n = min(len(a), len(b))
    return sum(a[i] - b[i] for i in range(n)) / n if n else 0.0


def judge(view: dict, partner_seat: int, partner_hand: list[int], move: tuple[int, int],
          rng_seed: str, budget: search.Budget = BUDGET) -> dict | None:
    """What the two views make of one move (``move`` as the engine took it), or None when the
    seat had one distinct move (nothing to judge)."""
    own_pub = Public(view)
    if len(search.distinct(own_pub)) < 2:
        return None
    know_pub = knowing_public(view, partner_seat, partner_hand)
    own_est = search.estimate(own_pub, random.Random(f"own:{rng_seed}"), budget)
    know_est = search.estimate(know_pub, random.Random(f"know:{rng_seed}"), budget)
    own_key = position_key(own_pub, own_pub.legal[own_est.candidates[own_est.chosen]])
    know_key = position_key(know_pub, know_pub.legal[know_est.candidates[know_est.chosen]])
    played_key = position_key(own_pub, move)
    picked = ("own" if played_key == own_key else
              "knowing" if played_key == know_key else "other")
    means = [own_est.mean(k) for k in range(len(own_est.candidates))]
    margin = means[own_est.chosen] - max(m for k, m in enumerate(means) if k != own_est.chosen)
    entry = {"telling": False, "picked": picked,
             "own": dict(view["legal"][own_est.candidates[own_est.chosen]]),
             "knowing": dict(view["legal"][know_est.candidates[know_est.chosen]]),
             "own_gap": 0.0, "knowing_gap": 0.0, "margin": round(margin, 1)}
    if own_key == know_key:
        return entry
    k_know_own = _index(know_pub, know_est, own_key)
    k_own_know = _index(own_pub, own_est, know_key)
    knowing_gap = _gap(know_est.values, know_est.chosen, k_know_own)
    own_gap = _gap(own_est.values, own_est.chosen, k_own_know)
    entry["knowing_gap"] = round(knowing_gap, 1)
    entry["own_gap"] = round(own_gap, 1)
    entry["telling"] = tells(split=True, own_gap=own_gap)
    return entry


def tells(*, split: bool, own_gap: float) -> bool:
    """Whether a judged position tells: the views' best moves differ (``split``) and the own
    view prefers its own by :data:`OWN_GAP` points or more."""
    return split and own_gap >= OWN_GAP


def count(entry: dict | None) -> Counts:
    """One judged move's contribution to the counts."""
    c = Counts()
    if entry is None:
        return c
    c.judged = 1
    if entry["telling"]:
        c.telling = 1
        setattr(c, entry["picked"], 1)
        if entry["picked"] != "other":
            key = cell(entry["own_gap"], entry["knowing_gap"])
            c.cells[key] = [int(entry["picked"] == "knowing"), int(entry["picked"] == "own")]
    elif entry["margin"] >= STRENGTH_MARGIN:
        c.plain = 1
        c.plain_agree = int(entry["picked"] == "own")
    return c


# -- a whole record --------------------------------------------------------------------------

def positions(record: dict, seats: list[int]):
    """(round index, move index, raw move, the mover's view, the partner's seat and hand, engine
    move) for every move of ``seats`` in a record the harness accepts."""
    rules = make_rules(record["rules"], record.get("players"))
    match = Match(rules)
    for k, raw_round in enumerate(record.get("rounds", [])):
        hands = [[parse_tile(t)[0] for t in hand] for hand in raw_round["hands"]]
        bones = [parse_tile(t)[0] for t in raw_round.get("boneyard", [])]
        rnd = match.start_round(hands, bones, raw_round.get("opener"))
        for i, raw in enumerate(raw_round.get("moves", [])):
            move = engine_move(rnd, raw)
            seat = raw["seat"]
            if seat in seats:
                mate = partner(rules, seat)
                yield k, i, raw, seat_view(match, seat), mate, list(rnd.hands[mate]), move
            match.play(*move, written=raw)


def judge_record(record: dict, *, seats: list[int] | None = None, seed: int = 0,
                 budget: search.Budget = BUDGET, entries: bool = False) -> dict:
    """Every move of ``seats`` (None: all four) judged from both views.

    ``{"ok": true, "version": 1, "counts": {"0": {...}, ...}, "telling": [{"round": 1,
    "index": 7, "seat": 0, "played": {...}, "own": {...}, "knowing": {...}, "own_gap": 2.1,
    "knowing_gap": 6.4, "picked": "knowing"}, ...]}``; a table without partners has nothing to
    judge (empty counts); a record the harness refuses gives its refusal."""
    try:
        harness.load(record)
        rules = make_rules(record["rules"], record.get("players"))
    except RuleError as err:
        return {"ok": False, "error": err.as_dict()}
    if partner(rules, 0) is None:
        return {"ok": True, "version": VERSION, "counts": {}, "telling": []}
    chosen = [0, 1, 2, 3] if seats is None else sorted(set(seats))
    counts = {s: Counts() for s in chosen}
    telling = []
    judged = []
    for k, i, raw, view, mate, mate_hand, move in positions(record, chosen):
        if raw.get("by", "player") != "player":
            continue  # a bot or the table moved for the person: not their choice
        entry = judge(view, mate, mate_hand, move, f"{seed}:{k}:{i}", budget)
        counts[raw["seat"]].add(count(entry))
        if entries and entry is not None:
            judged.append([raw["seat"], int(entry["own"] != entry["knowing"]), entry["own_gap"],
                           entry["knowing_gap"], entry["margin"], entry["picked"]])
        if entry is not None and entry["telling"]:
            telling.append({"round": k + 1, "index": i, "seat": raw["seat"],
                            "played": {x: raw[x] for x in ("play", "end", "pass") if x in raw},
                            **{x: entry[x] for x in ("own", "knowing", "own_gap",
                                                     "knowing_gap", "picked")}})
    out = {"ok": True, "version": VERSION,
           "counts": {str(s): c.as_dict() for s, c in counts.items()}, "telling": telling}
    if entries:
        out["entries"] = judged
    return out


# -- the test ---------------------------------------------------------------------------------

def strength(c: Counts) -> float:
    """The share of plain moves played as the own view's best (0.5 before any)."""
    return c.plain_agree / c.plain if c.plain else 0.5


def _class(value: float, edges: tuple[float, ...]) -> float:
    return max((e for e in edges if value >= e), default=edges[0])


def cell(own_gap: float, knowing_gap: float) -> str:
    """A telling position's class: the lower edges of its own-gap and knowing-gap classes."""
    return f"{_class(own_gap, OWN_CLASSES):g}:{_class(knowing_gap, KNOWING_CLASSES):g}"


def classes(key: str) -> tuple[float, float]:
    """A cell's key back to its (own-gap, knowing-gap) class edges."""
    own_class, knowing_class = key.split(":")
    return float(own_class), float(knowing_class)


def honest_rate(s: float, own_class: float, table: dict | None = None) -> float:
    """The honest rate of picking the knowing move at strength ``s`` in an own-gap class."""
    if s < WEAK:
        return RATE_BOUNDS[1]
    at0, slope = (table or HONEST_RATE)[own_class]
    return min(RATE_BOUNDS[1], max(RATE_BOUNDS[0], at0 + slope * s))


def colluder_rate(p0: float, knowing_class: float) -> float:
    """The rate of the colluder the test is tuned for (:data:`PEEK_SHARE`)."""
    return min(0.95, p0 + max(MIN_LIFT, PEEK_SHARE * (PEEK_RATE[knowing_class] - p0)))


def threshold() -> float:
    """The log likelihood ratio at which a pair is flagged: ln(1 / ALPHA)."""
    return math.log(1 / ALPHA)


def verdict(c: Counts, table: dict | None = None) -> dict:
    """Wald's log likelihood ratio of the counts, colluder against honest, summed over the
    classes of telling positions where one of the two moves was played (each class with its
    own honest rate at the counts' strength and its own colluder's rate); flagged once it
    reaches ln(1/ALPHA). ``p0`` and ``p1`` are the rates' means over the picks (for the
    report)."""
    s = strength(c)
    llr = p0_sum = p1_sum = 0.0
    picks = knowing = 0
    for key, (k, o) in c.cells.items():
        own_class, knowing_class = classes(key)
        p0 = honest_rate(s, own_class, table)
        p1 = colluder_rate(p0, knowing_class)
        llr += k * math.log(p1 / p0) + o * math.log((1 - p1) / (1 - p0))
        picks += k + o
        knowing += k
        p0_sum += (k + o) * p0
        p1_sum += (k + o) * p1
    upper = threshold()
    lower = math.log(BETA / (1 - ALPHA))
    return {"strength": round(s, 3), "p0": round(p0_sum / picks, 3) if picks else None,
            "p1": round(p1_sum / picks, 3) if picks else None,
            "picks": picks, "knowing": knowing, "rate": round(knowing / picks, 3)
            if picks else None, "llr": round(llr, 2), "threshold": round(upper, 2),
            "clear": llr <= lower, "flagged": llr >= upper and picks >= MIN_PICKS}
