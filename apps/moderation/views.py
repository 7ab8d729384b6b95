"""Staff pages under /staff/: live tables, observing a table, the report queue, a person's
mutes and bans, and one POST endpoint per action. Each action is a service call (which checks
the right again and writes the log); pages check the right they show."""

from __future__ import annotations

from functools import wraps

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from apps.core.errors import ServiceError
from apps.tables.models import Table
from apps.tables.selectors import finished_record, has_record, table_state

from . import selectors, services, staff_parts
from .models import Ban, ChatMessage, ModerationLog, Mute, Report

User = get_user_model()


def staff_member_required(view):
    """Signed-out visitors go to the site's sign-in page; signed-in people who are not active
    staff get the 403 page (templates/403.html) in their language, not the admin's sign-in."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not (request.user.is_active and request.user.is_staff):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapper


def require_right(request, right: str) -> None:
    """403 unless the signed-in staff member holds moderation's ``right`` (fair play's staff
    pages use it too)."""
    if not request.user.has_perm(f"moderation.{right}"):
        raise PermissionDenied


@staff_member_required
def live_tables(request):
    require_right(request, "observe_table")
    rows = []
    for table in selectors.live_tables():
        seats = [(s.user.profile.display_name if s.user and hasattr(s.user, "profile")
                  else (s.user.get_username() if s.user else (_("Bot") if s.is_bot else "—")))
                 for s in table.seats.all()]
        rows.append({"table": table, "seats": seats})
    return render(request, "moderation/live_tables.html",
                  {"rows": rows, "open_reports": Report.objects.filter(status="open").count()})


@staff_member_required
def observe(request, table_id: int):
    require_right(request, "observe_table")
    table = get_object_or_404(Table, pk=table_id)
    state = table_state(table_id=table.pk, user=None)
    return render(request, "moderation/observe.html", {
        "table": table, "state": state, "chat": selectors.staff_chat(table),
        "has_record": has_record(table),
        "reports": table.reports.select_related("reporter", "reported_user")[:50],
        "seats": table.seats.select_related("user__profile"),
        "log": ModerationLog.objects.filter(target_table=table).select_related("actor")[:50],
        "socket_path": f"/ws/observe/{table.pk}/",
    })


@staff_member_required
def record(request, table_id: int):
    """The table's game record, as its players download it (a closed table's stopped round
    included): what staff look at to see what happened at a reported table."""
    require_right(request, "observe_table")
    table = get_object_or_404(Table, pk=table_id)
    data = finished_record(table)
    if data is None:
        raise Http404(_("No match has been played at this table yet."))
    response = JsonResponse(data, json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="domino-{table.code}.json"'
    return response


@staff_member_required
def report_queue(request):
    require_right(request, "handle_report")
    status = "closed" if request.GET.get("status") == "closed" else "open"
    reports = selectors.report_queue(status)
    # What other apps note on each reported person (staff_parts), read once for the page.
    notes = staff_parts.notes_for(r.reported_user_id for r in reports)
    for r in reports:
        r.staff_notes = notes.get(r.reported_user_id, [])
    return render(request, "moderation/reports.html", {"reports": reports, "status": status})


@staff_member_required
def report_detail(request, report_id: int):
    require_right(request, "handle_report")
    row = get_object_or_404(Report.objects.select_related(
        "table", "message__user", "reporter", "reported_user", "handled_by"), pk=report_id)
    context = selectors.message_context(row.message) if row.message else []
    return render(request, "moderation/report.html", {
        "report": row, "context_messages": context, "table": row.table,
        "reported_notes": staff_parts.notes_for([row.reported_user_id]).get(
            row.reported_user_id, []),
        "seats": row.table.seats.select_related("user__profile"),
        "recent_chat": [] if row.message else selectors.staff_chat(row.table, 21),
        "deleted_text": ModerationLog.objects.filter(
            action="delete_message", target_message=row.message).values_list(
            "before", flat=True).first() if row.message else None,
        **_sections(row),
    })


def _sections(row: Report) -> dict:
    sections = staff_parts.report_sections(row)
    return {"report_sections": sections,
            "report_closed_elsewhere": any(s.get("closes") for s in sections)}


@staff_member_required
def person(request, user_id: int):
    if not (request.user.has_perm("moderation.mute_user")
            or request.user.has_perm("moderation.ban_user")):
        raise PermissionDenied
    target = get_object_or_404(User, pk=user_id)
    return render(request, "moderation/person.html", {
        "target": target, "mutes": Mute.objects.filter(user=target)[:20],
        "bans": Ban.objects.filter(user=target)[:20],
        "mute": selectors.active_mute(target), "ban": selectors.active_ban(target),
        "reports": Report.objects.filter(reported_user=target).select_related("table")[:20],
        "messages_sent": ChatMessage.objects.filter(user=target).select_related("table")
        .order_by("-created_at")[:20],
        "can_ban_forever": request.user.is_superuser,
        "ban_days": selectors.ban_choices(request.user),
        "can_lift_ban": selectors.may_lift_ban(request.user, target),
        "staff_details": staff_parts.details_for(target),
    })


# -- actions ----------------------------------------------------------------------------------

def _int(post, key: str) -> int:
    try:
        return int(post.get(key, ""))
    except ValueError:
        raise ServiceError(_("A number is missing."), code="malformed") from None


def _days(post) -> int | None:
    return None if post.get("days") in ("forever", "") else _int(post, "days")


ACTIONS = {
    "close_table": (lambda u, p: services.close_table(
        actor=u, table_id=_int(p, "table"), reason=p.get("reason", "")),
        gettext_lazy("The table is closed.")),
    "hide_table": (lambda u, p: services.hide_table(
        actor=u, table_id=_int(p, "table"), hidden=p.get("hidden") != "0",
        reason=p.get("reason", "")), gettext_lazy("Done.")),
    "rename_table": (lambda u, p: services.rename_by_staff(
        actor=u, table_id=_int(p, "table"), name=p.get("name", ""),
        reason=p.get("reason", "")), gettext_lazy("The table is renamed.")),
    "remove_player": (lambda u, p: services.remove_player(
        actor=u, table_id=_int(p, "table"), seat_index=_int(p, "seat"),
        reason=p.get("reason", "")), gettext_lazy("The player is removed.")),
    "hide_message": (lambda u, p: services.hide_message(
        actor=u, message_id=_int(p, "message"), reason=p.get("reason", "")),
        gettext_lazy("The message is hidden.")),
    "delete_message": (lambda u, p: services.delete_message(
        actor=u, message_id=_int(p, "message"), reason=p.get("reason", "")),
        gettext_lazy("The message is deleted.")),
    "mute": (lambda u, p: services.mute(
        actor=u, user_id=_int(p, "user"), minutes=_int(p, "minutes"),
        reason=p.get("reason", "")), gettext_lazy("The person is muted.")),
    "lift_mute": (lambda u, p: services.lift_mute(
        actor=u, user_id=_int(p, "user"), reason=p.get("reason", "")),
        gettext_lazy("The mute is lifted.")),
    "ban": (lambda u, p: services.ban(
        actor=u, user_id=_int(p, "user"), days=_days(p), reason=p.get("reason", "")),
        gettext_lazy("The person is banned.")),
    "lift_ban": (lambda u, p: services.lift_ban(
        actor=u, user_id=_int(p, "user"), reason=p.get("reason", "")),
        gettext_lazy("The ban is lifted.")),
    "close_report": (lambda u, p: services.close_report(
        actor=u, report_id=_int(p, "report"), resolution=p.get("resolution", "")),
        gettext_lazy("The report is closed.")),
}


@staff_member_required
@require_POST
def act(request, action: str):
    if action not in ACTIONS:
        raise Http404
    call, done = ACTIONS[action]
    try:
        call(request.user, request.POST)
    except ServiceError as err:
        if err.code == "forbidden":
            raise PermissionDenied(err.message) from None
        messages.error(request, err.message)
    else:
        messages.success(request, str(done))
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, {request.get_host()},
                                           require_https=request.is_secure()):
        target = "moderation:live_tables"
    return redirect(target)
