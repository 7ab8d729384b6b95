"""My games, the next game waiting for a person's move, and what turn-based play adds to the
table pages (vacation, adjourning, rematch): authenticate, call one service or selector."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from apps.core.errors import ServiceError

from . import services
from .models import Table
from .mygames import my_games, next_game


def _after(request) -> int | None:
    value = request.GET.get("from", "")
    return int(value) if value.isdigit() else None


@login_required
@require_POST
def vacation(request):
    """Start a vacation of the days asked, or stop the one under way (the profile's form)."""
    try:
        if request.POST.get("action") == "stop":
            services.stop_vacation(user=request.user)
            messages.success(request, _("Welcome back: your clocks run again."))
        else:
            days = request.POST.get("days", "")
            services.start_vacation(user=request.user,
                                    days=int(days) if days.isdigit() else 0)
            messages.success(request, _("Enjoy your vacation: your clocks at turn-based tables "
                                        "are stopped."))
    except ServiceError as err:
        messages.error(request, err.message)
    return redirect(reverse("accounts:profile") + "#vacation")


@login_required
@require_POST
def resume(request, code: str):
    """The host takes an adjourned match up again (My games)."""
    table = get_object_or_404(Table, code=code.upper())
    try:
        services.resume_adjourned(user=request.user, table_id=table.pk)
    except ServiceError as err:
        messages.error(request, err.message)
        return redirect("tables:games")
    return redirect("tables:table", code=table.code)


@login_required
@require_GET
def games(request):
    return render(request, "tables/my_games.html", {"rows": my_games(user=request.user)})


@login_required
@require_GET
def next_game_page(request):
    """"Next game where it's your move": there, or back to My games when there is none."""
    row = next_game(user=request.user, after_table_id=_after(request))
    if row is None:
        messages.info(request, _("No other game is waiting for your move."))
        return redirect("tables:games")
    return redirect("tables:table", code=row["code"])


@login_required
@require_GET
def next_game_json(request):
    """The table page asks after a move: the next game's address, or null (no button)."""
    row = next_game(user=request.user, after_table_id=_after(request))
    url = reverse("tables:table", args=[row["code"]]) if row else None
    return JsonResponse({"url": url, "name": row["name"] if row else None})
