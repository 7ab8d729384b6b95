"""Write operations on accounts. Views validate forms and call these."""

from __future__ import annotations

import secrets
import string
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from apps.accounts.avatars import AVATAR_KEYS
from apps.accounts.events import person_renamed
from apps.accounts.models import (
    BOT_THINK_MAX_MS,
    GAME_SPEEDS,
    LANGUAGE_CODES,
    TILE_SIZES,
    Profile,
    supported_language,
)
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
    """Change a user's display name, avatar and language. A new name or avatar reaches the
    open tables they sit at at once, not with the table's next move."""
    profile = ensure_profile(user)
    try:
        display_name = clean_display_name(display_name, exclude_user=user)
    except ValidationError as error:
        raise ValidationError({"display_name": error.error_list}) from error
    _check_choices(avatar=avatar, language=language)
    seen_at_tables = (profile.display_name, profile.avatar) != (display_name, avatar)
    profile.display_name = display_name
    profile.avatar = avatar
    profile.language = language
    try:
        with transaction.atomic():
            profile.save()
    except IntegrityError as error:
        raise _taken_error() from error
    if seen_at_tables:
        person_renamed.send(sender=Profile, user_id=user.pk)
    return profile


def set_language(*, user: User, language: str) -> Profile:
    """Change only the profile language."""
    _check_choices(avatar=AVATAR_KEYS[0], language=language)
    profile = ensure_profile(user)
    if profile.language != language:
        profile.language = language
        profile.save(update_fields=["language"])
    return profile


#: The table options a person sets for themselves (seed 004), with how each is checked.
TABLE_OPTIONS = ("auto_pass", "auto_play", "learning_mode", "arrange_tiles", "sounds",
                 "tile_size", "game_speed", "bot_think_ms")


def table_options(profile: Profile) -> dict:
    return {name: getattr(profile, name) for name in TABLE_OPTIONS}


def set_table_options(*, user: User, **options) -> Profile:
    """Save some of a person's table options (the others stay); None leaves one unchanged.
    Raises ValidationError for a value outside its choices."""
    unknown = set(options) - set(TABLE_OPTIONS)
    if unknown:
        raise TypeError(f"unknown table options: {sorted(unknown)}")
    options = {k: v for k, v in options.items() if v is not None}
    errors = {}
    if "tile_size" in options and options["tile_size"] not in dict(TILE_SIZES):
        errors["tile_size"] = ValidationError(_("Pick one of the sizes shown."), code="invalid")
    if "game_speed" in options and options["game_speed"] not in dict(GAME_SPEEDS):
        errors["game_speed"] = ValidationError(_("Pick one of the speeds shown."),
                                               code="invalid")
    if "bot_think_ms" in options:
        try:
            ms = int(options["bot_think_ms"])
        except (TypeError, ValueError):
            ms = -1
        if not 0 <= ms <= BOT_THINK_MAX_MS:
            errors["bot_think_ms"] = ValidationError(
                _("Bots think 0 to 10 seconds."), code="invalid")
        options["bot_think_ms"] = ms
    if errors:
        raise ValidationError(errors)
    profile = ensure_profile(user)
    for name, value in options.items():
        setattr(profile, name, value if name in ("tile_size", "game_speed", "bot_think_ms")
                else bool(value))
    if options:
        profile.save(update_fields=list(options))
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


# -- guests -----------------------------------------------------------------------------------
# A visitor who chooses to play without an account gets a real User row, so that every table,
# seat, move and socket treats them as anyone else; Profile.guest marks it. Limits and clean-up
# are in docs/practice-and-guests.md.

#: Usernames of guests; nobody may sign up with one (SignUpForm), so the prefix tells them apart.
GUEST_USERNAME_PREFIX = "guest-"
#: Suffix characters once digits alone keep colliding: no 0/O, 1/I/L, as invite codes.
_WIDE_SUFFIX = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


class GuestRefused(Exception):
    """No guest was made: ``message`` is already in the caller's language."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def guests_per_address() -> int:
    return settings.GUESTS_PER_ADDRESS_PER_HOUR


def _guest_limit_key(address: str) -> str:
    return f"accounts:guests:ip:{address}"


def _guest_name(language: str) -> str:
    """A free display name such as "Invitado 482", "Convidado 48" or "Guest 482113": the word
    in the person's language, a space (which chosen names may not hold, so no member can ever
    be mistaken for a guest) and random characters to fill the 12 allowed."""
    with translation.override(language):
        # Translators: a visitor playing without an account; a number follows ("Guest 4821").
        # Keep it at most 9 characters: the whole name has 12.
        word = normalize_display_name(_("Guest"))
    word = word[: DISPLAY_NAME_MAX_LENGTH - 3]
    room = DISPLAY_NAME_MAX_LENGTH - len(word) - 1
    for attempt in range(40):
        # Digits read best; with two or three of them (Portuguese, Spanish) a busy day can use
        # every number, so later attempts widen the alphabet.
        alphabet = string.digits if attempt < 10 else _WIDE_SUFFIX
        name = f"{word} {''.join(secrets.choice(alphabet) for _ in range(room))}"
        if not display_name_taken(name):
            return name
    raise GuestRefused(_("Could not start a guest session; try again."), code="retry")


def start_guest(*, language: str, address: str | None = None) -> User:
    """Make a guest: a user with an unusable password, a username ``guest-<random>`` and a free
    guest display name in ``language``. The caller signs them in.

    At most ``GUESTS_PER_ADDRESS_PER_HOUR`` guests are made per client address in an hour
    (counted in the shared cache, so every web process counts against the same limit).
    """
    language = supported_language(language)
    key = _guest_limit_key(address) if address else None
    if key is not None and (cache.get(key) or 0) >= guests_per_address():
        raise GuestRefused(_("Too many guest sessions were started from your network in the "
                             "last hour. Sign up, or try again later."), code="guest_limit")
    for _attempt in range(5):
        try:
            with transaction.atomic():
                user = User(username=f"{GUEST_USERNAME_PREFIX}{secrets.token_hex(6)}",
                            last_login=timezone.now())
                user.set_unusable_password()
                user._skip_profile = True  # the post_save receiver leaves the profile to us
                user.save()
                Profile.objects.create(user=user, display_name=_guest_name(language),
                                       language=language, guest=True)
            break
        except IntegrityError:  # the username or the name was taken meanwhile: draw again
            continue
    else:
        raise GuestRefused(_("Could not start a guest session; try again."), code="retry")
    if key is not None:
        cache.add(key, 0, 3600)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, 3600)
    return user


def touch_guest(user: User, *, now: datetime | None = None) -> None:
    """A guest started something (a practice table): idle counts from now. ``last_login`` is
    their last activity, since a guest never signs in again."""
    if getattr(getattr(user, "profile", None), "guest", False):
        user.last_login = now or timezone.now()
        User.objects.filter(pk=user.pk).update(last_login=user.last_login)


def convert_guest(*, user: User, username: str, email: str, password: str, display_name: str,
                  avatar: str, language: str) -> User:
    """Sign up from a guest session: the same user row becomes an account (username, email,
    password, display name, guest=False), so every seat, table and move stays theirs. The
    caller keeps them signed in (the password changed: update_session_auth_hash)."""
    try:
        display_name = clean_display_name(display_name, exclude_user=user)
    except ValidationError as error:
        raise ValidationError({"display_name": error.error_list}) from error
    _check_choices(avatar=avatar, language=language)
    try:
        with transaction.atomic():
            locked = User.objects.select_for_update().get(pk=user.pk)
            profile = Profile.objects.select_for_update().get(user=locked)
            if not profile.guest:
                raise ValidationError(_("You have an account already."), code="not_guest")
            locked.username = User.normalize_username(username)
            locked.email = User.objects.normalize_email(email)
            locked.set_password(password)
            locked.save(update_fields=["username", "email", "password"])
            profile.display_name, profile.avatar, profile.language = display_name, avatar, language
            profile.guest = False
            profile.save(update_fields=["display_name", "avatar", "language", "guest"])
    except IntegrityError as error:  # a concurrent sign-up took the name first
        raise _taken_error() from error
    locked.profile = profile
    person_renamed.send(sender=Profile, user_id=locked.pk)
    return locked
