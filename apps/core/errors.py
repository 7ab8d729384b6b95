"""What a refused action raises, for every app's services (the views and sockets answer it)."""

from __future__ import annotations

from django.utils.translation import gettext as _


class ServiceError(Exception):
    """A refused action: nothing changed; ``message`` is already in the caller's language."""

    def __init__(self, message: str, *, code: str = "refused") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class StaleMove(ServiceError):
    """The action was sent for a version of the table that is gone (a duplicate, a late timer,
    a second tab): nothing was applied."""

    def __init__(self) -> None:
        super().__init__(_("The table has moved on."), code="stale")
