"""The tournament page's doorbell: a change bumps the tournament's version in its transaction
and, after the commit, rings the tournament's group; the page's socket
(``apps.realtime.tournament``) tells the page, which reads the tournament's JSON again."""

from __future__ import annotations

from django.db import transaction
from django.db.models import F

from apps.core.doorbell import send_to_group

from .models import Tournament


def group(tournament_id: int) -> str:
    return f"tournament.{tournament_id}"


def ring(tournament_id: int) -> None:
    """Ring now (or after the commit, inside a transaction): something the page shows
    changed outside the tournament's rows (a table's score, a match started)."""
    transaction.on_commit(lambda: send_to_group(group(tournament_id),
                                                {"type": "tournament.changed"}))


def changed(tournament: Tournament) -> None:
    """A change of the tournament's own rows, in the caller's transaction."""
    Tournament.objects.filter(pk=tournament.pk).update(version=F("version") + 1)
    ring(tournament.pk)
