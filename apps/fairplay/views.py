"""The host's control on the table page: the minimum share, before the match starts."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.core.errors import ServiceError
from apps.tables.models import Table

from . import rules, services


@login_required
@require_POST
def minimum(request, code: str):
    table = get_object_or_404(Table, code=code.upper())
    try:
        value = int(request.POST.get("minimum", "").strip())
    except ValueError:
        low, high = rules.MINIMUM_RANGE
        messages.error(request, _("Choose a share between %(low)s and %(high)s.") % {
            "low": low, "high": high})
        return redirect("tables:table", code=table.code)
    try:
        services.set_minimum(user=request.user, table_id=table.pk, minimum=value)
    except ServiceError as err:
        messages.error(request, err.message)
    else:
        messages.success(request, _("Only players who finish at least %(minimum)s%% of their "
                                    "matches may sit here now.") % {"minimum": value}
                         if value else _("Anyone may sit here now."))
    return redirect("tables:table", code=table.code)
