from django.conf import settings
from django.db import models
from django.db.models.functions import Lower
from django.utils.translation import gettext_lazy as _

from apps.accounts.avatars import AVATAR_CHOICES, DEFAULT_AVATAR, avatar_url
from apps.accounts.validators import (
    DISPLAY_NAME_MAX_LENGTH,
    display_name_key,
    normalize_display_name,
    validate_display_name_format,
)

# Language names are shown in their own language, so they are not translated.
LANGUAGE_CHOICES = [
    ("es", "Español"),
    ("pt-br", "Português (Brasil)"),
    ("en", "English"),
]
LANGUAGE_CODES = frozenset(code for code, _name in LANGUAGE_CHOICES)

# Seed 004's per-person table options. Size and speed change only how the page draws.
TILE_SIZES = [("small", _("small")), ("medium", _("medium")), ("large", _("large"))]
GAME_SPEEDS = [("slow", _("slow")), ("normal", _("normal")), ("fast", _("fast"))]
#: Bots think 0 to 10 seconds (the create form's bound).
BOT_THINK_MAX_MS = 10_000


def default_language() -> str:
    return settings.LANGUAGE_CODE if settings.LANGUAGE_CODE in LANGUAGE_CODES else "es"


def supported_language(code: str | None) -> str:
    """Map a language code (e.g. from the request: "pt-BR", "pt", "en-us") onto a choice."""
    code = (code or "").lower().replace("_", "-")
    if code in LANGUAGE_CODES:
        return code
    base = code.split("-")[0]
    if base == "pt":
        return "pt-br"
    if base in LANGUAGE_CODES:
        return base
    return default_language()


class Profile(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="profile",
        verbose_name=_("user"),
    )
    display_name = models.CharField(
        _("display name"),
        max_length=DISPLAY_NAME_MAX_LENGTH,
        validators=[validate_display_name_format],
    )
    # casefold() of display_name. Lower() below is ASCII-only on SQLite, so this column is what
    # makes "JOSÉ" and "josé" collide on every database.
    display_name_key = models.CharField(max_length=4 * DISPLAY_NAME_MAX_LENGTH, editable=False)
    avatar = models.CharField(
        _("avatar"), max_length=20, choices=AVATAR_CHOICES, default=DEFAULT_AVATAR
    )
    language = models.CharField(
        _("language"), max_length=8, choices=LANGUAGE_CHOICES, default=default_language
    )
    # Table preferences (seed 004 "pairs-series" options), toggled from the table page.
    auto_pass = models.BooleanField(
        _("auto-pass"), default=False,
        help_text=_("Pass by yourself when nothing in your hand fits."),
    )
    learning_mode = models.BooleanField(
        _("learning mode"), default=False,
        help_text=_("Show the tiles still unseen and the numbers each player passed on."),
    )
    auto_play = models.BooleanField(
        _("play automatically"), default=False,
        help_text=_("The table plays for you (the first tile that fits) until you turn it off."),
    )
    tile_size = models.CharField(_("tile size"), max_length=8, choices=TILE_SIZES,
                                 default="medium")
    game_speed = models.CharField(
        _("game speed"), max_length=8, choices=GAME_SPEEDS, default="normal",
        help_text=_("How fast the moves of bots and of the table are shown."),
    )
    # Off until the person turns them on: a page never makes a sound on a first visit.
    sounds = models.BooleanField(
        _("sound effects"), default=False,
        help_text=_("A tile placed, your turn, a pass, time running out."),
    )
    arrange_tiles = models.BooleanField(
        _("arrange tiles"), default=True,
        help_text=_("Drag the tiles of your hand to put them in your own order."),
    )
    # Vacation (turn-based tables, docs/turn-based.md): while it lasts, the person's clocks at
    # turn-based tables stop. ``vacation_used`` counts the seconds taken in ``vacation_year``.
    vacation_from = models.DateTimeField(null=True, blank=True)
    vacation_until = models.DateTimeField(null=True, blank=True)
    vacation_year = models.PositiveSmallIntegerField(default=0)
    vacation_used = models.PositiveIntegerField(default=0)
    #: Turn-based matches this person finished (each allows one more unfinished at once).
    turn_based_finished = models.PositiveIntegerField(default=0)
    bot_think_ms = models.PositiveIntegerField(
        _("minimum bot think time (ms)"), default=1000,
        help_text=_("At the tables you host, so that everyone can follow the bots' moves."),
    )
    #: A visitor playing without an account: a real User row (unusable password) made for the
    #: browser session, so every table, seat and move works as for anyone. Signing up turns the
    #: same row into an account; guests never signed up are deleted with their tables.
    guest = models.BooleanField(_("guest"), default=False, db_index=True)
    #: The person's last request or socket frame on the site, written at most every
    #: ``ACTIVITY_WRITE_SECONDS`` (``apps.accounts.activity``): no mail or push goes to a
    #: person active a moment ago (docs/notifications.md).
    last_active_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        verbose_name = _("profile")
        verbose_name_plural = _("profiles")
        constraints = [
            models.UniqueConstraint(
                Lower("display_name"),
                name="accounts_profile_display_name_ci_unique",
                violation_error_message=_("This display name is already taken."),
            ),
            models.UniqueConstraint(
                fields=["display_name_key"],
                name="accounts_profile_display_name_key_unique",
                violation_error_message=_("This display name is already taken."),
            ),
        ]

    def __str__(self) -> str:
        return self.display_name

    def save(self, *args, **kwargs):
        self.display_name = normalize_display_name(self.display_name)
        self.display_name_key = display_name_key(self.display_name)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "display_name" in update_fields:
            kwargs["update_fields"] = {*update_fields, "display_name_key"}
        super().save(*args, **kwargs)

    @property
    def avatar_url(self) -> str:
        return avatar_url(self.avatar)
