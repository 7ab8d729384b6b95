"""``{% tournament_invitations %}``: on the home page (the tables app's), the partner
invitations a person has to answer, each with its accept and decline buttons.

The home page may not import the tournaments (the layers in pyproject.toml); a template may
load a tag library of an app above, as the table page loads the friends' list.
"""

from __future__ import annotations

from django import template

from apps.tournaments import selectors

register = template.Library()


@register.inclusion_tag("tournaments/_invitations.html", takes_context=True)
def tournament_invitations(context) -> dict:
    request = context.get("request")
    user = getattr(request, "user", None)
    return {"invitations": selectors.invitations_for(user),
            "csrf_token": context.get("csrf_token")}
