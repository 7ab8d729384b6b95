from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ReviewsConfig(AppConfig):
    """The master bot's review of a finished match, on its replay page (``docs/review.md``)."""

    name = "apps.reviews"
    verbose_name = _("Match reviews")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here: Django calls ready() once every app's models are loaded.
        from apps.accounts.profile_parts import register_profile_part

        from . import views

        register_profile_part("reviews", views.profile_part)
