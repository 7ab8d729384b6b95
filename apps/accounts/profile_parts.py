"""What other apps show on a person's profile page, without accounts knowing them.

An app registers a part from its ``AppConfig.ready`` (the idiom of the tables'
``state.register_part``): a function of the request that returns the template context it adds
(the tables add the match history). ``accounts/profile.html`` draws what it finds.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest

_parts: dict[str, Callable[[HttpRequest], dict]] = {}


def register_profile_part(name: str, part: Callable[[HttpRequest], dict]) -> None:
    _parts[name] = part


def profile_context(request: HttpRequest) -> dict:
    context: dict = {}
    for part in _parts.values():
        context.update(part(request))
    return context
