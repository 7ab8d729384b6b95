from django.urls import path

from apps.moderation.consumers import ObserverConsumer
from apps.realtime import consumers

# WebSocket routes, mounted by config/asgi.py under AllowedHostsOriginValidator and
# AuthMiddlewareStack.
websocket_urlpatterns = [
    path("ws/table/<int:table_id>/", consumers.TableConsumer.as_asgi()),
    path("ws/me/", consumers.MeConsumer.as_asgi()),
    path("ws/observe/<int:table_id>/", ObserverConsumer.as_asgi()),  # staff (moderation)
]
