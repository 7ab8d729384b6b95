from django import template

from apps.accounts import avatars

register = template.Library()


@register.simple_tag
def avatar_url(key: str | None) -> str:
    """{% avatar_url profile.avatar %} -> the avatar's static URL."""
    return avatars.avatar_url(key)


@register.filter
def item(mapping, key):
    """{{ mapping|item:key }}: a dict's value by a key from the template (another app's part
    keyed by ids the page already has), or None."""
    try:
        return mapping.get(key)
    except AttributeError:
        return None
