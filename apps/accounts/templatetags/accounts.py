from django import template

from apps.accounts import avatars

register = template.Library()


@register.simple_tag
def avatar_url(key: str | None) -> str:
    """{% avatar_url profile.avatar %} -> the avatar's static URL."""
    return avatars.avatar_url(key)
