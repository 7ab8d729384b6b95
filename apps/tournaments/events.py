"""What the tournaments tell whoever listens (Django signals), once it is committed: the hook
a notifications app would connect to, knowing nothing else of the tournaments."""

from django.db import transaction
from django.dispatch import Signal

#: Someone named a partner: ``invitation_id``, ``tournament_id``, ``inviter_id`` and
#: ``invitee_id``, sent after the commit (a registration rolled back invites nobody). The
#: invitation shows on the tournament page and the home page already; a listener announces it.
partner_invited = Signal()

#: A round's table opened for a game: ``tournament_id``, ``game_id``, ``table_id``, ``code``,
#: ``name`` (the table's) and ``user_ids`` (the game's people), sent after the commit.
table_ready = Signal()


def send_after_commit(signal: Signal, sender, **kwargs) -> None:
    transaction.on_commit(lambda: signal.send(sender=sender, **kwargs))
