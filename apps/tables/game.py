"""Between the database and the rules engine: a stored match as a record, and back."""

from __future__ import annotations

import random

from apps.rules import harness
from apps.rules.engine import Match as EngineMatch
from apps.rules.engine import deal
from apps.rules.presets import Rules, make_rules
from apps.rules.tiles import NAMES

from .models import Match, Round, Table

_deal_source = random.SystemRandom()


def rules_for(table: Table) -> Rules:
    return make_rules({"preset": table.preset, **table.options}, table.players)


def record_of(match: Match) -> dict:
    """The match in the harness format: the same JSON the site offers for download."""
    rounds = []
    for rnd in match.rounds.filter(voided=False).order_by("number").prefetch_related("moves"):
        rounds.append({
            "hands": rnd.hands,
            "boneyard": rnd.boneyard,
            "opener": rnd.opener,
            "moves": [m.as_record() for m in rnd.moves.all()],
        })
    return {"rules": dict(match.rules), "players": match.players, "rounds": rounds}


def load(match: Match) -> EngineMatch:
    """Rebuild the engine's match from the stored deals and moves (the moves are the truth)."""
    return harness.load(record_of(match))


def deal_round(match: Match, engine: EngineMatch, seat_users: list[int | None]) -> Round:
    """Shuffle with a cryptographic source, start the round in the engine, and store it."""
    hands, boneyard, random_opener = deal(engine.rules, _deal_source)
    derived, _forced = engine.opener_for(hands)
    rnd = engine.start_round(hands, boneyard, random_opener if derived is None else None)
    return Round.objects.create(
        match=match,
        number=len(engine.rounds) - 1,
        hands=[[NAMES[t] for t in h] for h in hands],
        boneyard=[NAMES[t] for t in boneyard],
        opener=rnd.opener,
        seat_users=seat_users,
    )



def bot_rng() -> random.Random:
    """A fresh generator per decision: bots in live play need no reproducibility."""
    return random.Random(_deal_source.getrandbits(64))
