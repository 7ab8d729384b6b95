"""``ws/tournament/<id>/``: a tournament page's doorbell (docs/tournaments.md, "The page").

The socket carries no state: when the tournament changes (a registration, a round, a game
decided, a match started or a round dealt at one of its tables) the services ring the
tournament's group (``apps.tournaments.notify``) after their commit, and every page on it gets
``{"type": "changed"}`` and reads the page's live part again. It accepts ``ping`` only.
Signed-in people only, as every socket of the site; the page itself is public.
"""

from __future__ import annotations

import contextlib

from django.utils.translation import gettext_lazy as _

from apps.core.protocol import NOT_FOUND_CLOSE_CODE, SIGNED_OUT_CLOSE_CODE
from apps.tournaments.models import Tournament
from apps.tournaments.notify import group

from .consumers import CLOSE_REASONS, SafeConsumer, join_group
from .hub import db


def _exists(tournament_id: int) -> bool:
    return Tournament.objects.filter(pk=tournament_id).exists()


class TournamentConsumer(SafeConsumer):
    handlers = {"ping": "on_ping"}
    close_reasons = {**CLOSE_REASONS,
                     NOT_FOUND_CLOSE_CODE: _("This tournament does not exist.")}

    async def connect(self) -> None:
        self.user = self.scope.get("user")
        self.joined = False
        await self.accept()
        if self.user is None or not self.user.is_authenticated:
            await self.close(code=SIGNED_OUT_CLOSE_CODE)
            return
        self.tournament_id = int(self.scope["url_route"]["kwargs"]["tournament_id"])
        if not await db(_exists, self.tournament_id):
            await self.close(code=NOT_FOUND_CLOSE_CODE)
            return
        await join_group(self.channel_layer, group(self.tournament_id), self.channel_name)
        self.joined = True
        # Whatever changed while the page was loading or reconnecting: read it now.
        await self.send_json({"type": "changed"})

    async def cleanup(self) -> None:
        if self.joined:
            self.joined = False
            with contextlib.suppress(Exception):
                await self.channel_layer.group_discard(group(self.tournament_id),
                                                       self.channel_name)

    async def tournament_changed(self, event: dict) -> None:
        await self.send_json({"type": "changed"})
