"""Write operations on accounts. Views validate forms and call these."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from apps.accounts.avatars import AVATAR_KEYS
from apps.accounts.models import LANGUAGE_CODES, Profile
from apps.accounts.selectors import display_name_taken
from apps.accounts.validators import (
    DISPLAY_NAME_MAX_LENGTH,
    is_allowed_character,
    normalize_display_name,
    validate_display_name_format,
)

User = get_user_model()


def clean_display_name(name: str, *, exclude_user=None) -> str:
    """Normalize and validate a display name, including that nobody else has it."""
    name = normalize_display_name(name)
    validate_display_name_format(name)
    if display_name_taken(name, exclude_user=exclude_user):
        raise ValidationError(_("This display name is already taken."), code="taken")
    return name


def _check_choices(*, avatar: str, language: str) -> None:
    errors = {}
    if avatar not in AVATAR_KEYS:
        errors["avatar"] = ValidationError(_("Pick one of the avatars shown."), code="invalid")
    if language not in LANGUAGE_CODES:
        errors["language"] = ValidationError(_("Pick one of the languages shown."), code="invalid")
    if errors:
        raise ValidationError(errors)


def _taken_error() -> ValidationError:
    return ValidationError(
        {"display_name": ValidationError(_("This display name is already taken."), code="taken")}
    )


def sign_up(
    *,
    username: str,
    email: str,
    password: str,
    display_name: str,
    avatar: str,
    language: str,
) -> User:
    """Create a user and their profile. Raises ValidationError on a bad or taken display name."""
    try:
        display_name = clean_display_name(display_name)
    except ValidationError as error:
        raise ValidationError({"display_name": error.error_list}) from error
    _check_choices(avatar=avatar, language=language)
    try:
        with transaction.atomic():
            user = User(
                username=User.normalize_username(username),
                email=User.objects.normalize_email(email),
            )
            user.set_password(password)
            user._skip_profile = True  # the post_save receiver leaves the profile to us
            user.save()
            Profile.objects.create(
                user=user, display_name=display_name, avatar=avatar, language=language
            )
    except IntegrityError as error:  # a concurrent sign-up took the name first
        raise _taken_error() from error
    return user


def update_profile(*, user: User, display_name: str, avatar: str, language: str) -> Profile:
    """Change a user's display name, avatar and language."""
    profile = ensure_profile(user)
    try:
        display_name = clean_display_name(display_name, exclude_user=user)
    except ValidationError as error:
        raise ValidationError({"display_name": error.error_list}) from error
    _check_choices(avatar=avatar, language=language)
    profile.display_name = display_name
    profile.avatar = avatar
    profile.language = language
    try:
        with transaction.atomic():
            profile.save()
    except IntegrityError as error:
        raise _taken_error() from error
    return profile


def set_language(*, user: User, language: str) -> Profile:
    """Change only the profile language."""
    _check_choices(avatar=AVATAR_KEYS[0], language=language)
    profile = ensure_profile(user)
    if profile.language != language:
        profile.language = language
        profile.save(update_fields=["language"])
    return profile


def derive_display_name(username: str, *, exclude_user=None) -> str:
    """A free display name made from a username: allowed characters only, at most 12,
    with a number appended when taken ("bob", "bob2", "bob3", ...)."""
    base = "".join(c for c in normalize_display_name(username) if is_allowed_character(c))
    base = base[:DISPLAY_NAME_MAX_LENGTH] or "player"
    candidate, number = base, 1
    while display_name_taken(candidate, exclude_user=exclude_user):
        number += 1
        suffix = str(number)
        candidate = base[: DISPLAY_NAME_MAX_LENGTH - len(suffix)] + suffix
    return candidate


def ensure_profile(user: User) -> Profile:
    """The user's profile, created (display name from the username) if it is missing,
    e.g. for users made by createsuperuser or before this app existed."""
    try:
        return user.profile
    except Profile.DoesNotExist:
        pass
    for _attempt in range(5):
        try:
            with transaction.atomic():
                profile, _created = Profile.objects.get_or_create(
                    user=user,
                    defaults={"display_name": derive_display_name(user.get_username())},
                )
        except IntegrityError:  # the derived name was taken meanwhile: derive again
            continue
        user.profile = profile
        return profile
    raise RuntimeError(f"could not create a profile for user {user.pk}")
