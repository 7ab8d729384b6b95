"""What fair play adds to other apps' pages, through their registries (``apps.fairplay.apps``):

- the tables' state (``apps.tables.state.register_part``): each seated person's share on their
  seat, and the table's minimum, with the words in every language of the site so composing a
  frame needs neither a query nor a translation;
- the profile page (``apps.accounts.profile_parts``): the person's own record and wait;
- the staff pages (``apps.moderation.staff_parts``): a line beside each reported person, and
  the record with the last abandoned matches on their page.
"""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from apps.moderation.staff_parts import StaffPart
from apps.tables.selectors import display_name

from . import selectors
from .judging import verdict_of
from .services import MINIMUM_EVENT

#: The versions whose events rebuild the part: seats taken and left (a stand-in is a seat
#: event too), a match's start and end (the shares change then), the host's minimum.
REFRESH_ON = frozenset({"seat", "match_started", "match_over", MINIMUM_EVENT})


def _in_every_language(words) -> dict[str, str]:
    out = {}
    for lang, _name in settings.LANGUAGES:
        with translation.override(lang):
            out[lang] = words()
    return out


def state_part(table, seats) -> dict:
    if table.practice:
        return {}  # one person and bots: no share to show, nobody to keep out
    people = {s.user_id: s.index for s in seats if s.user_id is not None and not s.is_bot}
    found = selectors.standings(people)
    out: dict = {"seats": {}}
    for user_id, index in people.items():
        mine = found.get(user_id, selectors.Standing())
        out["seats"][str(index)] = {
            "share": mine.share,
            "labels": _in_every_language(lambda mine=mine: selectors.share_words(mine)),
        }
    minimum = selectors.table_minimum(table.pk)
    if minimum:
        out["minimum"] = minimum
        out["minimum_labels"] = _in_every_language(
            lambda: selectors.minimum_words(minimum))
    return out


def _in(labels: dict, language: str) -> str:
    return labels.get(language) or next(iter(labels.values()), "")


def compose_part(data: dict, state: dict, viewer) -> None:
    mine = data.get("seats") or {}
    for seat in state["seats"]:
        part = mine.get(str(seat["index"]))
        if part is not None:
            seat["fairplay"] = part["share"]
            seat["fairplay_label"] = _in(part["labels"], viewer.language)
    if data.get("minimum"):
        state["fairplay"] = {"minimum": data["minimum"],
                             "label": _in(data["minimum_labels"], viewer.language)}


def profile_part(request) -> dict:
    mine = selectors.standing(request.user)
    now = timezone.now()
    return {"fairplay": {"standing": mine, "share_words": selectors.share_words(mine),
                         "wait_words": selectors.wait_words(mine, now),
                         "to_judge": mine.to_judge}}


def staff_notes(user_ids: list[int]) -> dict[int, str]:
    now = timezone.now()
    found = selectors.standings(user_ids)
    return {u: selectors.staff_note(found.get(u, selectors.Standing()), now)
            for u in user_ids if u is not None}


def staff_details(user) -> dict:
    mine = selectors.standing(user)
    now = timezone.now()
    lines = [selectors.share_words(mine),
             _("Started %(started)s, finished %(finished)s, abandoned %(abandoned)s.") % {
                 "started": mine.started, "finished": mine.finished,
                 "abandoned": mine.abandoned}]
    left = mine.wait_left(now)
    if left:
        lines.append(_("Quick play is closed to them for another %(wait)s.") % {
            "wait": selectors.duration_words(left)})
    for stint in selectors.abandoned_stints(user):
        lines.append(_("Abandoned %(when)s at table %(table)s, match %(match)s (%(how)s)") % {
            "when": timezone.localtime(stint.ended_at).strftime("%Y-%m-%d %H:%M"),
            "table": stint.match.table.code, "match": stint.match.number,
            "how": _how(stint.how)})
    tally = selectors.person_tally(user)
    if tally is not None:
        lines.append(_("Collusion check over all their partners: %(statistic)s") % {
            "statistic": statistic_words(verdict_of(tally))})
    return {"title": _("Fair play"), "lines": lines}


def _how(how: str) -> str:
    return {"leaving": _("left during a round"), "left": _("left between rounds"),
            "standin": _("away until a bot took over")}.get(how, how)


def collusion_section(report) -> dict | None:
    """On a moderation report the collusion check opened: the pair, the statistic and the way
    to the telling positions; the decision is taken there (``closes``)."""
    case = selectors.collusion_case_of(report)
    if case is None:
        return None
    pair = case.pair
    found = verdict_of(pair)
    return {
        "title": _("Partners who may see each other's tiles"),
        "lines": [
            _("Partners: %(a)s and %(b)s, in %(n)s judged matches.") % {
                "a": display_name(pair.low), "b": display_name(pair.high), "n": pair.matches},
            statistic_words(found),
            _("Status: %(status)s.") % {"status": case.get_status_display()},
        ],
        "link": (reverse("fairplay:collusion", args=[case.pk]),
                 _("The matches, the telling positions and the decision")),
        "closes": True,
    }


def move_words(move: dict) -> str:
    if move.get("pass"):
        return _("pass")
    if move.get("end"):
        return _("%(tile)s on end %(end)s") % {"tile": move["play"], "end": move["end"]}
    return move.get("play", "?")


def picked_words(picked: str) -> str:
    return {"knowing": _("the partner's hand's move"), "own": _("their own view's move"),
            "other": _("neither")}.get(picked, picked)


def statistic_words(found: dict) -> str:
    return _("At %(picks)s telling positions where one of the two moves was played, the "
             "partner's hand's move %(knowing)s times (%(rate)s%%; honest play at their "
             "strength: %(p0)s%%). Log likelihood ratio %(llr)s; the threshold is "
             "%(threshold)s.") % {
        "picks": found["picks"], "knowing": found["knowing"],
        "rate": round(100 * (found["rate"] or 0)), "p0": round(100 * (found["p0"] or 0)),
        "llr": found["llr"], "threshold": found["threshold"]}


STAFF_PART = StaffPart("fairplay", staff_notes, staff_details, collusion_section)
