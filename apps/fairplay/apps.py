from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class FairplayConfig(AppConfig):
    name = "apps.fairplay"
    verbose_name = _("Fair play")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here, not above: Django calls ready() once every app's models are loaded.
        from apps.accounts.profile_parts import register_profile_part
        from apps.moderation.staff_parts import register_staff_part
        from apps.tables import hooks
        from apps.tables.state import Part, register_part

        from . import parts, record, selectors

        # Bound directly, not through a lambda as the club's hooks are: this one runs for
        # every version of every table, moves included, and a lambda is one more call on it.
        hooks.on_change("fairplay", record.table_changing)
        hooks.on_join_refusal("fairplay", lambda **kw: selectors.join_refusal(**kw))
        hooks.on_quick_play_refusal("fairplay", lambda user: selectors.quick_play_refusal(user))
        register_part(Part("fairplay", parts.state_part, parts.compose_part, parts.REFRESH_ON))
        register_profile_part("fairplay", parts.profile_part)
        register_staff_part(parts.STAFF_PART)
