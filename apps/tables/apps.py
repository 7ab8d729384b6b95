from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TablesConfig(AppConfig):
    name = "apps.tables"
    verbose_name = _("Tables")
    default_auto_field = "django.db.models.BigAutoField"
