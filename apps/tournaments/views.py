"""Tournament pages: authenticate, call one service or selector, render or redirect."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from apps.accounts.decorators import account_required, signup_url
from apps.accounts.selectors import is_guest
from apps.core.errors import ServiceError
from apps.friends.selectors import usual_partner_of
from apps.tables.state import display_name

from . import running, selectors, services
from .forms import RegisterForm, TournamentForm
from .models import PartnerInvitation, Tournament


def tournament_list(request):
    return render(request, "tournaments/list.html", {
        "upcoming": selectors.upcoming(), "past": selectors.past(),
        "may_create": services.may_create(request.user),
    })


@account_required
def create(request):
    if not services.may_create(request.user):
        messages.error(request, _("Only staff can create tournaments."))
        return redirect("tournaments:list")
    form = TournamentForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            tournament = services.create_tournament(user=request.user, **form.cleaned_data)
        except ServiceError as err:
            messages.error(request, err.message)
        else:
            return redirect("tournaments:detail", tournament_id=tournament.pk)
    return render(request, "tournaments/create.html", {
        "form": form, "staff": services.is_staff_with(request.user, "create_tournament")})


def _context(request, tournament: Tournament) -> dict:
    return {
        "page": selectors.page(tournament, request.user), "t": tournament,
        "form": RegisterForm(initial={"partner": _suggested_partner(request.user)}),
        "may_cancel": tournament.state == Tournament.State.REGISTERING
        and (services.is_staff_with(request.user, "cancel_tournament")
             or (tournament.created_by_id == request.user.pk
                 and services.may_create(request.user))),
        "no_show_minutes": running.no_show_limit().total_seconds() / 60,
    }


def _suggested_partner(user) -> str:
    """Who the pairs form suggests: the person's usual partner (``apps.friends``)."""
    partner = usual_partner_of(user) if user.is_authenticated else None
    return display_name(partner) if partner is not None else ""


def detail(request, tournament_id: int):
    tournament = get_object_or_404(Tournament, pk=tournament_id)
    return render(request, "tournaments/detail.html", _context(request, tournament))


def live(request, tournament_id: int):
    """The page's live part alone: the page fetches it again when its socket rings."""
    tournament = get_object_or_404(Tournament, pk=tournament_id)
    response = render(request, "tournaments/_live.html", _context(request, tournament))
    response["Cache-Control"] = "no-store"
    return response


def _act(request, tournament_id: int, call, done):
    """Run one service call; say what it did (``done``, or ``done(result)``) or why it was
    refused; back to the tournament's page."""
    try:
        result = call()
    except ServiceError as err:
        messages.error(request, err.message)
    else:
        messages.success(request, done(result) if callable(done) else done)
    return redirect("tournaments:detail", tournament_id=tournament_id)


def _registered(result) -> str:
    if isinstance(result, PartnerInvitation):
        return _("%(name)s is invited: you are registered as a pair when they accept. Both "
                 "entries are held until then.") % {"name": display_name(result.invitee)}
    return _("You are registered.")


def _to_an_account(request, tournament_id: int):
    """Registering needs an account: a visitor signs in and a guest signs up, each coming back
    to the tournament's page (not to this POST-only address); None for an account."""
    page = reverse("tournaments:detail", args=[tournament_id])
    if not request.user.is_authenticated:
        return redirect_to_login(page)
    if is_guest(request.user):
        messages.info(request, _("Sign up to play in tournaments."))
        return redirect(signup_url(page))
    return None


@require_POST
def register(request, tournament_id: int):
    elsewhere = _to_an_account(request, tournament_id)
    if elsewhere is not None:
        return elsewhere
    form = RegisterForm(request.POST)
    form.is_valid()
    data = form.cleaned_data
    return _act(request, tournament_id, lambda: services.register(
        user=request.user, tournament_id=tournament_id, partner=data.get("partner") or "",
        find_partner=bool(data.get("find_partner"))), _registered)


@login_required
@require_POST
def accept_partner(request, tournament_id: int, invitation_id: int):
    return _act(request, tournament_id, lambda: services.accept_partner(
        user=request.user, invitation_id=invitation_id),
        _("You are registered as a pair."))


@login_required
@require_POST
def decline_partner(request, tournament_id: int, invitation_id: int):
    return _act(request, tournament_id, lambda: services.decline_partner(
        user=request.user, invitation_id=invitation_id),
        _("Invitation declined."))


@login_required
@require_POST
def withdraw(request, tournament_id: int):
    def said(invitation: PartnerInvitation | None) -> str:
        if invitation is not None:
            return _("Your invitation to %(name)s is withdrawn; both entries are back in your "
                     "wallet.") % {"name": display_name(invitation.invitee)}
        return _("You have withdrawn; your entry is back in your wallet.")

    return _act(request, tournament_id, lambda: services.withdraw(
        user=request.user, tournament_id=tournament_id), said)


@login_required
@require_POST
def cancel(request, tournament_id: int):
    return _act(request, tournament_id, lambda: services.cancel(
        user=request.user, tournament_id=tournament_id),
        _("The tournament is cancelled and every entry refunded."))
