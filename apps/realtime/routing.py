from django.urls import path

from apps.realtime import consumers

# WebSocket routes, mounted by config/asgi.py under AllowedHostsOriginValidator and
# AuthMiddlewareStack. Table sockets are added here.
websocket_urlpatterns = [
    path("ws/ping/", consumers.PingConsumer.as_asgi()),
]
