"""``ws/observe/<table id>/``: staff watch any table silently (moderation's right, the table
socket's machinery).

The observer is not a player: no presence (the table neither wakes nor counts them), no
actions, and the state it gets is composed for an observer, the public view, so it never holds
a hand during a round. It accepts ``sync`` and ``ping`` only.
"""

from __future__ import annotations

from apps.accounts.selectors import profile_language
from apps.core.protocol import NOT_FOUND_CLOSE_CODE, SIGNED_OUT_CLOSE_CODE
from apps.moderation.selectors import is_banned
from apps.tables.models import Table

from .consumers import TableSocket, scope_language
from .hub import db


def _may_observe(user, table_id: int) -> tuple[tuple[str, int] | None, str | None]:
    """The table's code and version when ``user`` may observe it; and the language of their
    profile, which the socket answers in."""
    language = profile_language(user)
    if not (user is not None and user.is_authenticated and user.is_active and user.is_staff
            and user.has_perm("moderation.observe_table") and not is_banned(user)):
        return None, language
    return Table.objects.filter(pk=table_id).values_list("code", "version").first(), language


class ObserverConsumer(TableSocket):
    observer = True
    handlers = {"ping": "on_ping", "sync": "on_sync"}
    unknown_code = "observer"

    async def connect(self) -> None:
        self.user = self.scope.get("user")
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        self.sent_version = -1
        self.joined = False
        await self.accept()
        if self.user is None or not self.user.is_authenticated:
            await self.close(code=SIGNED_OUT_CLOSE_CODE)
            return
        found, language = await db(_may_observe, self.user, self.table_id)
        self.language = language or scope_language(self.scope)
        if found is None:
            await self.close(code=NOT_FOUND_CLOSE_CODE)
            return
        await self.start_table(*found)

    async def user_notified(self, event: dict) -> None:
        pass
