"""The avatars drawn by the site: static SVGs under apps/accounts/static/avatars/<key>.svg."""

from django.templatetags.static import static
from django.utils.translation import gettext_lazy as _

AVATARS: dict[str, str] = {
    "cat": _("Cat"),
    "dog": _("Dog"),
    "fox": _("Fox"),
    "bear": _("Bear"),
    "panda": _("Panda"),
    "rabbit": _("Rabbit"),
    "frog": _("Frog"),
    "owl": _("Owl"),
    "penguin": _("Penguin"),
    "pig": _("Pig"),
    "lion": _("Lion"),
    "mouse": _("Mouse"),
    "domino": _("Domino"),
    "double-six": _("Double six"),
}
AVATAR_KEYS: tuple[str, ...] = tuple(AVATARS)
AVATAR_CHOICES = list(AVATARS.items())
DEFAULT_AVATAR = "domino"
BOT_AVATAR = "bot"  # drawn too (avatars/bot.svg) but not offered to people


def avatar_url(key: str | None) -> str:
    """Static URL of an avatar; unknown keys fall back to the default avatar."""
    if key != BOT_AVATAR and key not in AVATARS:
        key = DEFAULT_AVATAR
    return static(f"avatars/{key}.svg")
