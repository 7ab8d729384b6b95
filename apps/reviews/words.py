"""The review in sentences, in the reader's language: why the bot's move was better (each
reason code of ``apps.bots.review``, meanings in ``docs/review.md``), and each round's summary
per seat. Numbers and tiles are in words, as the replay says them."""

from __future__ import annotations

from django.utils.formats import number_format
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.tables.selectors import number_words


def _tile(name: str) -> str:
    words = number_words()
    return "-".join(words[int(v)] for v in str(name).split("-"))


def tile_words(name: str) -> str:
    """A tile in words ("six-four"), as the replay says it."""
    return _tile(name)


def number(value: int) -> str:
    """A number of pips in words."""
    return number_words()[int(value)]


def _numbers(values) -> str:
    words = number_words()
    named = [words[int(v)] for v in values]
    if len(named) <= 1:
        return "".join(named)
    return _("%(some)s or %(last)s") % {"some": ", ".join(named[:-1]), "last": named[-1]}


def reason(code: str, params: dict, names: list[str]) -> str:
    """Why the bot's move was better than the one played, in one sentence."""
    seat = params.get("seat")
    name = names[seat] if isinstance(seat, int) and 0 <= seat < len(names) else ""
    if code == "double_held":
        return _("The bot plays the double %(tile)s now: a double held too long may find no "
                 "end left to go on.") % {"tile": _tile(params["tile"])}
    if code == "heavy_kept":
        return ngettext(
            "The bot plays %(tile)s, %(pips)s pip heavier: heavy tiles kept in hand count "
            "against you if the round is blocked or lost.",
            "The bot plays %(tile)s, %(pips)s pips heavier: heavy tiles kept in hand count "
            "against you if the round is blocked or lost.",
            params.get("pips", 0)) % {"tile": _tile(params["tile"]),
                                      "pips": params.get("pips", 0)}
    if code == "wrong_end":
        return _("Right tile, wrong end: the bot puts %(tile)s on the other end.") % {
            "tile": _tile(params["tile"])}
    if code == "pass_told":
        return _("%(name)s, next to play, passed earlier on %(numbers)s: that pass told the "
                 "table they have none, and the bot's move leaves it showing for them.") % {
            "name": name, "numbers": _numbers(params.get("numbers", []))}
    if code == "lock_missed":
        return _("After the bot's move, %(name)s, next to play, cannot hold a tile that fits "
                 "%(numbers)s: they would have to pass.") % {
            "name": name, "numbers": _numbers(params.get("numbers", []))}
    if code == "fives_missed":
        return ngettext("The bot's move scores %(points)s point more.",
                        "The bot's move scores %(points)s points more.",
                        params.get("points", 0)) % {"points": params.get("points", 0)}
    return no_reason()


def no_reason() -> str:
    """A marked move none of the reasons' tests explains (docs/review.md, "Reasons")."""
    return _("The bot's move keeps more of the round's points.")


def reason_count(code: str, count: int) -> str:
    """A summary's line for one reason: what happened, and how often."""
    texts = {
        "double_held": ngettext("a double held too long (%(n)s time)",
                                "a double held too long (%(n)s times)", count),
        "heavy_kept": ngettext("a heavy tile kept in hand (%(n)s time)",
                               "a heavy tile kept in hand (%(n)s times)", count),
        "wrong_end": ngettext("a tile put on the wrong end (%(n)s time)",
                              "a tile put on the wrong end (%(n)s times)", count),
        "pass_told": ngettext("a number the next opponent had passed on, covered instead of "
                              "left showing (%(n)s time)",
                              "a number the next opponent had passed on, covered instead of "
                              "left showing (%(n)s times)", count),
        "lock_missed": ngettext("a chance missed to make the next opponent pass (%(n)s time)",
                                "a chance missed to make the next opponent pass "
                                "(%(n)s times)", count),
        "fives_missed": ngettext("points in fives not scored (%(n)s time)",
                                 "points in fives not scored (%(n)s times)", count),
    }
    text = texts.get(code) or ngettext("another reason (%(n)s time)",
                                       "other reasons (%(n)s times)", count)
    return text % {"n": count}


def points(value: float) -> str:
    """Points with one decimal, written as the reader's language writes them."""
    return number_format(value, 1)


def summary(name: str, entry: dict) -> list[str]:
    """One seat's round in sentences: the points given up and where."""
    judged = entry.get("judged", 0)
    mistakes, inaccuracies = entry.get("mistakes", 0), entry.get("inaccuracies", 0)
    blunders = entry.get("blunders", 0)  # reviews stored before blunders have none
    if not judged:
        return [_("%(name)s had no choice to make this round.") % {"name": name}]
    lines = []
    if not blunders and not mistakes and not inaccuracies:
        lines.append(ngettext(
            "%(name)s: no costly move in %(judged)s choice (%(points)s points given up in all).",
            "%(name)s: no costly move in %(judged)s choices (%(points)s points given up in "
            "all).", judged) % {"name": name, "judged": judged,
                                "points": points(entry.get("loss", 0.0))})
        return lines
    marks = []
    if blunders:
        marks.append(ngettext("%(n)s blunder", "%(n)s blunders", blunders) % {"n": blunders})
    if mistakes:
        marks.append(ngettext("%(n)s mistake", "%(n)s mistakes", mistakes) % {"n": mistakes})
    if inaccuracies:
        marks.append(ngettext("%(n)s inaccuracy", "%(n)s inaccuracies", inaccuracies)
                     % {"n": inaccuracies})
    lines.append(ngettext("%(name)s gave up %(points)s points in %(judged)s choice: %(marks)s.",
                          "%(name)s gave up %(points)s points in %(judged)s choices: %(marks)s.",
                          judged) % {"name": name, "points": points(entry.get("loss", 0.0)),
                                     "judged": judged, "marks": ", ".join(marks)})
    reasons = [reason_count(r["code"], r.get("count", 1)) for r in entry.get("reasons", [])]
    if reasons:
        lines.append(_("Where the points went: %(reasons)s.") % {"reasons": "; ".join(reasons)})
    return lines


def for_result(result: dict, names: list[list[str]]) -> dict:
    """Every sentence of a review: ``moves["<round>:<index>"]`` (round from 0, as the replay
    counts) the reasons of a marked move, ``summary["<round>"]["<seat>"]`` a seat's round."""
    moves: dict[str, list[str]] = {}
    summaries: dict[str, dict[str, list[str]]] = {}
    for k, rnd in enumerate(result.get("rounds", [])):
        round_names = names[k] if k < len(names) else []
        for move in rnd.get("moves", []):
            if move.get("reasons"):
                moves[f"{k}:{move['index']}"] = [
                    reason(r["code"], r, round_names) for r in move["reasons"]]
            elif move.get("mark"):  # the evaluation saw more than the reasons' tests
                moves[f"{k}:{move['index']}"] = [no_reason()]
        summaries[str(k)] = {
            seat: summary(round_names[int(seat)] if int(seat) < len(round_names) else seat,
                          entry)
            for seat, entry in rnd.get("summary", {}).items()}
    return {"moves": moves, "summary": summaries}
