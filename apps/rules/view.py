"""What one seat may know: its own hand and the public table, never another hidden tile."""

from __future__ import annotations

from .engine import Match, Round, legal_dict
from .tiles import NAMES


def side_dict(rules, side: int | None) -> dict | None:
    if side is None:
        return None
    return {"team": side} if rules.partners else {"seat": side}


def draws_list(rnd: Round) -> list[dict]:
    return [{"seat": s, "count": c, "before_move": k} for s, c, k in rnd.draws]


def passed_on(rnd: Round) -> dict[str, list[int]]:
    return {str(s): rnd.passed_numbers(s) for s in range(rnd.n) if rnd.passed_on[s]}


def seat_view(match: Match, seat: int) -> dict:
    """The view of ``seat`` on the last round of ``match``: the only thing a client is given."""
    view = public_view(match)
    view.update(private_part(match, seat))
    return view


def public_view(match: Match) -> dict:
    """What anyone at the table may see of the last round: a view with no hand in it.

    ``seat`` is None, ``hand`` and ``legal`` are empty; a seat's view is this plus
    :func:`private_part`, so a site can build it once for every seat and watcher.
    """
    rnd = match.rounds[-1]
    over = rnd.result is not None
    return {
        "seat": None,
        "players": match.rules.players,
        "rules": match.rules.options(),
        "round": len(match.rounds) - 1,
        "hand": [],
        "turn": rnd.turn,
        "ends": rnd.open_ends(),
        "moves": [dict(m) for m in rnd.public_moves],
        "draws": draws_list(rnd),
        "hand_counts": rnd.hand_counts(),
        "boneyard_count": rnd.boneyard_count,
        "passed_on": passed_on(rnd),
        "fives": list(rnd.fives),
        "scores": match.scores(),
        "legal": [],
        "revealed": [[NAMES[t] for t in h] for h in rnd.hands] if over else None,
    }


def private_part(match: Match, seat: int) -> dict:
    """What only ``seat`` may know: its hand, and its legal moves when it is its turn."""
    rnd = match.rounds[-1]
    return {
        "seat": seat,
        "hand": [NAMES[t] for t in rnd.hands[seat]],
        "legal": [legal_dict(t, e) for t, e in rnd.legal()] if rnd.turn == seat else [],
    }
