from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TablesConfig(AppConfig):
    name = "apps.tables"
    verbose_name = _("Tables")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here, not above: Django calls ready() once every app's models are loaded.
        from apps.accounts.events import person_renamed
        from apps.accounts.profile_parts import register_profile_part

        from . import receivers

        # A new name or avatar reaches the open tables the person sits at at once.
        person_renamed.connect(receivers.person_renamed, dispatch_uid="tables_person_renamed")
        # The profile page lists the person's finished matches.
        register_profile_part("history", receivers.match_history_part)
        # Vacation from turn-based tables (docs/turn-based.md): started and stopped there.
        register_profile_part("vacation", receivers.vacation_part)
