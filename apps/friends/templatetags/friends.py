"""``{% friends_to_invite %}``: the host's friends on the table page, each one click from an
invitation.

The table page is the tables app's, and tables may not import friends (the layers in
pyproject.toml); a template may load a tag library of an app above, as it loads moderation's
``{% table_chat %}``. So the list is drawn with the page, from what only this app knows, and
its buttons post to the tables' own invite view (``apps.tables.services.invite``), which
refuses exactly as for a name typed by hand.
"""

from __future__ import annotations

from django import template

from apps.accounts.selectors import is_guest
from apps.friends import selectors

register = template.Library()


@register.inclusion_tag("friends/_invite.html", takes_context=True)
def friends_to_invite(context) -> dict:
    request = context.get("request")
    table = context.get("table")
    user = getattr(request, "user", None)
    shown = (table is not None and context.get("is_host") and user is not None
             and user.is_authenticated and not is_guest(user))
    return {
        "table": table,
        "shown": shown,
        "friends": selectors.invite_list(user, table) if shown else [],
        "csrf_token": context.get("csrf_token"),
    }
