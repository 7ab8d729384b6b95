"""The review's two addresses beside the replay page: POST asks for it, GET reads how far it
is (the page polls about once a second) and, once done, the review and its sentences. Both are
only for the people who played the match: anyone else gets a 404, as for a private replay."""

from __future__ import annotations

from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

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
    return _json(selectors.payload(review, match))


@require_GET
def status(request, code: str, number: int):
    _table, match = _match_or_404(request, code, number)
    return _json(selectors.payload(selectors.review_of(match), match))
