"""A banned person is signed out on their next request, with the reason and the end."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import logout
from django.shortcuts import redirect

from .selectors import active_ban, ban_message


class BanMiddleware:
    """Place after AuthenticationMiddleware and MessageMiddleware."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            ban = active_ban(user)
            if ban is not None:
                text = ban_message(ban)
                logout(request)
                messages.error(request, text)
                return redirect("home")
        return self.get_response(request)
