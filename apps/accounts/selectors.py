"""Read-only queries on accounts. Other apps import from here (e.g. the tables service)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model

from apps.accounts.models import Profile
from apps.accounts.validators import display_name_key

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser as User


def user_by_display_name(name: str) -> User | None:
    """The user whose display name is `name`, ignoring case and surrounding spaces."""
    key = display_name_key(name)
    if not key:
        return None
    return get_user_model().objects.filter(profile__display_name_key=key).first()


def display_name_taken(name: str, exclude_user: User | None = None) -> bool:
    """Whether another user already has this display name (ignoring case and spaces)."""
    key = display_name_key(name)
    if not key:
        return False
    profiles = Profile.objects.filter(display_name_key=key)
    if exclude_user is not None and exclude_user.pk is not None:
        profiles = profiles.exclude(user_id=exclude_user.pk)
    return profiles.exists()


def is_guest(user) -> bool:
    """Whether ``user`` is a guest (playing without an account, ``Profile.guest``). Guests may
    practise, sit at tables and watch; what needs an account (creating tables other than
    practice, quick play, profile and history, chat at other people's tables) sends them to
    sign up (``apps.accounts.decorators.account_required``)."""
    if user is None or not user.is_authenticated:
        return False
    profile = getattr(user, "profile", None)
    return bool(getattr(profile, "guest", False))


def profile_language(user) -> str | None:
    """The language on ``user``'s profile, if the site speaks it (None signed out, or without
    one): what their sockets answer in, as their pages do."""
    if user is None or not user.is_authenticated:
        return None
    language = Profile.objects.filter(user_id=user.pk).values_list("language", flat=True).first()
    return language if language in dict(settings.LANGUAGES) else None
