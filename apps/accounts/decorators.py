"""``account_required``: a page that needs an account, not a guest session."""

from __future__ import annotations

from functools import wraps
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _

from apps.accounts.selectors import is_guest


def signup_url(next_path: str) -> str:
    return f"{reverse('accounts:signup')}?{urlencode({'next': next_path})}"


def account_required(view):
    """Like login_required, and a guest is sent to sign up (their games stay theirs) with a
    message saying why."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if is_guest(request.user):
            messages.info(request, _("You are playing as a guest. Sign up to do that: your "
                                     "tables and seats stay yours."))
            return redirect(signup_url(request.get_full_path()))
        return view(request, *args, **kwargs)

    return wrapper
