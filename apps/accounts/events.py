"""What accounts tell the apps above them (Django signals): accounts know nothing of them."""

from django.dispatch import Signal

#: A person's display name or avatar changed (their profile, or signing up from a guest
#: session), sent with ``user_id`` after the change is saved. The tables they sit at listen
#: (``apps.tables.apps``).
person_renamed = Signal()
