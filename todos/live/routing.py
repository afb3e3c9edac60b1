"""The live Board's websocket routes (mounted by ``board/routing.py``)."""

from django.urls import path

from todos.live.consumer import BoardConsumer

websocket_urlpatterns = [
    path("ws/board/", BoardConsumer.as_asgi(), name="live-board"),
]
