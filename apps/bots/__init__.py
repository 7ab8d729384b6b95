"""Domino bots at four levels, pure Python (no Django), playing from a seat's view only.

``choose_move(view, level, rng)`` returns one of ``view["legal"]``. The view is all a bot gets, so
it cannot know a hidden tile: its belief about other hands comes from the public history alone
(see :mod:`apps.bots.state`), and the same view with the same rng state gives the same move.
"""

from __future__ import annotations

import random

from . import medium, search
from .state import Public

LEVELS = ("easy", "medium", "expert", "master")


def choose_move(view: dict, level: str, rng: random.Random) -> dict:
    """One of the view's legal moves, as the view writes it, chosen at ``level``."""
    legal = view["legal"]
    if not legal:
        raise ValueError("it is not this seat's turn: the view has no legal move")
    if level not in LEVELS:
        raise ValueError(f"unknown bot level {level!r}; the levels are {', '.join(LEVELS)}")
    if level == "easy":
        return dict(rng.choice(legal))
    if len(legal) == 1:
        return dict(legal[0])
    pub = Public(view)
    if level == "medium":
        index = medium.choose(pub, rng)
    else:
        index = search.choose(pub, rng, level)
    return dict(legal[index])


__all__ = ["LEVELS", "choose_move"]
