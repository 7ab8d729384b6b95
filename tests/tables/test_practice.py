"""Practice against bots (seeds 002/003, "contra la máquina"): one call opens a started match
against bots, for a signed-in person or a guest made on the way; limits per person and per
address; practice tables and idle guests cleaned up by the beat sweep (with a moved clock)."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone, translation

from apps.rules.engine import legal_dict
from apps.tables import game, selectors, services
from apps.tables.models import Connection, Match, Move, Round, Seat, Table, TableEvent
from apps.tables.services.play import _end_practice as end_practice

from .conftest import race

User = get_user_model()
ADDRESS = "203.0.113.7"


def refused(expected: str, fn, **kwargs):
    with pytest.raises(services.ServiceError) as info:
        fn(**kwargs)
    assert info.value.code == expected, info.value.message
    assert info.value.message
    return info.value


def practice(user=None, **kwargs) -> Table:
    args = {"preset": "partners", "bot_level": "easy", "address": ADDRESS, "language": "es"}
    args.update(kwargs)
    return services.open_practice(user=user, **args)


def later(minutes: float = 0, hours: float = 0):
    return timezone.now() + timedelta(minutes=minutes, hours=hours)


class TestOpenPractice:
    def test_a_started_match_against_bots_that_is_never_listed(self, people):
        table = practice(people["host"], bot_level="expert", turn_seconds=30)
        table.refresh_from_db()
        assert table.practice and not table.public and table.allow_bots
        assert table.state == Table.State.PLAYING and table.host == people["host"]
        assert table.opened_from == ADDRESS and table.options == {"turn_seconds": 30}
        seats = list(table.seats.order_by("index"))
        assert seats[0].user == people["host"] and not seats[0].is_bot
        assert [(s.is_bot, s.bot_level) for s in seats[1:]] == [(True, "expert")] * 3
        match = table.current_match
        assert match.number == 1 and match.rounds.count() == 1
        assert game.rules_for(table).turn_seconds == 30
        # Never in the lobby, even were it public; the state shows the hand to its person only.
        Table.objects.filter(pk=table.pk).update(public=True, state=Table.State.WAITING)
        assert table.pk not in [t.pk for t in selectors.lobby_tables()]
        Table.objects.filter(pk=table.pk).update(public=False, state=Table.State.PLAYING)
        assert not selectors.counted_tables().filter(pk=table.pk).exists()
        state = selectors.table_state(table_id=table.pk, user=people["host"])
        assert state["you"]["seat"] == 0 and len(state["view"]["hand"]) == 7
        other = selectors.table_state(table_id=table.pk, user=people["ana"])
        assert other["view"]["hand"] == []

    @pytest.mark.parametrize(("preset", "players", "bots"), [
        ("draw", 2, 1), ("block", 3, 2), ("all-fives", 4, 3), ("tranca", 2, 1),
        ("partners-66", None, 3), ("pairs-series", None, 3)])
    def test_one_to_three_bots_as_the_game_has_players(self, people, preset, players, bots):
        table = practice(people["host"], preset=preset, players=players)
        assert table.seats.filter(is_bot=True).count() == bots
        assert table.seats.count() == bots + 1
        assert Table.objects.get(pk=table.pk).state == Table.State.PLAYING

    def test_bots_play_their_seats_until_the_person_is_to_play(self, people):
        table = practice(people["host"], preset="draw", players=4, bot_level="medium")
        rng = random.Random(3)
        for _ in range(200):
            fresh = Table.objects.get(pk=table.pk)
            engine = game.restore(fresh.current_match)
            rnd = engine.current
            if rnd is None:
                break
            if rnd.turn == 0:
                move = legal_dict(*rng.choice(rnd.legal()))
                services.play_move(user=people["host"], table_id=table.pk,
                                   round_number=len(engine.rounds) - 1, ply=len(rnd.history),
                                   tile=move.get("play"), end=move.get("end"),
                                   is_pass=bool(move.get("pass")))
            else:
                services.act_on_deadline(table_id=table.pk, now=later(minutes=1))
        assert Round.objects.filter(match__table=table, result__isnull=False).exists()
        assert Move.objects.filter(round__match__table=table, by=Move.By.BOT).exists()

    def test_an_anonymous_visitor_becomes_a_guest_in_their_language(self, db):
        table = practice(None, language="pt-br")
        guest = table.host
        assert guest.profile.guest and not guest.has_usable_password()
        assert guest.username.startswith("guest-")
        assert guest.profile.display_name.startswith("Convidado ")
        assert len(guest.profile.display_name) <= 12 and guest.profile.language == "pt-br"
        assert table.seats.get(index=0).user == guest

    def test_bad_options_are_refused_and_change_nothing(self, people):
        users = User.objects.count()
        with translation.override("es"):  # the site's default; not whatever a test left on
            err = refused("bad_options", practice, user=None, preset="partners", players=2)
            assert "cuatro" in str(err.message)
        refused("bad_options", practice, user=None, preset="draw", bot_level="genius")
        refused("bad_options", practice, user=people["host"], preset="nope")
        refused("bad_options", practice, user=None, preset="draw", turn_seconds=-5)
        assert not Table.objects.exists() and User.objects.count() == users

    def test_nobody_joins_or_is_invited_to_a_practice_table(self, people, client):
        table = practice(people["host"])
        services.remove_bot(user=people["host"], table_id=table.pk, seat_index=3)
        refused("practice", services.join_table, user=people["ana"], table_id=table.pk,
                code=table.code)
        refused("practice", services.invite, user=people["host"], table_id=table.pk,
                display_name="ana")
        assert table.seats.filter(user=people["ana"]).count() == 0
        # Its page has no code to share nor anyone to invite.
        client.force_login(people["host"])
        html = client.get(f"/t/{table.code}/").content.decode()
        assert 'id="join-link"' not in html and 'name="display_name"' not in html

    def test_a_banned_person_may_not_practise(self, people):
        from apps.moderation.models import Ban

        Ban.objects.create(user=people["ana"], reason="spam")
        refused("banned", practice, user=people["ana"])
        assert not Table.objects.exists()


class TestLimits:
    def test_one_open_practice_table_per_person_a_new_one_ends_the_previous(self, people):
        first = practice(people["host"])
        second = practice(people["host"], preset="draw", players=2)
        first.refresh_from_db()
        assert first.state == Table.State.CLOSED and first.closed_reason == "practice_replaced"
        assert TableEvent.objects.filter(table=first, events__0__kind="closed").exists()
        open_ = Table.objects.filter(host=people["host"], practice=True).exclude(
            state=Table.State.CLOSED)
        assert list(open_) == [second]
        # A table for friends is not a practice table: it stays.
        friends = services.create_table(host=people["host"], preset="partners")
        practice(people["host"])
        friends.refresh_from_db()
        assert friends.state == Table.State.WAITING

    def test_at_most_n_open_practice_tables_per_address(self, people, settings):
        settings.PRACTICE_TABLES_PER_ADDRESS = 2
        practice(people["host"])
        practice(people["ana"])
        refused("practice_limit", practice, user=people["bea"])
        users = User.objects.count()
        refused("practice_limit", practice, user=None)  # no guest is made either
        assert User.objects.count() == users
        # The same people may open again (theirs is replaced), and another address may open.
        practice(people["host"])
        practice(people["bea"], address="198.51.100.2")
        # A closed one no longer counts.
        mine = Table.objects.get(host=people["ana"], practice=True)
        end_practice(table_id=mine.pk, reason="practice_expired")
        practice(people["caio"])

    def test_at_most_m_guests_per_address_per_hour(self, db, settings, monkeypatch):
        from django.core.cache import cache

        cache.clear()
        settings.GUESTS_PER_ADDRESS_PER_HOUR = 3
        settings.PRACTICE_TABLES_PER_ADDRESS = 100
        for _ in range(3):
            practice(None)
        err = refused("guest_limit", practice, user=None)
        assert "hour" in err.message or "hora" in err.message
        assert User.objects.filter(profile__guest=True).count() == 3
        practice(None, address="198.51.100.2")
        # An hour later the address may start guests again.
        import time as real_time

        class Later:
            @staticmethod
            def time():
                return real_time.time() + 3601

        monkeypatch.setattr("django.core.cache.backends.locmem.time", Later)
        practice(None)
        assert User.objects.filter(profile__guest=True).count() == 5
        cache.clear()

    def test_guests_may_not_open_tables_for_friends(self, db):
        guest = practice(None).host
        refused("guest", services.create_table, host=guest, preset="partners")
        # They may practise again, and sit at somebody's public table.
        practice(guest, preset="block", players=3)


class TestCleanup:
    def test_a_practice_table_its_person_left_is_deleted_with_its_rows(self, people):
        table = practice(people["host"])
        services.connect(user=people["host"], table_id=table.pk, channel_name="tab-1")
        rng = random.Random(1)
        fresh = Table.objects.get(pk=table.pk)
        rnd = game.restore(fresh.current_match).current
        if rnd.turn == 0:
            move = legal_dict(*rng.choice(rnd.legal()))
            services.play_move(user=people["host"], table_id=table.pk, round_number=0, ply=0,
                               tile=move.get("play"), end=move.get("end"))
        friends = services.create_table(host=people["ana"], preset="partners")
        services.connect(user=people["ana"], table_id=friends.pk, channel_name="tab-2")
        left = timezone.now()
        services.disconnect(channel_name="tab-1", now=left)
        services.disconnect(channel_name="tab-2", now=left)
        # Within the 2 minutes the person may come back.
        services.sweep(now=left + timedelta(seconds=90))
        assert Table.objects.filter(pk=table.pk).exists()
        done = services.sweep(now=left + timedelta(minutes=2, seconds=1))
        assert done["practice_deleted"] == 1 and done["closed"] == 1
        assert not Table.objects.filter(pk=table.pk).exists()
        for model in (Seat, Match, TableEvent, Connection):
            assert not model.objects.filter(table_id=table.pk).exists()
        assert not Round.objects.filter(match__table_id=table.pk).exists()
        assert not Move.objects.filter(round__match__table_id=table.pk).exists()
        # A table for friends is closed and kept, as before.
        friends.refresh_from_db()
        assert friends.state == Table.State.CLOSED
        # The person keeps their account.
        assert User.objects.filter(pk=people["host"].pk).exists()

    def test_a_practice_table_whose_page_never_opened_goes_after_the_limit(self, people):
        table = practice(people["host"])
        services.sweep(now=later(minutes=1))
        assert Table.objects.filter(pk=table.pk).exists()
        services.sweep(now=later(minutes=2, hours=0) + timedelta(seconds=2))
        assert not Table.objects.filter(pk=table.pk).exists()

    def test_coming_back_in_time_keeps_the_table(self, people):
        table = practice(people["host"])
        services.connect(user=people["host"], table_id=table.pk, channel_name="a")
        services.disconnect(channel_name="a", now=timezone.now())
        services.connect(user=people["host"], table_id=table.pk, channel_name="b")
        services.sweep(now=later(minutes=5))
        assert Table.objects.get(pk=table.pk).state == Table.State.PLAYING

    def test_practice_tables_live_at_most_their_lifetime(self, people, settings):
        settings.PRACTICE_MAX_AGE_SECONDS = 6 * 3600
        table = practice(people["host"])
        services.connect(user=people["host"], table_id=table.pk, channel_name="still-here")
        services.sweep(now=later(hours=5, minutes=59))
        assert Table.objects.get(pk=table.pk).state == Table.State.PLAYING
        end = later(hours=6, minutes=1)
        services.sweep(now=end)
        table.refresh_from_db()
        # Closed, and the page still open says why...
        assert table.state == Table.State.CLOSED and table.closed_reason == "practice_expired"
        state = selectors.table_state(table_id=table.pk, user=people["host"])
        assert "6" in state["table"]["closed_reason"]
        # ...then deleted once its page is gone, or an empty-table limit later at the latest.
        services.sweep(now=end + timedelta(seconds=30))
        assert Table.objects.filter(pk=table.pk).exists()
        services.sweep(now=end + timedelta(minutes=2, seconds=1))
        assert not Table.objects.filter(pk=table.pk).exists()

    def test_a_replaced_practice_table_is_deleted_once_its_page_is_closed(self, people):
        first = practice(people["host"])
        services.connect(user=people["host"], table_id=first.pk, channel_name="old-tab")
        practice(people["host"])
        services.sweep()
        assert Table.objects.filter(pk=first.pk).exists()  # its tab shows "closed"
        services.disconnect(channel_name="old-tab")
        services.sweep()
        assert not Table.objects.filter(pk=first.pk).exists()

    def test_idle_guests_with_no_table_left_are_deleted(self, people, settings):
        settings.GUEST_IDLE_SECONDS = 24 * 3600
        settings.PRACTICE_MAX_AGE_SECONDS = 48 * 3600
        from apps.accounts.services import start_guest

        idle = start_guest(language="es")
        playing = start_guest(language="en")
        seated = start_guest(language="en")
        table = practice(playing)
        friends = services.create_table(host=people["ana"], preset="partners", public=True)
        services.join_table(user=seated, table_id=friends.pk)
        day = later(hours=24, minutes=1)
        # The practice table and the friends' table are kept open meanwhile.
        services.connect(user=playing, table_id=table.pk, channel_name="p")
        services.connect(user=people["ana"], table_id=friends.pk, channel_name="f")
        done = services.sweep(now=day)
        assert done["guests_deleted"] == 1
        assert not User.objects.filter(pk=idle.pk).exists()
        assert User.objects.filter(pk__in=[playing.pk, seated.pk]).count() == 2
        # Members are never deleted, however idle.
        User.objects.filter(pk=people["bea"].pk).update(last_login=day - timedelta(days=30))
        # The guest leaves their practice table; it goes, then so do they.
        services.disconnect(channel_name="p", now=day)
        services.sweep(now=day + timedelta(minutes=3))
        assert not Table.objects.filter(pk=table.pk).exists()
        assert not User.objects.filter(pk=playing.pk).exists()
        assert User.objects.filter(pk__in=[seated.pk, people["bea"].pk]).count() == 2

    def test_a_guest_who_opened_a_practice_table_recently_is_not_idle(self, db, settings):
        settings.GUEST_IDLE_SECONDS = 24 * 3600
        from apps.accounts.services import start_guest

        guest = start_guest(language="es")
        User.objects.filter(pk=guest.pk).update(last_login=later(hours=-23))
        guest.refresh_from_db()
        first = practice(guest)
        # They played, left, and the table went; a day after they started, not after they
        # last played, they are still there.
        services.sweep(now=later(minutes=3))
        assert not Table.objects.filter(pk=first.pk).exists()
        services.sweep(now=later(hours=2))
        assert User.objects.filter(pk=guest.pk).exists()
        services.sweep(now=later(hours=24, minutes=5))
        assert not User.objects.filter(pk=guest.pk).exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_tabs_opening_practice_at_once_leave_one_open_table(people):
    calls = [(f"tab{i}", lambda: practice(people["host"])) for i in range(4)]
    results = race(*calls)
    assert sorted(results) == sorted(f"tab{i}" for i in range(4))
    open_ = Table.objects.filter(host=people["host"], practice=True).exclude(
        state=Table.State.CLOSED)
    assert open_.count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_address_limit_holds_under_a_race(make_user, settings):
    settings.PRACTICE_TABLES_PER_ADDRESS = 3
    users = [make_user(f"racer{i}") for i in range(6)]
    results = race(*[(u.username, lambda u=u: practice(u)) for u in users])
    assert results.count("practice_limit") == 3, results
    assert Table.objects.filter(practice=True, opened_from=ADDRESS).exclude(
        state=Table.State.CLOSED).count() == 3


@pytest.mark.slow
def test_the_limits_are_settings_read_from_the_environment(settings):
    import json
    import os
    import subprocess
    import sys

    names = ("PRACTICE_TABLES_PER_ADDRESS", "PRACTICE_MAX_AGE_SECONDS",
             "GUESTS_PER_ADDRESS_PER_HOUR", "GUEST_IDLE_SECONDS")
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="config.settings", DJANGO_TESTING="1",
               PRACTICE_TABLES_PER_ADDRESS="3", PRACTICE_MAX_AGE_SECONDS="60",
               GUESTS_PER_ADDRESS_PER_HOUR="4", GUEST_IDLE_SECONDS="120")
    code = ("import json; from django.conf import settings; "
            f"print(json.dumps([getattr(settings, n) for n in {list(names)!r}]))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=60, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [3, 60, 4, 120]
    # And the defaults docs/practice-and-guests.md gives.
    defaults = {n: getattr(settings, n) for n in names}
    if not any(n in os.environ for n in names):
        assert defaults == {"PRACTICE_TABLES_PER_ADDRESS": 10,
                            "PRACTICE_MAX_AGE_SECONDS": 6 * 3600,
                            "GUESTS_PER_ADDRESS_PER_HOUR": 20,
                            "GUEST_IDLE_SECONDS": 24 * 3600}
