from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ModerationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "apps.moderation"
    verbose_name = _("Moderation")

    def ready(self) -> None:
        # Imported here, not above: Django calls ready() once every app's models are loaded.
        from apps.tables import hooks
        from apps.tables.state import Part, register_part

        from . import selectors
        from .selectors import compose_part, state_part

        # A banned person may not act at a table; the ban says why.
        hooks.on_refusal("moderation", lambda user: selectors.refusal_of(user))
        # The chat names people by their seat: seat changes rebuild it too (and read the
        # blocks of whoever sits down). "phrases": the host's switch for watchers' phrases;
        # "chat_view": a seated person blocked or unblocked someone (apps.friends).
        register_part(Part("moderation", state_part, compose_part, frozenset(
            {"chat", "chat_hidden", "muted", "unmuted", "seat", "match_started", "phrases",
             "chat_view"})))
