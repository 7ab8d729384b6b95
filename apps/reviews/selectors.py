"""Reads for the review's page part and its JSON."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.utils.translation import gettext as _

from apps.tables import game
from apps.tables.models import Match
from apps.tables.names import seat_names
from apps.tables.selectors import display_name

from . import words
from .models import MatchReview


def review_of(match: Match) -> MatchReview | None:
    return MatchReview.objects.filter(match=match).first()


def seat_users(match: Match) -> list[list[int | None]]:
    """Who sat where in each round the replay shows (finished, not voided), in order."""
    return list(match.rounds.filter(voided=False, finished_at__isnull=False)
                .order_by("number").values_list("seat_users", flat=True))


def seat_names_of(match: Match) -> list[list[str]]:
    """Each round's seat names in the active language, as the replay names them."""
    rounds = seat_users(match)
    ids = {u for seats in rounds for u in seats if u}
    users = get_user_model().objects.filter(pk__in=ids).select_related("profile")
    names = {u.pk: display_name(u) for u in users}
    return [seat_names([names.get(u, "") for u in seats], [u is None for u in seats])
            for seats in rounds]


def sides_of(match: Match, user) -> list[int]:
    """The side ``user`` played on in each round (the side of the seat they sat in; a round
    they missed takes the side of their nearest round): the chart's side."""
    rules = game.match_rules(match)
    seats = [s.index(user.pk) if user.pk in s else None for s in seat_users(match)]
    known = [k for k, seat in enumerate(seats) if seat is not None]
    if not known:
        return [0] * len(seats)
    return [rules.side_of(seats[k] if seats[k] is not None
                          else seats[min(known, key=lambda j: abs(j - k))])
            for k in range(len(seats))]


def status_words(review: MatchReview | None) -> str:
    if review is None:
        return ""
    if review.status == MatchReview.Status.QUEUED:
        return _("Waiting for the reviewer…")
    if review.status == MatchReview.Status.RUNNING:
        return _("%(done)s of %(total)s moves judged") % {"done": review.done,
                                                          "total": review.total}
    if review.status == MatchReview.Status.DONE:
        return _("All %(total)s moves judged.") % {"total": review.total}
    if review.may_retry:
        return _("The review could not be finished. Ask again to start it over.")
    return _("The review of this match could not be finished.")


def payload(review: MatchReview | None, match: Match) -> dict:
    """The JSON the page polls: how far the review is and, once done, the review exactly as
    ``python -m apps.bots.review`` prints it (``result``) with its sentences (``words``)."""
    if review is None:
        return {"ok": True, "status": "none", "done": 0, "total": 0, "message": "",
                "retry": False}
    out = {"ok": True, "status": review.status, "done": review.done, "total": review.total,
           "message": status_words(review), "retry": review.may_retry}
    if review.status == MatchReview.Status.DONE and review.result is not None:
        out["result"] = review.result
        out["words"] = words.for_result(review.result, seat_names_of(match))
    return out
