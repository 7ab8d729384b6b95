"""The collusion check on the site: every finished rated match judged in the background, the
counts kept per pair and per person, and staff told when a pair crosses the threshold.

- :func:`match_over` (from :func:`apps.fairplay.record.table_changing`, inside the table's
  transaction at the version that ends a match): a rated match (a public table that is not
  practice, hosted by an account: online, stake and tournament matches) gets a
  :class:`~apps.fairplay.models.Judgement` row, and after the commit the task
  ``apps.fairplay.tasks.judge_match`` on the ``collusion`` queue. That queue has a worker of
  its own at a lower CPU priority (``apps.core.processes.judge_worker``): the tables' timers and
  the bots' turns, on the other worker, never wait for it.
- :func:`judge` (the task): ``apps.bots.collusion.judge_record`` over the seats whose partner
  is a person who finished the match with them (moves a bot or the table made for someone are
  not theirs, and are skipped), then the counts added once (the row goes from queued to done
  under its lock).
- A pair whose test (``apps.bots.collusion.verdict``) flags it gets a
  :class:`~apps.fairplay.models.CollusionReport` and a moderation report beside the others;
  nothing else happens to them: staff decide (``services.decide_collusion``). People never
  see any of it.

``docs/collusion.md`` has the statistic and its numbers.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from celery import current_app
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts.selectors import is_guest
from apps.bots import collusion
from apps.moderation import services as moderation
from apps.tables.models import Match
from apps.tables.selectors import display_name, finished_record

from .models import CollusionReport, Judgement, PairMatch, PairTally, PersonTally, Stint

log = logging.getLogger(__name__)

#: The queue of its own (``apps.core.processes.JUDGE_QUEUES``) and the task's name.
COLLUSION_QUEUE = "collusion"
JUDGE_MATCH = "apps.fairplay.tasks.judge_match"
#: A judgement still queued after this long lost its task (a worker restarted, the broker was
#: away): beat's ``judge_waiting`` sends it again.
WAITING_LIMIT = timedelta(minutes=10)


def rated(table) -> bool:
    """Online, stake and tournament tables: public, not practice, an account's."""
    return bool(table.public and not table.practice and not is_guest(table.host))


def match_over(table, seats=None) -> None:
    """At the version that ends a match, inside the table's transaction: queue its check, when
    two people sit as partners (``seats``, the table's seats; None: look at the stints later)."""
    if seats is not None:
        people = {s.index: s.user_id for s in seats if s.user_id is not None and not s.is_bot}
        if not pairs_of(people):
            return
    if not rated(table):
        return
    match_id = (Match.objects.filter(table_id=table.pk).order_by("-number")
                .values_list("pk", flat=True).first())
    if match_id is None:
        return
    _row, created = Judgement.objects.get_or_create(match_id=match_id)
    if created:
        transaction.on_commit(lambda: send(match_id))


def send(match_id: int) -> None:
    """The task, on the collusion queue. The broker being away loses nothing: the row waits,
    and ``judge_waiting`` sends it again."""
    try:
        current_app.send_task(JUDGE_MATCH, (match_id,), queue=COLLUSION_QUEUE)
    except Exception:  # noqa: BLE001
        log.exception("could not send the collusion check of match %s", match_id)


def judge_waiting(*, now=None) -> int:
    """Send again the checks queued for longer than ``WAITING_LIMIT``; how many."""
    now = now or timezone.now()
    ids = list(Judgement.objects.filter(status=Judgement.Status.QUEUED,
                                        created_at__lt=now - WAITING_LIMIT)
               .values_list("match_id", flat=True)[:200])
    for match_id in ids:
        send(match_id)
    return len(ids)


def fail(match_id: int, err: BaseException) -> None:
    """A check that raised: failed for good (its row says why; the logs hold the rest)."""
    Judgement.objects.filter(match_id=match_id, status=Judgement.Status.QUEUED).update(
        status=Judgement.Status.FAILED, error=f"{type(err).__name__}: {err}"[:200],
        finished_at=timezone.now())


def people_at(match_id: int) -> dict[int, int]:
    """Seat -> the person who played it to the end (fair play's stints)."""
    return dict(Stint.objects.filter(match_id=match_id, state=Stint.State.FINISHED)
                .values_list("seat", "user_id"))


def pairs_of(people: dict[int, int]) -> list[tuple[int, int]]:
    """The partner seats (0 and 2, 1 and 3) both held by people, two different ones."""
    out = []
    for a, b in ((0, 2), (1, 3)):
        if a in people and b in people and people[a] != people[b]:
            out.append((a, b))
    return out


def judge(match_id: int, *, budget=None) -> str:
    """Judge one match's moves and add them to the tallies, once. Returns what happened."""
    match = Match.objects.select_related("table").filter(pk=match_id).first()
    row = Judgement.objects.filter(match_id=match_id).first()
    if match is None or row is None:
        return "gone"
    if row.status != Judgement.Status.QUEUED:
        return row.status
    people = people_at(match_id)
    pairs = pairs_of(people)
    if not pairs or match.finished_at is None:
        Judgement.objects.filter(pk=row.pk, status=Judgement.Status.QUEUED).update(
            status=Judgement.Status.SKIPPED, finished_at=timezone.now())
        return "skipped"
    record = finished_record(match.table, match.number)
    seats = sorted(s for pair in pairs for s in pair)
    started = time.perf_counter()
    result = collusion.judge_record(record, seats=seats, seed=match_id,
                                    budget=budget or collusion.BUDGET)
    seconds = time.perf_counter() - started
    if not result.get("ok"):
        Judgement.objects.filter(pk=row.pk, status=Judgement.Status.QUEUED).update(
            status=Judgement.Status.FAILED, error=str(result.get("error"))[:200],
            finished_at=timezone.now())
        return "failed"
    return _store(row.pk, match, people, pairs, result, seconds)


def _store(row_id: int, match: Match, people: dict[int, int], pairs: list[tuple[int, int]],
           result: dict, seconds: float) -> str:
    now = timezone.now()
    counts = {int(s): collusion.Counts.of(c) for s, c in result["counts"].items()}
    with transaction.atomic():
        row = Judgement.objects.select_for_update().get(pk=row_id)
        if row.status != Judgement.Status.QUEUED:
            return row.status  # another run stored it first
        row.status, row.result, row.seconds, row.finished_at = (
            Judgement.Status.DONE, result, seconds, now)
        row.save(update_fields=["status", "result", "seconds", "finished_at"])
        # Locks in one order (pairs by ids, then people by id): two matches' checks never wait
        # on each other's rows in opposite orders.
        for a, b in sorted(pairs, key=lambda p: sorted((people[p[0]], people[p[1]]))):
            both = collusion.Counts().add(counts.get(a, collusion.Counts())).add(
                counts.get(b, collusion.Counts()))
            low, high = sorted((people[a], people[b]))
            PairTally.objects.get_or_create(low_id=low, high_id=high)
            pair = PairTally.objects.select_for_update().get(low_id=low, high_id=high)
            _add(pair, both, now)
            PairMatch.objects.get_or_create(
                pair=pair, match=match, defaults={
                    "seats": [[a, people[a]], [b, people[b]]], "counts": both.as_dict(),
                    "telling": [t for t in result["telling"] if t["seat"] in (a, b)]})
            _maybe_report(pair, match)
        for seat in sorted(counts, key=lambda s: people[s]):
            PersonTally.objects.get_or_create(user_id=people[seat])
            person = PersonTally.objects.select_for_update().get(user_id=people[seat])
            _add(person, counts[seat], now)
    return "done"


def _add(tally, counts: collusion.Counts, now) -> None:
    total = collusion.Counts.of(tally.counts()).add(counts)
    for field in tally.COUNTS:
        setattr(tally, field, getattr(total, field))
    tally.cells = total.cells
    tally.matches += 1
    tally.llr = collusion.verdict(total)["llr"]
    tally.updated_at = now
    tally.save()


def verdict_of(tally) -> dict:
    return collusion.verdict(collusion.Counts.of(tally.counts()))


def _maybe_report(pair: PairTally, match: Match) -> None:
    """Staff hear of a pair that crossed the threshold: once while a report is open, and after
    one is closed only when the evidence has grown by the threshold again."""
    found = verdict_of(pair)
    if not found["flagged"]:
        return
    if pair.reports.filter(status=CollusionReport.Status.OPEN).exists():
        return
    if pair.llr_at_close is not None and pair.llr < pair.llr_at_close + collusion.threshold():
        return
    names = {u.pk: display_name(u) for u in (pair.low, pair.high)}
    report = moderation.system_report(
        table_id=match.table_id, reported_user_id=pair.low_id,
        note=_("Collusion check: %(a)s and %(b)s, partners, chose the move their partner's "
               "hand called for more often than honest play does (log likelihood ratio "
               "%(llr)s, threshold %(threshold)s).") % {
            "a": names[pair.low_id], "b": names[pair.high_id], "llr": found["llr"],
            "threshold": found["threshold"]})
    CollusionReport.objects.create(pair=pair, report=report, verdict=found)
