"""The notifications' pages: the list and "mark all read", a notification opened (read, then
its link), the bell's count, the person's choices (a part of the profile page), this
browser's push subscription, and the mail's one-click unsubscribe (no sign-in: a signed
token). The installed app's manifest, service worker and offline page are in ``pwa.py``."""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from apps.accounts.selectors import is_guest
from apps.core.errors import ServiceError

from . import kinds, selectors, services
from .models import Notification


def _rows(user_id: int) -> list[dict]:
    rows = []
    for n in selectors.recent(user_id):
        kind = kinds.get(n.kind)
        if kind is None:
            continue
        title, body = kind.words(n.data)
        rows.append({"id": n.pk, "title": title, "body": body, "unread": n.read_at is None,
                     "at": n.created_at})
    return rows


@login_required
def page(request: HttpRequest) -> HttpResponse:
    from django.conf import settings

    return render(request, "notifications/list.html", {
        "rows": _rows(request.user.pk), "unread": selectors.unread_count(request.user.pk),
        "keep_days": round(settings.NOTIFY_KEEP_DAYS)})


@login_required
@require_POST
def read_all(request: HttpRequest) -> HttpResponse:
    services.mark_read(user=request.user)
    messages.success(request, _("Every notification is marked read."))
    back = request.POST.get("next") or ""
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = "notifications:page"
    return redirect(back)


@login_required
def open_one(request: HttpRequest, notification_id: int) -> HttpResponse:
    """A notification clicked (the list, a mail, a push): read, then where it points."""
    n = get_object_or_404(Notification, pk=notification_id, recipient_id=request.user.pk)
    services.mark_read(user=request.user, notification_id=n.pk)
    kind = kinds.get(n.kind)
    try:
        return redirect(kind.link(n.data) if kind else "notifications:page")
    except Exception:  # a link whose object's data is missing: the list instead
        return redirect("notifications:page")


@login_required
def count(request: HttpRequest) -> JsonResponse:
    response = JsonResponse({"unread": selectors.unread_count(request.user.pk)})
    response["Cache-Control"] = "no-store"
    return response


def profile_part(request: HttpRequest) -> dict:
    """The profile page's "Notifications" part (``accounts/profile.html``)."""
    user = request.user
    if not user.is_authenticated or is_guest(user):
        return {}
    return {"notification_choices": selectors.choices_of(user),
            "notification_channels": [(c, kinds.CHANNEL_LABELS[c]) for c in kinds.CHANNELS],
            "push_key": selectors.push_enabled() and _vapid_public_key()}


def _vapid_public_key() -> str:
    from django.conf import settings

    return settings.VAPID_PUBLIC_KEY


@login_required
@require_POST
def choices(request: HttpRequest) -> HttpResponse:
    """The profile's table of boxes: each kind x channel, on when its box is ticked."""
    wanted = {(k.name, c): f"{k.name}:{c}" in request.POST
              for k in kinds.KINDS.values() for c in kinds.CHANNELS}
    try:
        services.set_choices(user=request.user, choices=wanted)
    except ServiceError as err:
        messages.error(request, err.message)
    else:
        messages.success(request, _("Your notification choices were saved."))
    return redirect("/accounts/profile/#notifications")


def _json(request: HttpRequest) -> dict:
    try:
        data = json.loads(request.body or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


@login_required
@require_POST
def push_subscribe(request: HttpRequest) -> JsonResponse:
    """This browser's subscription (``PushSubscription.toJSON()``), sent by ``push.js`` once
    the person clicked "Notify me on this device" and the browser allowed it."""
    data = _json(request)
    keys = data.get("keys") if isinstance(data.get("keys"), dict) else {}
    try:
        services.subscribe_push(user=request.user, endpoint=str(data.get("endpoint") or ""),
                                p256dh=str(keys.get("p256dh") or ""),
                                auth=str(keys.get("auth") or ""),
                                user_agent=request.headers.get("User-Agent", ""))
    except ServiceError as err:
        return JsonResponse({"ok": False, "message": err.message}, status=400)
    return JsonResponse({"ok": True, "message": _("This device will be notified.")})


@login_required
@require_POST
def push_unsubscribe(request: HttpRequest) -> JsonResponse:
    services.unsubscribe_push(user=request.user, endpoint=str(_json(request).get("endpoint")
                                                              or ""))
    return JsonResponse({"ok": True, "message": _("This device will not be notified.")})


@csrf_exempt  # signed by the token, and posted by mail programs (RFC 8058) without a session
def unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    """The mail's link: a page with one button (a link opened by a mail scanner changes
    nothing); its POST, or a mail program's one-click POST, stops that kind's mails."""
    try:
        user_id, kind_name = services.read_unsubscribe_token(token)
    except ServiceError as err:
        return render(request, "notifications/unsubscribe.html", {"error": err.message},
                      status=400)
    kind = kinds.get(kind_name)
    if request.method == "POST":
        services.unsubscribe(token=token)
        return render(request, "notifications/unsubscribe.html",
                      {"done": True, "kind": kind.label})
    return render(request, "notifications/unsubscribe.html",
                  {"kind": kind.label, "token": token})
