"""The friends page and its forms: authenticate, call one service or selector, redirect."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.decorators import account_required
from apps.core.errors import ServiceError

from . import selectors, services
from .models import Friendship

#: Longest name search kept (a display name is at most 12 characters).
QUERY_MAX = 40


@account_required
@require_GET
def page(request: HttpRequest) -> HttpResponse:
    query = " ".join(request.GET.get("q", "").split())[:QUERY_MAX]
    incoming, outgoing = selectors.requests_of(request.user)
    return render(request, "friends/page.html", {
        "friends": selectors.friends_of(request.user),
        "incoming": incoming, "outgoing": outgoing,
        "blocked": selectors.blocked_people(request.user),
        "query": query,
        "results": selectors.search(request.user, query) if query else None,
    })


def _done(request: HttpRequest, call, success) -> HttpResponse:
    """Run one service call; say what it did, or why it was refused; back to the page."""
    try:
        result = call()
    except ServiceError as err:
        messages.error(request, err.message)
    else:
        messages.success(request, success(result) if callable(success) else success)
    return redirect("friends:page")


@account_required
@require_POST
def add(request: HttpRequest) -> HttpResponse:
    def said(row: Friendship) -> str:
        if row.status == Friendship.Status.ACCEPTED:
            return _("You are friends now.")
        return _("Friend request sent.")

    return _done(request, lambda: services.request_friend(
        user=request.user, display_name=request.POST.get("display_name", "")), said)


@account_required
@require_POST
def accept(request: HttpRequest, request_id: int) -> HttpResponse:
    return _done(request, lambda: services.accept_request(user=request.user,
                                                          request_id=request_id),
                 _("You are friends now."))


@account_required
@require_POST
def decline(request: HttpRequest, request_id: int) -> HttpResponse:
    return _done(request, lambda: services.decline_request(user=request.user,
                                                           request_id=request_id),
                 _("Request declined."))


@account_required
@require_POST
def cancel(request: HttpRequest, request_id: int) -> HttpResponse:
    return _done(request, lambda: services.cancel_request(user=request.user,
                                                          request_id=request_id),
                 _("Request withdrawn."))


@account_required
@require_POST
def remove(request: HttpRequest, user_id: int) -> HttpResponse:
    return _done(request, lambda: services.remove_friend(user=request.user, friend_id=user_id),
                 _("Removed from your friends."))


@account_required
@require_POST
def block(request: HttpRequest, user_id: int) -> HttpResponse:
    return _done(request, lambda: services.block(user=request.user, person_id=user_id),
                 _("Blocked: you will not see their invitations or chat."))


@account_required
@require_POST
def unblock(request: HttpRequest, user_id: int) -> HttpResponse:
    return _done(request, lambda: services.unblock(user=request.user, person_id=user_id),
                 _("Unblocked."))


@account_required
@require_POST
def partner(request: HttpRequest) -> HttpResponse:
    """Choose the usual partner (``partner``: a friend's id), or clear it (empty)."""
    raw = request.POST.get("partner", "").strip()
    if raw and not raw.isdigit():
        messages.error(request, _("Only a friend can be your usual partner."))
        return redirect("friends:page")
    chosen = int(raw) if raw else None
    return _done(request, lambda: services.set_usual_partner(user=request.user,
                                                             partner_id=chosen),
                 _("Usual partner saved.") if chosen is not None
                 else _("You have no usual partner now."))
