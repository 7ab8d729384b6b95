"""What friends tell whoever listens (Django signals), after the commit: the hook a
notifications app connects to, knowing nothing else of this app."""

from django.db import transaction
from django.dispatch import Signal

#: Someone asked someone to be friends: ``request_id``, ``asker_id``, ``asked_id``; sent after
#: the commit (a request refused or rolled back asks nobody).
friend_requested = Signal()


def send_after_commit(signal: Signal, sender, **kwargs) -> None:
    transaction.on_commit(lambda: signal.send(sender=sender, **kwargs))
