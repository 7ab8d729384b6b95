"""Who is at the other end of a socket, read without queueing behind every other socket.

channels' ``AuthMiddleware`` reads the session and the user on Django's single sync thread (its
``get_user`` is ``database_sync_to_async``), so a burst of connects (a web process restarting,
hundreds of pages coming back at once) waits in one line. This reads them on the process's
database threads (``apps.realtime.hub.db``), as every other call of the sockets does.
"""

from __future__ import annotations

from channels.auth import AuthMiddleware, get_user
from channels.sessions import CookieMiddleware, SessionMiddleware

from .hub import db


class ThreadedAuthMiddleware(AuthMiddleware):
    async def resolve_scope(self, scope):
        scope["user"]._wrapped = await db(get_user.func, scope)


def AuthStack(inner):  # noqa: N802  (named like channels' AuthMiddlewareStack)
    return CookieMiddleware(SessionMiddleware(ThreadedAuthMiddleware(inner)))
