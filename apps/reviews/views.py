"""The review's two addresses beside the replay page: POST asks for it, GET reads how far it
is (the page polls about once a second) and, once done, the review and its sentences. Both are
only for the people who played the match: anyone else gets a 404, as for a private replay."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.core.errors import ServiceError
from apps.tables.models import Table

from . import selectors, services


def _match_or_404(request, code: str, number: int):
    table = get_object_or_404(Table, code=code.upper())
    match = services.reviewable_match(table, number, request.user)
    if match is None:
        raise Http404(_("No finished match of yours has that number here."))
    return table, match


def _json(data: dict, status: int = 200) -> JsonResponse:
    response = JsonResponse(data, status=status)
    response["Cache-Control"] = "no-store"
    return response


@require_POST
def ask(request, code: str, number: int):
    table, match = _match_or_404(request, code, number)
    try:
        review = services.request_review(user=request.user, table=table, match=match)
    except ServiceError as err:
        return _json({"ok": False, "code": err.code, "message": err.message},
                     status=429 if err.code == "rate_limited" else 400)
    return _json(selectors.payload(review, match, request.user))


@require_GET
def status(request, code: str, number: int):
    _table, match = _match_or_404(request, code, number)
    return _json(selectors.payload(selectors.review_of(match), match, request.user))


# -- train on your mistakes ---------------------------------------------------------------------

@login_required
@require_GET
def exercises(request):
    """The person's exercises, the ones still to try first, and how far they are."""
    return render(request, "reviews/exercises.html",
                  {"exercises": selectors.exercises_of(request.user),
                   "progress": selectors.progress(request.user),
                   "next": selectors.next_exercise(request.user)})


@login_required
@require_http_methods(["GET", "POST"])
def exercise(request, pk: int):
    """One exercise: the position as the person's seat saw it; a POST is a try, after which the
    page shows the bot's move and why. Someone else's exercise is a 404."""
    item = selectors.exercise_of(request.user, pk)
    if item is None:
        raise Http404(_("No such exercise of yours."))
    context = {}
    if request.method == "POST":
        try:
            choice = int(request.POST.get("choice", ""))
        except ValueError:
            choice = -1
        try:
            item = services.answer_exercise(user=request.user, exercise_id=pk, choice=choice)
        except ServiceError as err:
            context["error"] = err.message
        else:
            item = selectors.exercise_of(request.user, pk)
            context["tried"] = {"index": choice, "correct": services.is_best(item, choice)}
    context.update(selectors.exercise_page(item))
    context["progress"] = selectors.progress(request.user)
    context["next"] = selectors.next_exercise(request.user, after=item)
    status = 400 if "error" in context else 200
    return render(request, "reviews/exercise.html", context, status=status)


def profile_part(request) -> dict:
    """The profile's part (``apps.accounts.profile_parts``): the accuracy of the last reviewed
    matches, each reviewed match's accuracy for the history rows, and the exercises' progress."""
    user = request.user
    if not user.is_authenticated:
        return {}
    last = selectors.last_accuracies(user)
    shown = [row.accuracy for row in last if row.accuracy is not None]
    return {"review_numbers": {"last": last, "progress": selectors.progress(user),
                               "mean": round(sum(shown) / len(shown), 1) if shown else None},
            "history_accuracy": selectors.accuracy_by_match(user)}
