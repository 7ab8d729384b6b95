"""What the tables do when the apps below them say something happened (their signals)."""

from __future__ import annotations

from . import selectors, services


def person_renamed(sender, *, user_id: int, **kwargs) -> None:
    services.person_renamed(user_id=user_id)


def match_history_part(request) -> dict:
    return {"history": selectors.match_history(user=request.user,
                                               page=request.GET.get("page"))}
