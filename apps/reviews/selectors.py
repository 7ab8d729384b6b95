"""Reads for the review's page part and its JSON."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.utils.translation import gettext as _

from apps.bots import accuracy
from apps.tables import game
from apps.tables.models import Match
from apps.tables.names import seat_names
from apps.tables.selectors import display_name

from . import words
from .models import Exercise, MatchReview, PlayerAccuracy


def review_of(match: Match) -> MatchReview | None:
    return MatchReview.objects.filter(match=match).first()


def seat_users(match: Match) -> list[list[int | None]]:
    """Who sat where in each round the replay shows (finished, not voided), in order."""
    return list(match.rounds.filter(voided=False, finished_at__isnull=False)
                .order_by("number").values_list("seat_users", flat=True))


def people_seats(match: Match) -> dict[int, list[int | None]]:
    """Every person who sat at ``match``: the seat they held in each round the review judged
    (finished, not voided; None in a round they missed)."""
    rounds = seat_users(match)
    people = {u for seats in rounds for u in seats if u}
    return {u: [seats.index(u) if u in seats else None for seats in rounds] for u in people}


def players_accuracy(result: dict, match: Match, user=None) -> list[dict]:
    """Each player's accuracy in the match, the reader first: the people (whatever seats they
    held round by round) and the bots' seats, with their names as the replay gives them."""
    rounds = seat_users(match)
    names = seat_names_of(match)
    rows = []
    for user_id, seats in people_seats(match).items():
        k = next(j for j, seat in enumerate(seats) if seat is not None)
        rows.append({"name": names[k][seats[k]], "mine": user is not None and user.pk == user_id,
                     **accuracy.player_accuracy(result, seats)})
    players = len(rounds[0]) if rounds else 0
    for seat in range(players):
        if all(seats[seat] is None for seats in rounds):  # a bot's seat the whole match
            rows.append({"name": names[0][seat], "mine": False,
                         **accuracy.player_accuracy(result, [seat] * len(rounds))})
    rows.sort(key=lambda row: (not row["mine"], row["name"]))
    return rows


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


def payload(review: MatchReview | None, match: Match, user=None) -> dict:
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
        out["accuracy"] = {"moves": accuracy.move_accuracies(review.result),
                           "players": players_accuracy(review.result, match, user)}
    return out


# -- the profile's numbers and the exercises ---------------------------------------------------

#: The profile's last reviewed matches.
LAST_ACCURACIES = 10


def last_accuracies(user, count: int = LAST_ACCURACIES) -> list[PlayerAccuracy]:
    return list(PlayerAccuracy.objects.filter(user=user).select_related("match__table")
                .order_by("-created_at", "-pk")[:count])


def accuracy_by_match(user) -> dict[int, float | None]:
    """Each reviewed match's accuracy of ``user``, by match id (the history rows')."""
    return dict(PlayerAccuracy.objects.filter(user=user).values_list("match_id", "accuracy"))


def exercises_of(user):
    return (Exercise.objects.filter(user=user)
            .select_related("review__match__table").order_by("answered_at", "-loss", "pk"))


def progress(user) -> dict:
    """How far ``user`` is through their exercises: made, tried, found at the first try."""
    rows = Exercise.objects.filter(user=user)
    return {"total": rows.count(), "tried": rows.filter(answer__isnull=False).count(),
            "correct": rows.filter(correct=True).count()}


def next_exercise(user, after: Exercise | None = None) -> Exercise | None:
    rows = Exercise.objects.filter(user=user, answer__isnull=True)
    if after is not None:
        rows = rows.exclude(pk=after.pk)
    return rows.order_by("-loss", "pk").first()


def exercise_of(user, pk: int) -> Exercise | None:
    return (Exercise.objects.filter(pk=pk, user=user)
            .select_related("review__match__table").first())


def move_label(move: dict, ends: dict) -> str:
    """A legal move in words: the tile, and the number it goes on when it could go on two."""
    if move.get("pass"):
        return _("Pass")
    tile = words.tile_words(move["play"])
    end = move.get("end")
    if not ends:
        return _("Open with %(tile)s") % {"tile": tile}
    if end is None or end not in ends:
        return _("Play %(tile)s") % {"tile": tile}
    return _("Play %(tile)s on the %(number)s") % {"tile": tile,
                                                     "number": words.number(ends[end])}


def exercise_page(exercise: Exercise) -> dict:
    """What the exercise's page shows: the seat's view (and only it), its choices, and once
    tried, the bot's move and why."""
    view = exercise.view
    match = exercise.review.match
    k = exercise.round_index
    all_names = seat_names_of(match)
    names = all_names[k] if k < len(all_names) else [str(s) for s in range(view["players"])]
    ends = view.get("ends") or {}
    seat = exercise.seat
    history = []
    for move in view.get("moves", []):
        who = names[move["seat"]] if move.get("seat") is not None else ""
        if move.get("pass"):
            history.append({"name": who, "pass": True})
        else:
            history.append({"name": who, "tile": move.get("play")})
    counts = [{"name": names[s], "count": c, "mine": s == seat}
              for s, c in enumerate(view.get("hand_counts", [])) if s != seat]
    played = exercise.played
    # The record writes an end the view's legal move may leave out (a tile that fits one way).
    choices = [{"index": i, "label": move_label(m, ends), "tile": m.get("play"),
                "played": m.get("play") == played.get("play")
                and m.get("end", played.get("end")) == played.get("end")}
               for i, m in enumerate(view.get("legal", []))]
    out = {"exercise": exercise, "match": match, "table": match.table, "round": k + 1,
           "move_number": exercise.move_index + 1, "names": names, "me": names[seat],
           "hand": view.get("hand", []), "ends": [words.number(v) for v in ends.values()],
           "history": history, "counts": counts,
           "boneyard": view.get("boneyard_count", 0), "scores": view.get("scores", []),
           "choices": choices, "answered": exercise.answer is not None}
    if exercise.answer is not None:
        out["best_label"] = move_label(exercise.best, ends)
        out["played_label"] = (_("Pass") if exercise.played.get("pass")
                               else move_label(exercise.played, ends))
        out["answer_label"] = move_label(view["legal"][exercise.answer], ends)
        out["reasons"] = ([words.reason(r["code"], r, names) for r in exercise.reasons]
                          or [words.no_reason()])
        out["loss"] = words.points(exercise.loss)
        out["accuracy"] = accuracy.move_accuracy(exercise.loss)
    return out
