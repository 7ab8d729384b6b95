"""Display-name rules: at most 12 characters, letters/digits/._- only, surrounding spaces
trimmed, unique ignoring case."""

import unicodedata

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

DISPLAY_NAME_MAX_LENGTH = 12


def normalize_display_name(name: str) -> str:
    """Trim surrounding whitespace and use the composed Unicode form (é, not e + ´)."""
    return unicodedata.normalize("NFC", (name or "").strip())


def display_name_key(name: str) -> str:
    """The case-insensitive key two names collide on."""
    return normalize_display_name(name).casefold()


def is_allowed_character(char: str) -> bool:
    return char.isalnum() or char in "._-"


def validate_display_name_format(name: str) -> None:
    """Raise ValidationError unless `name` (already normalized) is a well-formed display name."""
    if not name:
        raise ValidationError(_("Choose a display name."), code="required")
    if len(name) > DISPLAY_NAME_MAX_LENGTH:
        raise ValidationError(
            _("A display name can have at most %(limit)d characters (this one has %(length)d)."),
            code="max_length",
            params={"limit": DISPLAY_NAME_MAX_LENGTH, "length": len(name)},
        )
    if not all(is_allowed_character(char) for char in name):
        raise ValidationError(
            _("Use only letters, digits, dots, hyphens and underscores (no spaces)."),
            code="invalid",
        )
