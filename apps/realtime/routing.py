from channels.routing import URLRouter
from django.urls import path

from . import consumers
from .me import MeConsumer
from .observer import ObserverConsumer
from .tournament import TournamentConsumer

_no_route = consumers.NoRouteConsumer.as_asgi()


class SocketRouter(URLRouter):
    """channels' URLRouter, except for a path that none of its routes matches: that is the
    client's mistake, yet the router raises for it (Daphne then answers HTTP 500 and logs a
    traceback). Such a socket is closed with 4404 instead (docs/protocol.md, "Opening"). Only
    a path that matches no route gets there: whatever fails inside a route still fails loudly.
    """

    async def __call__(self, scope, receive, send):
        if "path_remaining" not in scope and not self.routes_path(scope):
            return await _no_route(scope, receive, send)
        return await super().__call__(scope, receive, send)

    def routes_path(self, scope: dict) -> bool:
        """Whether a route matches the scope's path, read as URLRouter reads it."""
        path, root_path = scope.get("path", ""), scope.get("root_path", "")
        if root_path and not path.startswith(root_path):
            return False
        path = path[len(root_path):].lstrip("/")
        return any(route.pattern.match(path) for route in self.routes)


# WebSocket routes, mounted by config/asgi.py (in a SocketRouter) under
# AllowedHostsOriginValidator and AuthStack.
websocket_urlpatterns = [
    path("ws/table/<int:table_id>/", consumers.TableConsumer.as_asgi()),
    path("ws/me/", MeConsumer.as_asgi()),
    path("ws/observe/<int:table_id>/", ObserverConsumer.as_asgi()),  # staff (moderation)
    path("ws/tournament/<int:tournament_id>/", TournamentConsumer.as_asgi()),
]
