"""Keeping the record, inside each table's transaction (``apps.tables.hooks.on_change``).

:func:`table_changing` is called for every new version of every table, the move path
included, under the table's row lock and before the version's snapshot is built (so the seats'
shares in that snapshot are already the new ones). Nearly every version is a move, a presence
or a chat: those return after one look at each event's kind (``tools/bench_fairplay.py``
measures it). The rest follow docs/fairplay.md:

- ``match_started``: every person seated starts the match, when at least one other person
  sits there (bots alone are no one to let down);
- a seat ``joined`` or ``reservation_taken`` while a match is on: that person starts it too;
- ``leaving`` (left during a round), ``left`` (left between two rounds of a match that is on)
  or ``standin`` (away until a bot took the hand): abandoned. Staff removing someone is
  neither way;
- ``match_over``: everyone still in their seat finished it;
- ``closed`` with a match on (staff, or nobody left at the table): neither way for those
  still seated.

Each (match, person) is one :class:`~apps.fairplay.models.Stint` that moves on from
"playing" once, so a version replayed changes nothing the second time.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import F

from apps.tables.models import Match, Seat

from . import judging, rules
from .models import Record, Stint

#: The event kinds that can change a record; every other version returns at once.
WATCHED = frozenset({"match_started", "match_over", "seat", "closed"})
STARTING = frozenset({"joined", "reservation_taken"})
ABANDONING = frozenset({"leaving", "standin"})

PLAYING = Stint.State.PLAYING
FINISHED = Stint.State.FINISHED
ABANDONED = Stint.State.ABANDONED
VOID = Stint.State.VOID


def table_changing(*, table, seats: list[Seat], events: list[dict], now: datetime) -> None:
    # The move path's cost: one set lookup per event, no call, no allocation.
    for event in events:
        if event.get("kind") in WATCHED:
            break
    else:
        return
    if table.practice:
        return
    follow(table_id=table.pk, seats=seats, events=events, now=now)
    if any(event.get("kind") == "match_over" for event in events):
        judging.match_over(table, seats)


def follow(*, table_id: int, seats: list[Seat], events: list[dict], now: datetime) -> None:
    """Apply one version's events to the stints of the table's latest match and to the
    people's counters."""
    latest = (Match.objects.filter(table_id=table_id).order_by("-number")
              .values_list("pk", "finished_at").first())
    if latest is None:
        return  # a table that never started: nothing to keep
    match_id, finished_at = latest
    book = _Book(match_id, now)
    starting = any(e.get("kind") == "match_started" for e in events)
    on = finished_at is None  # the match is being played (at this version's start)
    for event in events:
        kind = event.get("kind")
        if kind == "match_started":
            people = [s for s in seats if s.user_id is not None and not s.is_bot]
            if len(people) >= 2:
                for seat in people:
                    book.start(seat.user_id, seat.index)
        elif kind == "match_over":
            for stint in book.playing():
                seat = seats[stint.seat] if stint.seat < len(seats) else None
                held = seat is not None and seat.user_id == stint.user_id and not seat.leaving
                book.end(stint, FINISHED if held else VOID, "" if held else "gone")
            on = False
        elif kind == "closed":
            for stint in book.playing():
                book.end(stint, VOID, "staff" if event.get("reason") == "staff" else "closed")
            on = False
        elif kind == "seat" and on:
            _seat_event(book, seats, event, starting)
    book.save()


def _seat_event(book: _Book, seats: list[Seat], event: dict, starting: bool) -> None:
    action, index = event.get("action"), event.get("seat")
    if not isinstance(index, int) or not 0 <= index < len(seats):
        return
    seat = seats[index]
    staff = event.get("by") == "staff"
    if action in STARTING:
        # In the version a match starts, ``match_started`` seats everyone at once.
        others = any(s.user_id is not None and not s.is_bot and s.index != index
                     for s in seats)
        if not starting and seat.user_id is not None and others:
            book.start(seat.user_id, index)
    elif action in ABANDONING:
        stint = book.playing_of(seat.user_id)
        if stint is not None:
            book.end(stint, VOID if staff else ABANDONED, "staff" if staff else action)
    elif action == "left":
        # The seat is free already: whoever held it is found by the seat of their stint.
        stint = book.playing_at(index)
        if stint is not None:
            book.end(stint, VOID if staff else ABANDONED, "staff" if staff else "left")


class _Book:
    """One version's changes to one match's stints and to its people's counters, written
    together at the end (counters in user-id order, so two tables' transactions never wait
    on each other's records in opposite orders)."""

    def __init__(self, match_id: int, now: datetime) -> None:
        self.match_id, self.now = match_id, now
        self.stints = {s.user_id: s for s in Stint.objects.filter(match_id=match_id)}
        self.new: list[Stint] = []
        self.changed: list[Stint] = []
        self.counts: dict[int, dict[str, int]] = {}

    def playing(self) -> list[Stint]:
        return [s for s in self.stints.values() if s.state == PLAYING]

    def playing_of(self, user_id: int | None) -> Stint | None:
        stint = self.stints.get(user_id)
        return stint if stint is not None and stint.state == PLAYING else None

    def playing_at(self, index: int) -> Stint | None:
        return next((s for s in self.playing() if s.seat == index), None)

    def start(self, user_id: int, index: int) -> None:
        if user_id in self.stints:
            return  # once per match, whatever happened since
        stint = Stint(match_id=self.match_id, user_id=user_id, seat=index,
                      state=PLAYING, started_at=self.now)
        self.stints[user_id] = stint
        self.new.append(stint)
        self._count(user_id, "started")

    def end(self, stint: Stint, state: str, how: str) -> None:
        stint.state, stint.ended_at, stint.how = state, self.now, how
        if stint not in self.new and stint not in self.changed:
            self.changed.append(stint)
        if state == FINISHED:
            self._count(stint.user_id, "finished")
        elif state == ABANDONED:
            self._count(stint.user_id, "abandoned")

    def _count(self, user_id: int, field: str) -> None:
        counts = self.counts.setdefault(user_id, {})
        counts[field] = counts.get(field, 0) + 1

    def save(self) -> None:
        if self.new:
            Stint.objects.bulk_create(self.new)
        for stint in self.changed:
            stint.save(update_fields=["state", "ended_at", "how"])
        if not self.counts:
            return
        ids = sorted(self.counts)
        known = set(Record.objects.filter(user_id__in=ids).values_list("user_id", flat=True))
        missing = [Record(user_id=u) for u in ids if u not in known]
        if missing:
            Record.objects.bulk_create(missing, ignore_conflicts=True)
        for user_id in ids:
            counts = self.counts[user_id]
            left = counts.get("abandoned", 0)
            if left:
                # The times are a list: read and written under the record's row lock.
                record = Record.objects.select_for_update().get(user_id=user_id)
                times = record.abandoned_at + [self.now.isoformat()] * left
                record.abandoned_at = times[-rules.KEPT_ABANDONMENTS:]
                record.started += counts.get("started", 0)
                record.finished += counts.get("finished", 0)
                record.abandoned += left
                record.updated_at = self.now
                record.save()
            else:
                Record.objects.filter(user_id=user_id).update(
                    started=F("started") + counts.get("started", 0),
                    finished=F("finished") + counts.get("finished", 0), updated_at=self.now)
