from channels.generic.websocket import AsyncWebsocketConsumer


class PingConsumer(AsyncWebsocketConsumer):
    """Echo consumer used by the smoke test: each text frame makes a round trip through the
    channel layer (Redis) before it is sent back, so it proves socket + layer both work."""

    async def connect(self):
        await self.accept()

    async def receive(self, text_data=None, bytes_data=None):
        await self.channel_layer.send(self.channel_name, {"type": "echo", "text": text_data or ""})

    async def echo(self, event):
        await self.send(text_data=event["text"])
