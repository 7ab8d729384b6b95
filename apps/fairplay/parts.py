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
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from apps.moderation.staff_parts import StaffPart

from . import selectors
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
    return {"title": _("Fair play"), "lines": lines}


def _how(how: str) -> str:
    return {"leaving": _("left during a round"), "left": _("left between rounds"),
            "standin": _("away until a bot took over")}.get(how, how)


STAFF_PART = StaffPart("fairplay", staff_notes, staff_details)
