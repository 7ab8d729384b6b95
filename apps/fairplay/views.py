"""The host's control on the table page: the minimum share, before the match starts; and, for
staff only, a collusion report's page and decision."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.core.errors import ServiceError
from apps.moderation.views import require_right, staff_member_required
from apps.tables.models import Table

from . import parts, rules, selectors, services
from .judging import verdict_of


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


@staff_member_required
def collusion(request, report_id: int):
    """A collusion report for staff: the pair, the statistic, every judged match with its
    telling positions (what was played, what each view preferred, by how much), and the
    decision (dismiss, or act with the moderation tools)."""
    require_right(request, "handle_report")
    case = selectors.collusion_case(report_id)
    if case is None:
        raise Http404
    found = verdict_of(case.pair)
    return render(request, "fairplay/staff_collusion.html", {
        "case": case, "pair": case.pair, "found": found,
        "statistic": parts.statistic_words(found),
        "at_report": parts.statistic_words(case.verdict) if case.verdict else "",
        "matches": _match_rows(case.pair),
        "low_name": parts.display_name(case.pair.low),
        "high_name": parts.display_name(case.pair.high),
    })


@staff_member_required
@require_POST
def collusion_decide(request, report_id: int):
    require_right(request, "handle_report")
    try:
        services.decide_collusion(actor=request.user, report_id=report_id,
                                  decision=request.POST.get("decision", ""),
                                  note=request.POST.get("note", ""))
    except ServiceError as err:
        messages.error(request, err.message)
    else:
        messages.success(request, _("The report is closed; the decision is on the "
                                    "moderation log."))
    return redirect("fairplay:collusion", report_id=report_id)


def _match_rows(pair) -> list[dict]:
    names = {pair.low_id: parts.display_name(pair.low),
             pair.high_id: parts.display_name(pair.high)}
    rows = []
    for pm in selectors.pair_matches(pair):
        who = {seat: names.get(user_id, "?") for seat, user_id in pm.seats}
        rows.append({
            "table": pm.match.table, "number": pm.match.number,
            "finished_at": pm.match.finished_at, "counts": pm.counts,
            "telling": [{**t, "who": who.get(t["seat"], "?"),
                         "played_words": parts.move_words(t["played"]),
                         "own_words": parts.move_words(t["own"]),
                         "knowing_words": parts.move_words(t["knowing"]),
                         "picked_words": parts.picked_words(t["picked"])}
                        for t in pm.telling],
        })
    return rows
