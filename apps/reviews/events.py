"""What the reviews tell whoever listens (Django signals): the hook a notifications app
connects to, knowing nothing else of this app."""

from django.dispatch import Signal

#: A review was stored, done: ``review_id``, ``table_id``, ``code``, ``number`` (the match's)
#: and ``requested_by_id`` (None when the person who asked was deleted). Sent once the row is
#: written (``running._store`` commits on its own), by the attempt that stored it.
review_done = Signal()
