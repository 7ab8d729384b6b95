"""What the tables do when the apps below them say something happened (their signals)."""

from __future__ import annotations

from . import selectors, services


def person_renamed(sender, *, user_id: int, **kwargs) -> None:
    services.person_renamed(user_id=user_id)


def vacation_part(request) -> dict:
    """The profile's vacation: days left this year, and the vacation under way."""
    from django.utils import timezone

    from apps.accounts.selectors import is_guest

    if is_guest(request.user):
        return {}
    profile = request.user.profile
    now = timezone.now()
    left = services.vacation_left(profile, now)
    return {"vacation": {"on": services.on_vacation(profile, now),
                         "until": profile.vacation_until,
                         "days_left": int(left.total_seconds() // 86400)}}


def match_history_part(request) -> dict:
    return {"history": selectors.match_history(user=request.user,
                                               page=request.GET.get("page"))}
