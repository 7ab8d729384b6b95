from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class FriendsConfig(AppConfig):
    name = "apps.friends"
    verbose_name = _("Friends")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here, not above: Django calls ready() once every app's models are loaded.
        from apps.tables import hooks

        from . import selectors

        # The tables neither list nor ring invitations from people a person blocked, and
        # moderation leaves their chat out (its state part asks ``hooks.hidden_from``). Looked
        # up at each call, so what runs is always the module's function.
        hooks.on_hidden("friends", lambda user_id: selectors.blocked_ids(user_id))
