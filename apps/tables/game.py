"""Between the database and the rules engine: a stored match as a record, and back."""

from __future__ import annotations

import functools
import json
import random

from apps.rules import harness
from apps.rules.engine import Match as EngineMatch
from apps.rules.engine import deal
from apps.rules.presets import Rules, make_rules
from apps.rules.tiles import NAMES

from . import rows
from .models import Match, Round, Table

_deal_source = random.SystemRandom()


def rules_for(table: Table) -> Rules:
    return _rules(json.dumps({"preset": table.preset, **table.options}, sort_keys=True),
                  table.players)


def match_rules(match: Match) -> Rules:
    return _rules(json.dumps(match.rules, sort_keys=True), match.players)


@functools.lru_cache(maxsize=256)
def _rules(options: str, players: int) -> Rules:
    # A table's rules are checked once per process, not on every move.
    return make_rules(json.loads(options), players)


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
    """Rebuild the engine's match from the stored deals and moves (the moves are the truth).

    Replays every round: for checking and repair. Play goes through :func:`restore`.
    """
    return harness.load(record_of(match))


def restore(match: Match) -> EngineMatch:
    """The engine's match where its last stored move left it, from ``Match.position``.

    A match without a saved position (none should be left: migration 0005 gave every old match
    one) is replayed once and its position saved.
    """
    if match.position is None:
        engine = load(match)
        last = match.rounds.filter(voided=False).order_by("-number").first()
        if last is not None:
            save_position(match, engine, last.pk)
        return engine
    return EngineMatch.from_state(match_rules(match), match.position["engine"])


def round_id(match: Match) -> int:
    """The id of the round the saved position is in."""
    return match.position["round_id"]


def position_of(match: Match, engine: EngineMatch, rnd_id: int) -> dict:
    """The engine's position to keep beside the moves (set on ``match``; the caller writes
    it in the transaction that wrote them)."""
    match.position = {"round_id": rnd_id, "engine": engine.to_state()}
    return match.position


def save_position(match: Match, engine: EngineMatch, rnd_id: int) -> None:
    """Keep the engine's position beside the moves; call it in the transaction that wrote
    them."""
    rows.update(Match, match.pk, position=position_of(match, engine, rnd_id))


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
