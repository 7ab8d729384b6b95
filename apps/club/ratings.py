"""Skill ratings with openskill's Plackett-Luce model (docs/club.md says why this one).

openskill rates teams natively, so a pairs match is one team result for both partners; it
handles two to four sides and shared ranks, and is MIT-licensed, pure Python, maintained.
A bot seat plays as a fixed-strength opponent (``numbers.BOT_MU``/``BOT_SIGMA``): it pulls
its team's strength as a person of that rating would, and its own update is thrown away.
"""

from __future__ import annotations

from functools import cache

from openskill.models import PlackettLuce

from . import numbers


@cache
def model() -> PlackettLuce:
    return PlackettLuce()


def shown(mu: float, sigma: float) -> int:
    return round(numbers.RATING_BASE + numbers.RATING_SCALE * (mu - 3 * sigma))


def initial() -> tuple[float, float]:
    fresh = model().rating()
    return fresh.mu, fresh.sigma


def rate(teams: list[list[tuple[float, float] | None]],
         ranks: list[int]) -> list[list[tuple[float, float] | None]]:
    """New (mu, sigma) for each member of each team, best rank 1; a None member is a bot,
    rated as the fixed bot and given back as None."""
    m = model()
    rated = [[m.rating(mu=numbers.BOT_MU, sigma=numbers.BOT_SIGMA) if p is None
              else m.rating(mu=p[0], sigma=p[1]) for p in team] for team in teams]
    out = m.rate(rated, ranks=ranks)
    return [[None if p is None else (new.mu, new.sigma) for p, new in zip(team, new_team,
                                                                          strict=True)]
            for team, new_team in zip(teams, out, strict=True)]
