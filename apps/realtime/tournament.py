"""``ws/tournament/<id>/``: a tournament page's doorbell (docs/tournaments.md, "The page").

The socket carries no state: when the tournament changes (a registration, a round, a game
decided, a match started or a round dealt at one of its tables) the services ring the
tournament's group (``apps.tournaments.notify``) after their commit, and every page on it gets
``{"type": "changed"}`` and reads the page's live part again. It accepts ``ping`` only.
Signed-in people only, as every socket of the site; the page itself is public. As every
socket of the person, it is refused to a banned person and closed by a ban (4403: it hears the
person's group for that), and answers in their language.
"""

from __future__ import annotations

import contextlib

from django.utils.translation import gettext_lazy as _

from apps.core.doorbell import user_group
from apps.core.protocol import BANNED_CLOSE_CODE, NOT_FOUND_CLOSE_CODE, SIGNED_OUT_CLOSE_CODE
from apps.tournaments.models import Tournament
from apps.tournaments.notify import group

from .consumers import CLOSE_REASONS, SafeConsumer, join_group, scope_language, standing_of
from .hub import db


def _opening(user, tournament_id: int) -> tuple[bool, bool, str | None]:
    """Whether the tournament exists; whether the person is banned, and their language."""
    return (Tournament.objects.filter(pk=tournament_id).exists(), *standing_of(user))


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
        found, banned, language = await db(_opening, self.user, self.tournament_id)
        self.language = language or scope_language(self.scope)
        if banned:
            await self.close(code=BANNED_CLOSE_CODE)
            return
        if not found:
            await self.close(code=NOT_FOUND_CLOSE_CODE)
            return
        self.joined = True  # from the first group on, the cleanup leaves what was joined
        for name in self._groups():
            await join_group(self.channel_layer, name, self.channel_name)
        # Whatever changed while the page was loading or reconnecting: read it now.
        await self.send_json({"type": "changed"})

    def _groups(self) -> tuple[str, str]:
        return group(self.tournament_id), user_group(self.user.pk)

    async def cleanup(self) -> None:
        if self.joined:
            self.joined = False
            for name in self._groups():
                with contextlib.suppress(Exception):
                    await self.channel_layer.group_discard(name, self.channel_name)

    async def tournament_changed(self, event: dict) -> None:
        await self.send_json({"type": "changed"})

    async def user_banned(self, event: dict) -> None:
        await self.close(code=BANNED_CLOSE_CODE)

    async def user_notified(self, event: dict) -> None:
        """The person's notices (invitations, mutes) are for their other pages."""
