"""A saved position plays on exactly as the match it was saved from.

The site keeps each match's position (``Match.to_state``) beside its moves so that a move never
replays the round; these properties are what makes that cache safe. No Django.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.rules import harness
from apps.rules.engine import Match, deal
from apps.rules.presets import make_rules
from apps.rules.view import seat_view

from .play import random_match_record
from .test_properties import CONFIGS, IDS


def _saved(match: Match) -> Match:
    # Through JSON, as the database stores it.
    return Match.from_state(match.rules, json.loads(json.dumps(match.to_state())))


def _same(a: Match, b: Match) -> None:
    assert a.scores() == b.scores() and a.games == b.games
    assert (a.over, a.winner, a.next_opener()) == (b.over, b.winner, b.next_opener())
    assert len(a.rounds) == len(b.rounds)
    if a.rounds:
        for seat in range(a.rules.players):
            assert seat_view(a, seat) == seat_view(b, seat)
        assert a.rounds[-1].result == b.rounds[-1].result


@pytest.mark.parametrize(("preset", "players", "options"), CONFIGS, ids=IDS)
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cut=st.floats(0, 1))
def test_a_position_saved_at_any_move_plays_on_identically(preset, players, options, seed,
                                                           cut):
    rng = random.Random(seed)
    rules = make_rules({"preset": preset, **options}, players)
    original = Match(rules)
    restored: Match | None = None
    plies = 0
    while not original.over and len(original.rounds) < 12:
        hands, boneyard, opener = deal(rules, rng)
        derived, _forced = original.opener_for(hands)
        for m in (original, restored):
            if m is not None:
                m.start_round(hands, boneyard, opener if derived is None else None)
        while original.current is not None:
            if restored is None and rng.random() < cut / 10:
                restored = _saved(original)
            move = rng.choice(original.current.legal())
            original.play(*move)
            if restored is not None:
                restored.play(*move)
                _same(original, restored)
            plies += 1
        if restored is None and rng.random() < cut:
            restored = _saved(original)  # between rounds: the next deal must agree too
    if restored is not None:
        _same(original, restored)


def test_the_saved_position_holds_what_a_replay_of_the_record_gives():
    rec = random_match_record({"preset": "all-fives"}, 3, seed=7)
    replayed = harness.load(rec)
    restored = _saved(replayed)
    _same(replayed, restored)
    assert restored.rounds[:-1] == [None] * (len(replayed.rounds) - 1)
