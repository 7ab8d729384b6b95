"""``{% site_languages as languages %}``: the header's language menu."""

from django import template
from django.conf import settings

register = template.Library()


@register.simple_tag
def site_languages() -> list[tuple[str, str]]:
    """Every language of the site as ``(code, name)``, each named in its own tongue.

    Django's ``get_available_languages`` translates the names into the page's language ("Inglés"
    on a Spanish page): someone who cannot read the page would not find theirs. Read from the
    settings, not the request's context, so the error pages (drawn without one) keep the menu.
    """
    return list(settings.LANGUAGES)
