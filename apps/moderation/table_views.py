"""What a table's host sets of its chat on the table page: authenticate, call one service,
redirect back to the table."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.core.errors import ServiceError
from apps.tables.models import Table

from . import quick_chat


@login_required
@require_POST
def watcher_phrases(request: HttpRequest, code: str) -> HttpResponse:
    """``allowed``: 1 lets watchers use the quick phrases, 0 keeps them to the players."""
    table = get_object_or_404(Table, code=code.upper())
    allowed = request.POST.get("allowed") == "1"
    try:
        quick_chat.set_watcher_phrases(user=request.user, table_id=table.pk, allowed=allowed)
    except ServiceError as err:
        messages.error(request, err.message)
    else:
        messages.success(request, _("Watchers may use the quick phrases now.") if allowed
                         else _("Only the players may use the quick phrases now."))
    return redirect("tables:table", code=table.code)
