"""The collusion check on the site (apps/fairplay/judging.py, docs/collusion.md): a finished rated
match is queued once on a queue of its own; its judgement counts once per pair and per person; a
pair that crosses the threshold gets a staff report beside the others, which staff dismiss or
act on (on the modlog), never a ban by itself; an honest pair is not reported; players never see
any of it. The done-when test plays real matches with moves chosen from the partner's hand."""

from __future__ import annotations

import json
import random
import time

import pytest
from django.conf import settings
from django.test import Client

from apps.bots import collusion, search
from apps.core import processes
from apps.fairplay import judging
from apps.fairplay.models import (
    CollusionReport,
    Judgement,
    PairMatch,
    PairTally,
    PersonTally,
)
from apps.moderation.models import Ban, ModerationLog, Report
from apps.moderation.services import make_moderator
from apps.rules.engine import legal_dict
from apps.rules.view import seat_view
from apps.tables import services
from apps.tables.models import Table
from apps.tables.selectors import table_state

from .conftest import engine_of

#: A small search for the peeking players' choices (the judge keeps its own budget).
PEEK = search.Budget(playouts=0, min_deals=30, infer=0.7)


@pytest.fixture
def sent(monkeypatch):
    """The tasks sent to the collusion queue (match ids), instead of a broker."""
    out: list[int] = []
    monkeypatch.setattr(judging, "send", out.append)
    return out


def partners_table(people, *, public: bool = True, target: int = 50) -> Table:
    """host and bea partners (seats 0 and 2) against ana and caio (1 and 3)."""
    table = services.create_table(host=people["host"], preset="partners", players=4,
                                  public=public,
                                  options={"turn_seconds": None, "target": target})
    for name in ("ana", "bea", "caio"):
        services.join_table(user=people[name], table_id=table.pk, code=table.code)
    services.start_match(user=people["host"], table_id=table.pk)
    table = Table.objects.get(pk=table.pk)
    assert {s.index: s.user.username for s in table.seats.all()} == {
        0: "host", 1: "ana", 2: "bea", 3: "caio"}
    return table


def play_match(table: Table, *, peeking=(), seed: int = 1) -> None:
    """The match to its end through the table services: the seats in ``peeking`` choose with
    their partner's hand in view (a colluder's choice), the others at random."""
    rng = random.Random(seed)
    while True:
        engine = engine_of(table)
        if engine.over:
            return
        if engine.current is None:
            services.next_round(user=Table.objects.get(pk=table.pk).host, table_id=table.pk)
            continue
        rnd = engine.current
        seat = rnd.turn
        user = table.seats.get(index=seat).user
        if seat in peeking and len(rnd.legal()) > 1:
            view = seat_view(engine, seat)
            mate = collusion.partner(engine.rules, seat)
            pub = collusion.knowing_public(view, mate, list(rnd.hands[mate]))
            move = view["legal"][search.choose(pub, rng, PEEK)]
        else:
            move = legal_dict(*rng.choice(rnd.legal()))
        services.play_move(user=user, table_id=table.pk, round_number=len(engine.rounds) - 1,
                           ply=len(rnd.history), tile=move.get("play"), end=move.get("end"),
                           is_pass=bool(move.get("pass")))


def staff(people):
    make_moderator(people["outsider"])
    client = Client()
    client.force_login(people["outsider"])
    return client


def fake_judgement(knowing_pair=(0, 2), picks: int = 60):
    """``judge_record`` replaced: the seats of ``knowing_pair`` picked the knowing move at most
    telling positions, the other pair at honest rates (strong players, few knowing picks)."""
    def judge_record(record, *, seats, seed, budget):
        counts, telling = {}, []
        for s in seats:
            knowing = picks * 9 // 10 if s in knowing_pair else picks // 4
            counts[str(s)] = {"judged": 3 * picks, "plain": picks, "plain_agree": picks * 3 // 4,
                              "telling": picks, "knowing": knowing, "own": picks - knowing,
                              "other": 0, "cells": {"2:6": [knowing, picks - knowing]}}
            telling.append({"round": 1, "index": s, "seat": s,
                            "played": {"play": "6-4", "end": "A"},
                            "own": {"play": "5-5", "end": "B"},
                            "knowing": {"play": "6-4", "end": "A"}, "own_gap": 2.5,
                            "knowing_gap": 7.5,
                            "picked": "knowing" if s in knowing_pair else "own"})
        return {"ok": True, "version": 2, "counts": counts, "telling": telling}
    return judge_record


# -- queueing ---------------------------------------------------------------------------------

def test_a_finished_rated_match_is_queued_once_on_its_own_queue(
        people, sent, django_capture_on_commit_callbacks):
    table = partners_table(people)
    with django_capture_on_commit_callbacks(execute=True):
        play_match(table)
    match = Table.objects.get(pk=table.pk).current_match
    assert match.finished_at is not None
    assert sent == [match.pk]
    assert Judgement.objects.get(match=match).status == Judgement.Status.QUEUED
    # The route and the worker: only the judging worker takes the queue, niced.
    assert settings.CELERY_TASK_ROUTES[judging.JUDGE_MATCH] == {"queue": "collusion"}
    assert "collusion" not in processes.WORKER_QUEUES.split(",")
    worker = processes.judge_worker()
    assert worker[:3] == ["nice", "-n", str(processes.JUDGE_NICENESS)]
    assert worker[worker.index("-Q") + 1] == judging.COLLUSION_QUEUE


def test_a_private_match_is_not_judged(people, sent):
    table = partners_table(people, public=False)
    play_match(table)
    assert not Judgement.objects.exists() and sent == []


def test_a_lost_check_is_sent_again_and_a_broken_one_fails_for_good(people, sent,
                                                                    monkeypatch):
    from datetime import timedelta

    from django.utils import timezone

    from apps.fairplay import tasks

    table = partners_table(people)
    play_match(table)
    match = Table.objects.get(pk=table.pk).current_match
    assert judging.judge_waiting() == 0  # a fresh row waits for its task
    Judgement.objects.update(created_at=timezone.now() - judging.WAITING_LIMIT
                             - timedelta(seconds=1))
    sent.clear()
    assert judging.judge_waiting() == 1 and sent == [match.pk]

    def broken(*args, **kwargs):
        raise ValueError("no such move")

    monkeypatch.setattr(judging.collusion, "judge_record", broken)
    assert tasks.judge_match(match.pk) == "failed"
    row = Judgement.objects.get(match=match)
    assert row.status == Judgement.Status.FAILED and "no such move" in row.error
    assert judging.judge_waiting() == 0


# -- counting and reporting -------------------------------------------------------------------

def test_a_judgement_counts_once_per_pair_and_per_person(people, sent, monkeypatch):
    monkeypatch.setattr(judging.collusion, "judge_record", fake_judgement(knowing_pair=()))
    table = partners_table(people)
    play_match(table)
    match = Table.objects.get(pk=table.pk).current_match
    assert judging.judge(match.pk) == "done"
    assert judging.judge(match.pk) == "done"  # a task run twice counts nothing again
    host, ana, bea, caio = (people[n] for n in ("host", "ana", "bea", "caio"))
    pair = PairTally.objects.get(low=min(host, bea, key=lambda u: u.pk),
                                 high=max(host, bea, key=lambda u: u.pk))
    assert (pair.matches, pair.telling, pair.knowing, pair.own) == (1, 120, 30, 90)
    assert pair.cells == {"2:6": [30, 90]}  # the classes are kept with the sums
    assert PairTally.objects.count() == 2
    assert PersonTally.objects.get(user=ana).telling == 60
    assert PairMatch.objects.filter(pair=pair).get().telling[0]["seat"] in (0, 2)
    # Honest rates: nobody reported.
    assert not CollusionReport.objects.exists() and not Report.objects.exists()
    assert PersonTally.objects.get(user=caio).matches == 1


def test_a_pair_over_the_threshold_is_reported_to_staff_who_decide(people, sent,
                                                                   monkeypatch):
    monkeypatch.setattr(judging.collusion, "judge_record", fake_judgement(knowing_pair=(0, 2)))
    table = partners_table(people)
    play_match(table)
    match = Table.objects.get(pk=table.pk).current_match
    judging.judge(match.pk)
    case = CollusionReport.objects.get()
    assert {case.pair.low.username, case.pair.high.username} == {"host", "bea"}
    assert case.verdict["flagged"] and case.status == CollusionReport.Status.OPEN
    report = case.report
    assert report.reporter is None and report.reason == Report.Reason.CHEATING
    # Beside the other reports, with the pair and the statistic; the matches and the telling
    # positions on the fair-play page.
    client = staff(people)
    queue = client.get("/staff/reports/").content.decode()
    assert f'href="/staff/reports/{report.pk}/"' in queue
    page = client.get(f"/staff/reports/{report.pk}/").content.decode()
    assert "Partners who may see each other" in page and f"/fairplay/staff/collusion/{case.pk}/" \
        in page
    assert 'name="resolution"' not in page  # decided on the fair-play page
    detail = client.get(f"/fairplay/staff/collusion/{case.pk}/").content.decode()
    assert table.code in detail and "6-4 on end A" in detail and "5-5 on end B" in detail
    assert "Log likelihood ratio" in detail
    # A second match does not open a second report while one is open.
    judging.match_over(Table.objects.get(pk=table.pk))  # the same match: no new row
    assert Judgement.objects.count() == 1
    # Staff dismiss it: the modlog has it, nobody is banned.
    response = client.post(f"/fairplay/staff/collusion/{case.pk}/decide/",
                           {"decision": "dismiss", "note": "they talk at the same desk"})
    assert response.status_code == 302
    case.refresh_from_db()
    assert case.status == CollusionReport.Status.DISMISSED
    entry = ModerationLog.objects.get(action=ModerationLog.Action.CLOSE_REPORT)
    assert entry.target_report_id == report.pk and entry.actor == people["outsider"]
    assert entry.reason == "Dismissed: they talk at the same desk"
    assert not Ban.objects.exists()
    assert PairTally.objects.get(pk=case.pair_id).llr_at_close == case.pair.llr
    # Not again without as much new evidence again.
    judging._maybe_report(PairTally.objects.get(pk=case.pair_id), match)
    assert CollusionReport.objects.count() == 1


def test_only_staff_who_handle_reports_see_a_collusion_report(people, sent, monkeypatch):
    monkeypatch.setattr(judging.collusion, "judge_record", fake_judgement(knowing_pair=(0, 2)))
    table = partners_table(people)
    play_match(table)
    judging.judge(Table.objects.get(pk=table.pk).current_match.pk)
    case = CollusionReport.objects.get()
    for name in ("host", "bea", "ana"):
        client = Client()
        client.force_login(people[name])
        assert client.get(f"/fairplay/staff/collusion/{case.pk}/").status_code == 403
        assert client.post(f"/fairplay/staff/collusion/{case.pk}/decide/",
                           {"decision": "act", "note": "x"}).status_code == 403
        # Their own pages and the table's state (what the socket sends) say nothing of it.
        for path in ("/accounts/profile/", f"/t/{table.code}/", "/"):
            response = client.get(path, follow=True)
            assert response.status_code == 200, path
            body = response.content.decode().lower()
            for word in ("collusion", "telling", "partner's hand", "likelihood"):
                assert word not in body, (name, path, word)
        state = json.dumps(table_state(table_id=table.pk, user=people[name])).lower()
        assert "collusion" not in state and "telling" not in state
    assert CollusionReport.objects.get().status == CollusionReport.Status.OPEN


# -- the done-when test: real matches, real judging -------------------------------------------

@pytest.mark.slow
def test_partners_who_see_each_others_tiles_are_reported_and_an_honest_pair_is_not(
        people, sent):
    """host and bea (seats 0 and 2) choose every move with the partner's hand in view; ana and
    caio play honestly (at random). Matches are played through the table services and judged
    by the site's own check until the report comes (at most 12 matches)."""
    table = partners_table(people, target=100)
    started = time.perf_counter()
    for m in range(12):
        if m:
            table = _next_match(table, people)
        play_match(table, peeking=(0, 2), seed=m)
        match = Table.objects.get(pk=table.pk).current_match
        assert judging.judge(match.pk) == "done"
        if CollusionReport.objects.exists():
            break
    case = CollusionReport.objects.get()
    assert {case.pair.low.username, case.pair.high.username} == {"host", "bea"}
    honest = PairTally.objects.exclude(pk=case.pair_id).get()
    assert not judging.verdict_of(honest)["flagged"]
    client = staff(people)
    page = client.get(f"/staff/reports/{case.report_id}/").content.decode()
    assert "Partners who may see each other" in page
    detail = client.get(f"/fairplay/staff/collusion/{case.pk}/").content.decode()
    assert "the partner&#x27;s hand&#x27;s move" in detail
    print(f"reported after {case.pair.matches} matches in {time.perf_counter() - started:.0f} s:"
          f" {case.verdict}")


def _next_match(table: Table, people) -> Table:
    """A new match at the same table, the same four people in their seats."""
    services.new_match(user=people["host"], table_id=table.pk)
    return Table.objects.get(pk=table.pk)


def test_the_staff_words_are_translated():
    from django.utils import translation

    from apps.fairplay import parts

    found = {"picks": 40, "knowing": 30, "rate": 0.75, "p0": 0.45, "llr": 6.1,
             "threshold": 4.61}
    for language, title, word in (("es", "Compañeros que quizá ven", "posiciones reveladoras"),
                                  ("pt-br", "Parceiros que talvez vejam", "posições reveladoras")):
        with translation.override(language):
            assert parts.collusion_section.__doc__  # the section's words come from gettext
            assert translation.gettext("Partners who may see each other's tiles") \
                .startswith(title)
            assert word in parts.statistic_words(found)
            assert parts.move_words({"play": "6-4", "end": "A"}) != "6-4 on end A"


# -- the worker that takes the queue ----------------------------------------------------------

@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.django_db(transaction=True)
def test_the_judging_worker_takes_the_collusion_queue(tmp_path, monkeypatch):
    """The launcher's own command line for the judging worker (tests/live.py ``Stack.judge``):
    a match that ends sends its check to the collusion queue, and that worker, alone, judges
    it (no main worker is running)."""
    import os

    from celery import current_app

    from ..live import Stack, _broker_url
    from .conftest import make_people

    people = make_people()
    site = Stack(tmp_path / "site")
    site.judge()
    sent_to_stack = []

    def send(match_id: int) -> None:
        # judging.send's call, into the stack's broker (the tests' own is another database).
        with current_app.connection_for_write(_broker_url(os.environ["REDIS_URL"])) as conn:
            current_app.send_task(judging.JUDGE_MATCH, (match_id,),
                                  queue=judging.COLLUSION_QUEUE, connection=conn)
        sent_to_stack.append(match_id)

    monkeypatch.setattr(judging, "send", send)
    try:
        table = partners_table(people)
        play_match(table)  # the commit sends the task
        match = Table.objects.get(pk=table.pk).current_match
        assert sent_to_stack == [match.pk]
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            row = Judgement.objects.get(match=match)
            if row.status != Judgement.Status.QUEUED:
                break
            time.sleep(0.5)
        assert row.status == Judgement.Status.DONE, site.log("judge")
        assert PairTally.objects.count() == 2 and row.seconds > 0
    finally:
        site.stop()
