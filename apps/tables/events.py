"""What the tables tell whoever listens (Django signals), once it is committed: the hooks a
notifications app connects to, knowing nothing else of the tables' services. Everything a
table's version says goes through ``hooks`` instead; these are the facts outside a version."""

from django.dispatch import Signal

#: A host invited someone to a table: ``invitation_id``, ``table_id``, ``code``, ``name`` (the
#: table's, may be empty), ``inviter_id``, ``invitee_id``; sent after the commit, and never for
#: an invitation from someone the invitee blocked (kept, never shown).
invited = Signal()
