"""What other apps show staff beside reports, without moderation knowing them.

An app above moderation registers a :class:`StaffPart` from its ``AppConfig.ready`` (the idiom
of ``apps.accounts.profile_parts``): a short note per person for the report queue and a
report's page, and a titled list of lines for the person's page. The moderation templates draw
what they find, in the order the parts were registered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StaffPart:
    name: str
    #: fn(user_ids) -> {user_id: one line of text}, for lists of people (one query, not one
    #: per row).
    notes: Callable[[list[int]], dict[int, str]]
    #: fn(user) -> {"title": str, "lines": [str, ...]}, for the person's page.
    details: Callable[[Any], dict]
    #: fn(report) -> None, or a section of a report the app opened itself: {"title": str,
    #: "lines": [str, ...], "link": (url, label) or None, "closes": bool}; "closes": the app's
    #: page closes the report (with its own decision), in place of the plain close form.
    report: Callable[[Any], dict | None] | None = None


_parts: dict[str, StaffPart] = {}


def register_staff_part(part: StaffPart) -> None:
    _parts[part.name] = part


def notes_for(user_ids: Iterable[int | None]) -> dict[int, list[str]]:
    """Every part's note on each of these people (None, a report on no one, is skipped)."""
    ids = sorted({u for u in user_ids if u is not None})
    out: dict[int, list[str]] = {u: [] for u in ids}
    if not ids:
        return out
    for part in _parts.values():
        for user_id, note in part.notes(ids).items():
            if note and user_id in out:
                out[user_id].append(note)
    return out


def details_for(user) -> list[dict]:
    return [part.details(user) for part in _parts.values()]


def report_sections(report) -> list[dict]:
    """What the parts say about one report (most say nothing: only the reports they opened)."""
    out = []
    for part in _parts.values():
        if part.report is not None:
            section = part.report(report)
            if section:
                out.append(section)
    return out
