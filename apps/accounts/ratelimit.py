"""Failed sign-in limiting, with django-axes underneath (settings: AXES_*).

Attempts are counted per (username, IP address) in the database (axes' AccessAttempt), so it
works the same on SQLite and PostgreSQL and across processes; tests reset it with reset().
"""

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.shortcuts import render
from django.utils.translation import gettext as _

from apps.accounts.forms import SignInForm


class RateLimitBackend(AxesStandaloneBackend):
    """axes' backend, except that authenticate() without a request (Client.login in tests,
    scripts) is simply not counted instead of raising AxesBackendRequestParameterRequired."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def username_key(request, credentials) -> str | None:
    """Count "Bob" and "bob " as the same username (usernames are case-insensitively unique)."""
    field = settings.AXES_USERNAME_FORM_FIELD
    username = None
    if credentials:
        username = credentials.get(field) or credentials.get("username")
    if username is None and request is not None:
        username = request.POST.get(field)
    return username.strip().lower() if isinstance(username, str) else username


def cooloff_minutes() -> int:
    cooloff = settings.AXES_COOLOFF_TIME
    seconds = cooloff.total_seconds() if hasattr(cooloff, "total_seconds") else cooloff * 3600
    return max(1, round(seconds / 60))


def lockout_response(request, original_response=None, credentials=None):
    """AXES_LOCKOUT_CALLABLE: the sign-in page again, with the lockout message, status 429."""
    # Unbound: binding it would authenticate again and count another failure.
    form = SignInForm(request, initial={"username": request.POST.get("username", "")})
    message = _(
        "Too many failed sign-ins. Signing in to this account from here is paused for "
        "%(minutes)d minutes; try again later or reset your password."
    ) % {"minutes": cooloff_minutes()}
    return render(
        request,
        "accounts/login.html",
        {"form": form, "locked_out": True, "lockout_message": message},
        status=settings.AXES_HTTP_RESPONSE_CODE,
    )


def reset(*, username: str | None = None, ip_address: str | None = None) -> int:
    """Forget failed attempts (all of them, or one username's / one address's)."""
    from axes.utils import reset as axes_reset

    if username is None and ip_address is None:
        return axes_reset()
    return axes_reset(ip=ip_address, username=username.strip().lower() if username else None)


def client_address(request) -> str | None:
    """The client's address as the rate limiters count it: ``REMOTE_ADDR``, which Daphne
    (``--proxy-headers``) sets from nginx's X-Forwarded-For in production."""
    return request.META.get("REMOTE_ADDR") or None
