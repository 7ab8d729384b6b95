"""Seeded random play through the engine, written out as harness records."""

from __future__ import annotations

import random

from apps.rules.engine import Match, deal
from apps.rules.presets import make_rules
from apps.rules.tiles import NAMES


def random_match_record(options: dict, players: int | None, seed: int,
                        max_rounds: int = 60) -> dict:
    """Play a whole match at random and return it as a record."""
    rng = random.Random(seed)
    rules = make_rules(options, players)
    match = Match(rules)
    rounds = []
    while not match.over and len(rounds) < max_rounds:
        hands, boneyard, opener = deal(rules, rng)
        given = opener if (rules.first_opener == "random" and not match.rounds) else None
        rnd = match.start_round(hands, boneyard, given)
        while rnd.result is None:
            match.play(*rng.choice(rnd.legal()))
        entry = {"hands": [[NAMES[t] for t in h] for h in hands],
                 "boneyard": [NAMES[t] for t in boneyard],
                 "moves": rnd.public_moves}
        if given is not None:
            entry["opener"] = given
        rounds.append(entry)
    rec = {"rules": dict(options), "rounds": rounds}
    if players is not None:
        rec["players"] = players
    return rec
