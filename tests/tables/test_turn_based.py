"""Turn-based tables through the services: their own per-move deadline in the database, no
presence rules, timeouts that play first-fit and hand the seat to a stand-in, the events, and
an outage that moves the clocks on (docs/turn-based.md)."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.utils import timezone, translation

from apps.accounts.services import set_language
from apps.fairplay.models import Record
from apps.rules.tiles import NAMES
from apps.tables import services
from apps.tables.models import BeatMark, Move, Seat, Table, TableEvent
from apps.tables.services import NotDue, ServiceError, outage

from .conftest import play_random_move, position, seat_user

DAY = 86400


def fresh(table: Table) -> Table:
    return Table.objects.get(pk=table.pk)


def events_of(table: Table, kind: str) -> list[dict]:
    return [e for row in TableEvent.objects.filter(table=table).order_by("version")
            for e in row.events if e.get("kind") == kind]


@pytest.fixture
def turn_table(people):
    """partners, turn-based, a day per move, four people who never open the page."""
    table = services.create_table(host=people["host"], preset="partners", pace="turn",
                                  move_seconds=DAY)
    for name in ("ana", "bea", "caio"):
        services.join_table(user=people[name], table_id=table.pk, code=table.code)
    services.start_match(user=people["host"], table_id=table.pk)
    return fresh(table)


def test_a_turn_based_table_has_a_day_per_move_and_says_whose_turn_it_is(turn_table):
    table = turn_table
    assert table.pace == "turn" and table.person_clock
    assert table.turn_deadline - table.turn_started_at == timedelta(days=1)
    assert set(Seat.objects.filter(table=table).values_list("turn_based", flat=True)) == {True}
    engine, _rnd, _ply = position(table)
    turn = events_of(table, "turn")[-1]
    assert turn["seat"] == engine.current.turn
    assert turn["user"] == seat_user(table, engine.current.turn).pk
    assert turn["deadline"] == table.turn_deadline.isoformat()


def test_the_time_per_move_is_one_of_the_choices(people):
    with pytest.raises(ServiceError) as err:
        services.create_table(host=people["host"], preset="partners", pace="turn",
                              move_seconds=120)
    assert err.value.code == "bad_options"
    with pytest.raises(ServiceError):
        services.create_table(host=people["host"], preset="partners", pace="turn",
                              move_seconds=DAY, timeouts_to_standin=6)
    assert not Table.objects.exists()


def test_the_choices_come_from_the_settings(people, settings):
    settings.TURN_BASED_MOVE_SECONDS = (60,)
    table = services.create_table(host=people["host"], preset="block", players=2, pace="turn",
                                  move_seconds=60)
    assert table.move_seconds == 60


def test_nobody_at_the_page_never_pauses_closes_or_stands_in(turn_table, people):
    table = turn_table
    for seat in table.seats.all():
        services.connect(user=seat.user, table_id=table.pk, channel_name=f"c{seat.index}")
    for seat in table.seats.all():
        services.disconnect(channel_name=f"c{seat.index}")
    table = fresh(table)
    assert not table.paused and table.empty_since is None
    later = timezone.now() + timedelta(hours=20)
    done = services.sweep(now=later)
    assert done["standins"] == 0 and done["closed"] == 0 and done["deadlines"] == 0
    table = fresh(table)
    assert table.state == Table.State.PLAYING and not table.paused
    assert not Seat.objects.filter(table=table, standin=True).exists()


def test_a_timeout_plays_the_first_tile_that_fits_and_says_so(turn_table):
    table = turn_table
    engine, rnd, ply = position(table)
    first = engine.current.legal()[0]
    with pytest.raises(NotDue):
        services.act_on_deadline(table_id=table.pk, round_number=rnd, ply=ply,
                                 now=table.turn_deadline - timedelta(minutes=1))
    services.act_on_deadline(table_id=table.pk, round_number=rnd, ply=ply,
                             now=table.turn_deadline)
    move = Move.objects.get()
    assert move.by == Move.By.TABLE and move.tile == NAMES[first[0]]
    timeout = events_of(table, "timeout")
    assert timeout == [{"kind": "timeout", "seat": move.seat, "user":
                        seat_user(table, move.seat).pk, "count": 1, "limit": 3,
                        "moved": False, "first": True}]


def _play_until_timeouts(table: Table, victim: int, wanted: int, rng: random.Random) -> None:
    """Everyone but seat ``victim`` plays; the victim's time runs out each turn."""
    timed_out = 0
    for _step in range(400):
        table = fresh(table)
        engine, rnd, ply = position(table)
        if engine.current is None:
            services.act_on_deadline(table_id=table.pk, now=table.turn_deadline)
            continue
        seat = table.seats.get(index=engine.current.turn)
        if seat.index == victim and not seat.standin:
            services.act_on_deadline(table_id=table.pk, round_number=rnd, ply=ply,
                                     now=table.turn_deadline)
            timed_out += 1
            if timed_out == wanted:
                return
        elif seat.played_by_bot:
            services.act_on_deadline(table_id=table.pk, now=table.turn_deadline)
        else:
            play_random_move(table, rng)
    raise AssertionError("the victim never timed out enough")


def test_three_timeouts_in_a_row_hand_the_seat_to_a_stand_in_and_count_as_abandoned(
        turn_table):
    table = turn_table
    victim = 1
    user = seat_user(table, victim)
    _play_until_timeouts(table, victim, 2, random.Random(3))
    assert not Seat.objects.get(table=table, index=victim).standin
    _play_until_timeouts(table, victim, 1, random.Random(4))
    seat = Seat.objects.get(table=table, index=victim)
    assert seat.standin and seat.forfeited and seat.timeouts == 3
    assert events_of(table, "seat_to_standin") == [
        {"kind": "seat_to_standin", "seat": victim, "user": user.pk, "timeouts": 3}]
    assert Record.objects.get(user=user).abandoned == 1
    # Opening the page does not take the seat back, nor may they move: a bot plays it out.
    services.connect(user=user, table_id=table.pk, channel_name="back")
    assert Seat.objects.get(table=table, index=victim).standin
    with pytest.raises(ServiceError) as err:
        services.play_move(user=user, table_id=table.pk, round_number=0, ply=0, tile="6-6")
    assert err.value.code == "standin"


def test_a_move_of_ones_own_starts_the_count_again(turn_table):
    table = turn_table
    victim = 2
    _play_until_timeouts(table, victim, 2, random.Random(5))
    assert Seat.objects.get(table=table, index=victim).timeouts == 2
    for _step in range(200):
        table = fresh(table)
        engine, rnd, ply = position(table)
        if engine.current is None:
            services.act_on_deadline(table_id=table.pk, now=table.turn_deadline)
            continue
        turn = engine.current.turn
        play_random_move(table, random.Random(turn))
        if turn == victim:
            break
    assert Seat.objects.get(table=table, index=victim).timeouts == 0


def test_live_tables_keep_their_rules(people):
    table = services.create_table(host=people["host"], preset="partners", public=True)
    for name in ("ana", "bea", "caio"):
        services.join_table(user=people[name], table_id=table.pk)
    services.start_match(user=people["host"], table_id=table.pk)
    table = fresh(table)
    assert table.pace == "live" and not table.person_clock
    assert not events_of(table, "turn")


def test_an_outage_moves_every_turn_based_clock_on_by_its_length(turn_table, people):
    table = turn_table
    before = table.turn_deadline
    now = timezone.now()
    assert outage.note_beat(now=now) is None
    assert outage.note_beat(now=now + timedelta(seconds=1)) is None
    gap = outage.note_beat(now=now + timedelta(hours=2))
    assert gap == timedelta(hours=2) - timedelta(seconds=1)
    table = fresh(table)
    assert table.turn_deadline == before + gap
    # Arming the clock again (a rename bumps the version) keeps the new deadline.
    services.rename_table(user=people["host"], table_id=table.pk, name="Later")
    assert fresh(table).turn_deadline == before + gap


def test_a_timer_while_beat_is_silent_leaves_the_timeout_to_the_sweep(turn_table):
    table = turn_table
    deadline = table.turn_deadline
    BeatMark.objects.create(name="sweep", seen_at=deadline - timedelta(minutes=10))
    with pytest.raises(NotDue):
        services.act_on_deadline(table_id=table.pk, now=deadline + timedelta(seconds=1))
    assert not Move.objects.exists()
    # Beat comes back: the ten minutes were an outage; the move is played ten minutes later,
    # once.
    assert services.sweep(now=deadline + timedelta(seconds=1))["deadlines"] == 0
    table = fresh(table)
    assert table.turn_deadline == deadline + timedelta(minutes=10, seconds=1)
    # (Beat ran every second since: its mark is recent.)
    BeatMark.objects.update(seen_at=table.turn_deadline)
    done = services.sweep(now=table.turn_deadline + timedelta(seconds=1))
    assert done["deadlines"] == 1 and Move.objects.count() == 1


def test_the_create_form_opens_a_turn_based_table(client, people):
    from django.urls import reverse

    set_language(user=people["host"], language="en")
    client.force_login(people["host"])
    page = client.get(reverse("tables:create")).content.decode()
    assert 'value="turn"' in page and "1 day per move" in page
    client.post(reverse("tables:create"), {
        "preset": "partners", "bot_level": "medium", "bot_think_ms": "1000", "pace": "turn",
        "move_seconds": "28800", "timeouts_to_standin": "2"})
    table = Table.objects.get()
    assert (table.pace, table.move_seconds, table.timeouts_to_standin) == ("turn", 28800, 2)
    assert table.options.get("turn_seconds") is None


def test_my_games_lists_the_unfinished_matches_your_move_first(turn_table, people, client):
    from django.urls import reverse

    from apps.tables.mygames import my_games, next_game

    live = services.create_table(host=people["host"], preset="block", players=2)
    services.join_table(user=people["ana"], table_id=live.pk, code=live.code)
    engine, _rnd, _ply = position(turn_table)
    mover = seat_user(turn_table, engine.current.turn)
    rows = my_games(user=mover)
    assert [r["code"] for r in rows][0] == turn_table.code
    first = rows[0]
    assert first["your_move"] and first["pace"] == "turn"
    assert 86300 < first["left_seconds"] <= 86400
    other = next(u for u in (people["host"], people["ana"], people["bea"], people["caio"])
                 if u != mover)
    theirs = next(r for r in my_games(user=other) if r["code"] == turn_table.code)
    assert not theirs["your_move"] and theirs["to_play"]
    # The next game where it's your move: this one, unless you are at it.
    assert next_game(user=mover)["code"] == turn_table.code
    assert next_game(user=mover, after_table_id=turn_table.pk) is None
    set_language(user=mover, language="en")
    client.force_login(mover)
    page = client.get(reverse("tables:games")).content.decode()
    assert "Your move" in page and turn_table.code in page
    assert client.get(reverse("tables:next_game_json") + f"?from={turn_table.pk}").json() == {
        "url": None, "name": None}
    assert client.get(reverse("tables:next_game_json")).json()["url"] == reverse(
        "tables:table", args=[turn_table.code])
    response = client.get(reverse("tables:next_game") + f"?from={turn_table.pk}")
    assert response.status_code == 302 and response.url == reverse("tables:games")


def test_a_vacation_stops_the_clock_and_gives_back_the_time_left(turn_table, people):
    table = turn_table
    engine, rnd, ply = position(table)
    mover = seat_user(table, engine.current.turn)
    deadline = table.turn_deadline
    start = timezone.now()
    services.start_vacation(user=mover, days=3, now=start)
    table = fresh(table)
    # Stopped from the vacation's start to its end: three more days.
    assert table.turn_deadline == deadline + timedelta(days=3)
    vacation = events_of(table, "vacation")[-1]
    assert vacation["user"] == mover.pk and vacation["until"]
    assert events_of(table, "turn")[-1]["deadline"] == table.turn_deadline.isoformat()
    with pytest.raises(NotDue):
        services.act_on_deadline(table_id=table.pk, now=deadline + timedelta(hours=1))
    with pytest.raises(ServiceError) as err:
        services.start_vacation(user=mover, days=1)
    assert err.value.code == "on_vacation"
    # Back after one day: the clock runs again with the day it had left.
    back = start + timedelta(days=1)
    services.stop_vacation(user=mover, now=back)
    table = fresh(table)
    assert table.turn_deadline == deadline + (back - start)
    mover.profile.refresh_from_db()
    assert services.vacation_left(mover.profile, back) == timedelta(days=13)
    # A second vacation later keeps the first one's stop for this same turn.
    services.start_vacation(user=mover, days=1, now=back + timedelta(hours=1))
    assert fresh(table).turn_deadline == deadline + (back - start) + timedelta(days=1)


def test_the_allowance_is_14_days_a_year_and_a_table_may_not_allow_vacation(people):
    table = services.create_table(host=people["host"], preset="block", players=2, pace="turn",
                                  move_seconds=DAY, vacation_allowed=False)
    services.join_table(user=people["ana"], table_id=table.pk, code=table.code)
    services.start_match(user=people["host"], table_id=table.pk)
    table = fresh(table)
    deadline = table.turn_deadline
    with pytest.raises(ServiceError) as err:
        services.start_vacation(user=people["host"], days=15)
    assert err.value.code == "bad_vacation"
    services.start_vacation(user=people["host"], days=14)
    services.start_vacation(user=people["ana"], days=14)
    assert fresh(table).turn_deadline == deadline


def test_vacation_is_started_and_stopped_on_the_profile(client, people):
    from django.urls import reverse

    set_language(user=people["ana"], language="en")
    client.force_login(people["ana"])
    page = client.get(reverse("accounts:profile")).content.decode()
    assert 'id="vacation"' in page and "14 days left" in page
    client.post(reverse("tables:vacation"), {"days": "2"})
    people["ana"].profile.refresh_from_db()
    assert services.on_vacation(people["ana"].profile, timezone.now())
    assert "You are on vacation until" in client.get(reverse("accounts:profile")).content.decode()
    client.post(reverse("tables:vacation"), {"action": "stop"})
    people["ana"].profile.refresh_from_db()
    assert not services.on_vacation(people["ana"].profile, timezone.now())


def test_unfinished_turn_based_matches_are_limited_plus_one_per_finished(people, settings):
    settings.TURN_BASED_UNFINISHED_BASE = 2
    settings.TURN_BASED_UNFINISHED_MAX = 3
    host, ana = people["host"], people["ana"]

    def open_one(user):
        return services.create_table(host=user, preset="block", players=2, pace="turn",
                                     move_seconds=DAY)

    first = open_one(host)
    open_one(host)
    with pytest.raises(ServiceError) as err, translation.override("en"):
        open_one(host)
    assert err.value.code == "too_many_matches"
    assert "2 unfinished turn-based matches" in err.value.message
    # Sitting down counts the same; live tables do not count.
    open_one(ana)
    open_one(ana)
    with pytest.raises(ServiceError):
        services.join_table(user=ana, table_id=first.pk, code=first.code)
    services.create_table(host=ana, preset="block", players=2)
    # One finished turn-based match allows one more, up to the most.
    ana.profile.turn_based_finished = 5
    ana.profile.save()
    from django.contrib.auth import get_user_model

    ana = get_user_model().objects.get(pk=ana.pk)
    services.join_table(user=ana, table_id=first.pk, code=first.code)
    with pytest.raises(ServiceError):
        open_one(ana)


def test_play_now_turn_based_seats_people_who_want_the_same_game_and_time(people, client):
    from django.urls import reverse

    host, ana, bea = people["host"], people["ana"], people["bea"]
    first = services.quick_play(user=host, preset="block", players=2, move_seconds=DAY,
                                allow_bots=False)
    assert first.pace == "turn" and first.quick and first.fill_at is None
    # Another time per move is another game; the same one seats them together and starts.
    other = services.quick_play(user=ana, preset="block", players=2, move_seconds=3600,
                                allow_bots=False)
    assert other.pk != first.pk
    # The lobby lists turn-based tables apart.
    set_language(user=bea, language="en")
    client.force_login(bea)
    page = client.get(reverse("tables:lobby")).content.decode()
    live_part, turn_part = page.split('id="turn-based"')
    assert first.code in turn_part and first.code not in live_part
    assert "1 day per move" in turn_part
    client.post(reverse("tables:quick_play"), {"preset": "block", "players": "2",
                                               "pace": "turn", "move_seconds": str(DAY)})
    table = fresh(first)
    assert table.state == Table.State.PLAYING
    assert set(table.seats.values_list("user__username", flat=True)) == {"host", "bea"}
    assert not table.seats.filter(is_bot=True).exists()
    # Waiting at turn-based tables does not keep anyone from playing live now.
    live = services.quick_play(user=ana, preset="partners")
    assert live.pace == "live"


def test_play_now_turn_based_with_bots_allowed_fills_after_the_wait(people, settings):
    settings.TURN_BASED_QUICK_FILL_SECONDS = 60
    table = services.quick_play(user=people["host"], preset="block", players=3,
                                move_seconds=DAY, allow_bots=True)
    assert table.fill_at is not None
    services.fill_quick_table(table_id=table.pk, now=table.fill_at)
    table = fresh(table)
    assert table.state == Table.State.PLAYING and table.seats.filter(is_bot=True).count() == 2
    assert not table.paused


@pytest.fixture
def live_playing(full_table, people):
    services.start_match(user=people["host"], table_id=full_table.pk)
    rng = random.Random(7)
    for _ in range(3):
        play_random_move(fresh(full_table), rng)
    return fresh(full_table)


def _hands(table: Table):
    engine, rnd, ply = position(table)
    return [list(h) for h in engine.current.hands], rnd, ply


def test_an_adjourned_live_match_resumes_at_the_same_move_with_the_same_hands(
        live_playing, people):
    table = live_playing
    before = _hands(table)
    with pytest.raises(ServiceError):
        services.adjourn(user=people["ana"], table_id=table.pk)
    services.adjourn(user=people["host"], table_id=table.pk)
    table = fresh(table)
    assert table.state == Table.State.ADJOURNED and table.turn_deadline is None
    adjourned = events_of(table, "adjourned")[-1]
    assert adjourned["match"] == 1 and len(adjourned["people"]) == 4
    # Nothing is played, nobody stands in, nothing closes while it waits.
    with pytest.raises(ServiceError):
        play_random_move(table, random.Random(1))
    done = services.sweep(now=timezone.now() + timedelta(days=2))
    assert done["deadlines"] == done["standins"] == done["closed"] == 0
    from apps.tables.mygames import my_games

    row = my_games(user=people["bea"])[0]
    assert row["state"] == "adjourned" and row["code"] == table.code
    services.resume_adjourned(user=people["host"], table_id=table.pk)
    table = fresh(table)
    assert table.state == Table.State.PLAYING and _hands(table) == before
    assert events_of(table, "resumed")[-1]["adjourned"] is True
    # Nobody has the page open: as any live table nobody holds, it waits paused for them.
    assert table.paused
    for seat in table.seats.all():
        services.connect(user=seat.user, table_id=table.pk, channel_name=f"c{seat.index}")
    play_random_move(fresh(table), random.Random(2))


def test_an_adjourned_match_not_resumed_in_30_days_ends_without_counting(live_playing, people):
    from apps.fairplay.models import Stint

    services.adjourn(user=people["host"], table_id=live_playing.pk)
    later = timezone.now() + timedelta(days=30, minutes=1)
    assert services.sweep(now=later)["adjourned_ended"] == 1
    table = fresh(live_playing)
    assert table.state == Table.State.CLOSED and table.closed_reason == "adjourned_expired"
    assert set(Stint.objects.values_list("state", flat=True)) == {Stint.State.VOID}
    assert not Record.objects.filter(abandoned__gt=0).exists()


def test_stake_and_tournament_tables_refuse_to_adjourn_and_to_offer_a_rematch(
        live_playing, people):
    from apps.club.models import Stake

    Stake.objects.create(table=live_playing, entry=10, fill_by=timezone.now())
    with pytest.raises(ServiceError) as err:
        services.adjourn(user=people["host"], table_id=live_playing.pk)
    assert err.value.code == "stake_table"
    assert fresh(live_playing).state == Table.State.PLAYING


def _finish(table: Table) -> None:
    """Play the match out (the first legal move each time, the table dealing between
    rounds)."""
    for _step in range(3000):
        table = fresh(table)
        engine, rnd, ply = position(table)
        if engine.over:
            return
        if engine.current is None:
            services.act_on_deadline(table_id=table.pk, now=table.turn_deadline)
            continue
        play_random_move(table, random.Random(ply))
    raise AssertionError("the match did not end")


def test_rematch_starts_a_new_match_once_every_person_accepted(people):
    table = services.create_table(host=people["host"], preset="block", players=3,
                                  allow_bots=True, options={"target": 1})
    services.join_table(user=people["ana"], table_id=table.pk, code=table.code)
    services.add_bot(user=people["host"], table_id=table.pk)
    services.start_match(user=people["host"], table_id=table.pk)
    for _step in range(300):
        table = fresh(table)
        engine, _rnd, _ply = position(table)
        if engine.over:
            break
        seat = table.seats.get(index=engine.current.turn) if engine.current else None
        if seat is None or seat.is_bot:
            services.act_on_deadline(table_id=table.pk, now=table.turn_deadline)
        else:
            play_random_move(table, random.Random(3))
    with pytest.raises(ServiceError):
        services.rematch(user=people["outsider"], table_id=table.pk)
    services.rematch(user=people["ana"], table_id=table.pk)
    table = fresh(table)
    assert table.rematch["accepted"] == sorted([1, 2])  # ana, and the bot at once
    assert table.current_match.number == 1
    with pytest.raises(ServiceError):
        services.rematch(user=people["ana"], table_id=table.pk)
    services.rematch(user=people["host"], table_id=table.pk)
    table = fresh(table)
    assert table.current_match.number == 2 and table.rematch is None
    offered = events_of(table, "rematch_offered")[-1]
    assert offered["seat"] == 1 and offered["people"] == [people["host"].pk]
    assert events_of(table, "rematch_started")[-1]["match"] == 2


def test_the_host_resumes_an_adjourned_match_from_my_games(live_playing, people, client):
    from django.urls import reverse

    services.adjourn(user=people["host"], table_id=live_playing.pk)
    set_language(user=people["host"], language="en")
    client.force_login(people["host"])
    page = client.get(reverse("tables:games")).content.decode()
    assert "Resume the match" in page
    response = client.post(reverse("tables:resume", args=[live_playing.code]))
    assert response.status_code == 302
    assert fresh(live_playing).state == Table.State.PLAYING
    client.force_login(people["ana"])
    client.post(reverse("tables:resume", args=[live_playing.code]))


@pytest.mark.parametrize("language, words", [
    ("es", ["Mis partidas", "Por turnos", "1 día por jugada", "Te toca"]),
    ("pt-br", ["Minhas partidas", "Por turnos", "1 dia por jogada", "Sua vez"]),
])
def test_my_games_speaks_spanish_and_portuguese(turn_table, client, language, words):
    from django.urls import reverse

    engine, _rnd, _ply = position(turn_table)
    mover = seat_user(turn_table, engine.current.turn)
    set_language(user=mover, language=language)
    client.force_login(mover)
    page = client.get(reverse("tables:games")).content.decode()
    for word in words:
        assert word in page


def test_a_finished_turn_based_match_allows_one_more(people):
    table = services.create_table(host=people["host"], preset="block", players=2, pace="turn",
                                  move_seconds=DAY, options={"target": 1})
    services.join_table(user=people["ana"], table_id=table.pk, code=table.code)
    services.start_match(user=people["host"], table_id=table.pk)
    assert services.base.unfinished_matches(people["ana"].pk) == 1
    for _step in range(300):
        table = fresh(table)
        engine, _rnd, ply = position(table)
        if engine.over:
            break
        if engine.current is None:
            services.act_on_deadline(table_id=table.pk, now=table.turn_deadline)
        else:
            play_random_move(table, random.Random(ply))
    people["ana"].profile.refresh_from_db()
    assert people["ana"].profile.turn_based_finished == 1
    assert services.base.unfinished_matches(people["ana"].pk) == 0


def test_the_same_move_from_two_devices_is_applied_once(turn_table):
    from apps.core.errors import StaleMove
    from apps.rules.engine import legal_dict

    table = turn_table
    engine, rnd, ply = position(table)
    user = seat_user(table, engine.current.turn)
    move = legal_dict(*engine.current.legal()[0])
    sent = {"user": user, "table_id": table.pk, "round_number": rnd, "ply": ply,
            "tile": move.get("play"), "end": move.get("end"), "is_pass": bool(move.get("pass"))}
    services.play_move(**sent)
    with pytest.raises(StaleMove):
        services.play_move(**sent)  # the phone's copy, a day later
    assert Move.objects.count() == 1
    # And the timer of the turn that was played changes nothing.
    with pytest.raises(ServiceError):
        services.act_on_deadline(table_id=table.pk, round_number=rnd, ply=ply,
                                 now=table.turn_deadline)
    assert Move.objects.count() == 1
