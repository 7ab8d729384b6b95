"""``ws/tournament/<id>/``: a tournament page's doorbell (docs/tournaments.md, "The page").

The socket carries no state: when the tournament changes (a registration, a round, a game
decided, a match started or a round dealt at one of its tables) the services ring the
tournament's group (``apps.tournaments.notify``) after their commit, and every page on it gets
``{"type": "changed"}`` and reads the page's live part again. It accepts ``ping`` only.
Signed-in people only, as every socket of the site; the page itself is public. As every
socket of the person, it is refused to a banned person and closed by a ban (4403: it hears the
person's group for that), and answers in their language. A ring lost on the way is made good
by the web process's heartbeat (``Hub.follow``): the page is told again when what it shows
(:func:`live_mark`) is not what it was told.
"""

from __future__ import annotations

import contextlib
import logging

from django.db.models import OuterRef, Subquery
from django.utils.translation import gettext_lazy as _

from apps.core.doorbell import user_group
from apps.core.outages import OUTAGES, warn
from apps.core.protocol import BANNED_CLOSE_CODE, NOT_FOUND_CLOSE_CODE, SIGNED_OUT_CLOSE_CODE
from apps.tables.models import Match
from apps.tournaments.models import Game, Tournament
from apps.tournaments.notify import group

from .consumers import CLOSE_REASONS, SafeConsumer, join_group, scope_language, standing_of
from .hub import db, hub

log = logging.getLogger(__name__)


def live_mark(tournament_id: int) -> tuple | None:
    """What the page's live part shows, in short, to tell whether a page missed a ring: the
    tournament's version (its own rows), and each live table's state and latest score (a
    match starting or a round ending at one rings without a version). None once it is gone."""
    version = Tournament.objects.filter(pk=tournament_id).values_list("version", flat=True).first()
    if version is None:
        return None
    latest = Match.objects.filter(table_id=OuterRef("table_id")).order_by("-number")
    tables = (Game.objects.filter(round__tournament_id=tournament_id, finished_at__isnull=True,
                                  table__isnull=False)
              .order_by("pk").values_list("table_id", "table__state",
                                          Subquery(latest.values("scores")[:1])))
    return version, list(tables)


def _opening(user, tournament_id: int) -> tuple[bool, bool, str | None]:
    """Whether the tournament exists; whether the person is banned, and their language."""
    return (Tournament.objects.filter(pk=tournament_id).exists(), *standing_of(user))


class TournamentConsumer(SafeConsumer):
    handlers = {"ping": "on_ping"}
    #: What this page follows (the hub's ``follow``), the reading of it the page was last told,
    #: and that reading's number.
    follows: int | None = None
    mark: object = None
    read = 0
    read_mark = staticmethod(live_mark)
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
        self.follows = self.tournament_id
        # Whatever changed while the page was loading or reconnecting: read it now.
        await self.tell()
        hub().follow(self)

    def _groups(self) -> tuple[str, str]:
        return group(self.tournament_id), user_group(self.user.pk)

    async def cleanup(self) -> None:
        if self.joined:
            self.joined = False
            hub().unfollow(self)
            for name in self._groups():
                with contextlib.suppress(Exception):
                    await self.channel_layer.group_discard(name, self.channel_name)

    async def tournament_changed(self, event: dict) -> None:
        await self.tell()

    async def tell(self) -> None:
        """Tell the page to read its live part again, knowing what it will read: the mark is
        read first, so the page's read comes after it and a later change shows as another
        mark at the next beat, even if its ring is lost."""
        try:
            self._keep(*await hub().mark(self.follows, self.read_mark))
        except OUTAGES as err:  # the beat reads it again
            warn(log, f"tournament {self.tournament_id}'s live part not read", err)
        await self.send_json({"type": "changed"})

    async def heard(self, number: int, mark) -> None:
        """A beat's reading: the page is told again if it was told an older mark."""
        told = self.mark
        if self._keep(number, mark) and mark != told:
            await self.send_json({"type": "changed"})

    def _keep(self, number: int, mark) -> bool:
        if number <= self.read:
            return False  # a reading older than the one the page was told
        self.read, self.mark = number, mark
        return True

    async def user_banned(self, event: dict) -> None:
        await self.close(code=BANNED_CLOSE_CODE)

    async def user_notified(self, event: dict) -> None:
        """The person's notices (invitations, mutes) are for their other pages."""
