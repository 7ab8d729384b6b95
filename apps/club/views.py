"""Club pages: authenticate, call one service or selector, render or redirect."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.core.errors import ServiceError
from apps.tables.models import Table

from . import numbers, selectors, services
from .forms import StakeTableForm
from .models import Rating


@login_required
@require_POST
def daily(request):
    try:
        entry = services.claim_daily(user=request.user)
    except ServiceError as err:
        messages.error(request, err.message)
    else:
        messages.success(request, _("%(coins)d coins added to your balance.")
                         % {"coins": entry.coins})
    return redirect("accounts:profile")


@login_required
def stakes(request):
    form = StakeTableForm(request.POST or None)
    if request.method == "POST":
        if form.is_valid():
            try:
                table = services.open_stake_table(user=request.user, **form.cleaned_data)
            except ServiceError as err:
                messages.error(request, err.message)
            else:
                return redirect("tables:table", code=table.code)
        else:
            messages.error(request, _("Pick one of the entries shown."))
    return render(request, "club/stakes.html", {
        "form": form, "stakes": selectors.open_stake_tables(),
        "balance": selectors.balance(request.user),
        "fill_minutes": int(numbers.STAKE_FILL_TIME.total_seconds() // 60),
    })


@login_required
@require_POST
def stand_up(request, code: str):
    table = get_object_or_404(Table, code=code)
    try:
        services.stand_up(user=request.user, table_id=table.pk)
    except ServiceError as err:
        messages.error(request, err.message)
    else:
        messages.success(request, _("You stood up; your entry is back in your balance."))
    return redirect("club:stakes")


def _week_now():
    from django.utils import timezone

    return services.week_of(timezone.now())


def leaderboards(request):
    week = _week_now()
    boards = [{"kind": label, "all_time": selectors.leaderboard(kind),
               "this_week": selectors.week_leaderboard(kind, week)}
              for kind, label in Rating.Kind.choices]
    return render(request, "club/leaderboards.html", {
        "boards": boards, "provisional": numbers.RATING_PROVISIONAL_MATCHES})


def league(request):
    from datetime import timedelta

    week = _week_now()
    weeks = [{"title": _("This week"), "start": week, "end": week + timedelta(days=6),
              "rows": selectors.league_table(week)},
             {"title": _("Last week"), "start": week - timedelta(days=7),
              "end": week - timedelta(days=1),
              "rows": selectors.league_table(week - timedelta(days=7))}]
    return render(request, "club/league.html", {
        "weeks": weeks, "prizes": numbers.LEAGUE_PRIZES,
        "me": request.user.pk if request.user.is_authenticated else None})
