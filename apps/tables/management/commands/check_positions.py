"""Check that every match's saved position is what a replay of its moves gives.

The moves are the truth; ``Match.position`` is what a move plays on from. This replays every
match (or those of ``--table``), compares, and with ``--repair`` writes the replayed position
where they differ. Exit status 1 when a mismatch was found (and not repaired).
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from apps.tables import game
from apps.tables.models import Match


def mismatches(matches) -> list[Match]:
    """The matches whose saved position differs from a replay of their moves."""
    wrong = []
    for match in matches:
        replayed = game.load(match)
        last = match.rounds.filter(voided=False).order_by("-number").first()
        saved = match.position or {}
        if saved.get("engine") != _plain(replayed.to_state()) \
                or saved.get("round_id") != (last.pk if last else None):
            wrong.append(match)
    return wrong


def _plain(state: dict) -> dict:
    import json

    return json.loads(json.dumps(state))  # as the database gives it back: tuples are lists


class Command(BaseCommand):
    help = "Replay every match from its moves and compare with its saved position."

    def add_arguments(self, parser):
        parser.add_argument("--table", type=int, help="only this table's matches")
        parser.add_argument("--repair", action="store_true",
                            help="save the replayed position where it differs")

    def handle(self, *args, **options):
        matches = Match.objects.order_by("pk")
        if options["table"]:
            matches = matches.filter(table_id=options["table"])
        wrong = mismatches(matches.iterator())
        for match in wrong:
            self.stdout.write(f"table {match.table_id} match {match.number}: position differs")
            if options["repair"]:
                engine = game.load(match)
                last = match.rounds.filter(voided=False).order_by("-number").first()
                game.save_position(match, engine, last.pk if last else None)
        self.stdout.write(f"{matches.count()} matches checked, {len(wrong)} differed")
        if wrong and not options["repair"]:
            raise CommandError("saved positions differ from the moves")
