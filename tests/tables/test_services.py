"""The service layer: who may do what, moves applied once, and the record as the truth."""

from __future__ import annotations

import random

import pytest

from apps.rules import harness
from apps.tables import game, selectors, services
from apps.tables.models import Invitation, Move, Table
from apps.tables.services import ServiceError, StaleMove

from .conftest import play_random_move, position, race, seat_user


def refused(expected: str, fn, **kwargs):
    with pytest.raises(ServiceError) as info:
        fn(**kwargs)
    assert info.value.code == expected, info.value.message
    assert info.value.message
    return info.value


class TestCreateAndJoin:
    def test_host_takes_seat_zero_and_options_are_checked(self, people):
        table = services.create_table(host=people["host"], preset="pairs-series",
                                      options={"target": 200, "best_of": 3})
        assert seat_user(table, 0) == people["host"]
        assert table.seats.count() == 4 and len(table.code) == 6
        assert not set(table.code) & set("0O1IL")
        err = refused("bad_options", services.create_table, host=people["host"],
                      preset="partners", options={"target": 55})
        assert "50" in err.message
        refused("bad_options", services.create_table, host=people["host"], preset="draw",
                players=5)
        refused("not_signed_in", services.create_table, host=None, preset="partners")

    def test_invite_only_needs_the_code_or_an_invitation(self, people):
        table = services.create_table(host=people["host"], preset="partners")
        refused("invite_only", services.join_table, user=people["ana"], table_id=table.pk)
        refused("invite_only", services.join_table, user=people["ana"], table_id=table.pk,
                code="WRONG1")
        services.join_table(user=people["ana"], table_id=table.pk, code=table.code.lower())
        assert seat_user(table, 1) == people["ana"]
        Invitation.objects.create(table=table, invitee=people["bea"], inviter=people["host"])
        services.join_table(user=people["bea"], table_id=table.pk)
        assert seat_user(table, 2) == people["bea"]
        assert Invitation.objects.get(invitee=people["bea"]).answered_at is not None

    def test_find_by_code_reads_aloud_and_refuses_wrong_codes(self, people):
        table = services.create_table(host=people["host"], preset="partners")
        spaced = " ".join(table.code.lower())
        assert services.find_by_code(spaced) == table
        refused("bad_code", services.find_by_code, code="ZZZZZZ")

    def test_seats_fill_in_arrival_order_and_leaving_frees_one(self, full_table, people):
        assert [seat_user(full_table, i).username for i in range(4)] == [
            "host", "ana", "bea", "caio"]
        refused("full", services.join_table, user=people["outsider"], table_id=full_table.pk)
        refused("already_seated", services.join_table, user=people["ana"],
                table_id=full_table.pk)
        services.leave_table(user=people["bea"], table_id=full_table.pk)
        services.join_table(user=people["outsider"], table_id=full_table.pk)
        assert seat_user(full_table, 2) == people["outsider"]
        refused("host_stays", services.leave_table, user=people["host"],
                table_id=full_table.pk)
        refused("not_seated", services.leave_table, user=people["bea"], table_id=full_table.pk)

    def test_bots_fill_all_but_one_seat_only_where_allowed(self, people):
        table = services.create_table(host=people["host"], preset="partners")
        refused("no_bots", services.add_bot, user=people["host"], table_id=table.pk)
        table = services.create_table(host=people["host"], preset="partners", allow_bots=True)
        refused("not_host", services.add_bot, user=people["ana"], table_id=table.pk)
        for _ in range(3):
            services.add_bot(user=people["host"], table_id=table.pk)
        assert table.seats.filter(is_bot=True).count() == 3
        services.remove_bot(user=people["host"], table_id=table.pk, seat_index=2)
        services.join_table(user=people["ana"], table_id=table.pk, code=table.code)
        assert seat_user(table, 2) == people["ana"]


# Every action, by every kind of caller.
ACTIONS = ["start", "pause", "resume", "next_round", "new_match", "play"]
CALLERS = ["host", "seated", "other", "anonymous"]
ALLOWED = {("start", "host"), ("pause", "host"), ("resume", "host"), ("play", "seated"),
           ("next_round", "host"), ("new_match", "host")}


@pytest.fixture
def one_round_table(people):
    """Four people seated as at full_table, at a game whose match is won in one round (block
    to 1 point): who may start a new match is the question, not a hundred-point match."""
    table = services.create_table(host=people["host"], preset="block", players=4, public=True,
                                  options={"target": 1})
    for name in ("ana", "bea", "caio"):
        services.join_table(user=people[name], table_id=table.pk)
    return table


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("action", ACTIONS)
def test_permission_matrix(request, people, action, caller):
    from django.contrib.auth.models import AnonymousUser

    table = request.getfixturevalue("one_round_table" if action == "new_match" else "full_table")
    if action != "start":
        services.start_match(user=people["host"], table_id=table.pk)
    engine, rnd_no, ply = position(table) if action != "start" else (None, 0, 0)
    if action == "resume":
        services.pause(user=people["host"], table_id=table.pk)
    if action in ("next_round", "new_match"):
        # Finish the round (and, for a new match, the whole match) first.
        rng = random.Random(1)
        while True:
            engine, rnd_no, ply = position(table)
            if engine.current is not None:
                play_random_move(table, rng)
            elif engine.over or action == "next_round":
                break
            else:
                services.next_round(user=people["host"], table_id=table.pk)
    turn_seat = engine.current.turn if action == "play" else 1
    user = {
        "host": people["host"],
        "seated": seat_user(table, turn_seat) if action == "play" else people["ana"],
        "other": people["outsider"],
        "anonymous": AnonymousUser(),
    }[caller]
    calls = {
        "start": lambda: services.start_match(user=user, table_id=table.pk),
        "pause": lambda: services.pause(user=user, table_id=table.pk),
        "resume": lambda: services.resume(user=user, table_id=table.pk),
        "next_round": lambda: services.next_round(user=user, table_id=table.pk),
        "new_match": lambda: services.new_match(user=user, table_id=table.pk),
        "play": lambda: _play_first_legal(table, user, rnd_no, ply),
    }
    version = Table.objects.get(pk=table.pk).version
    allowed = (action, caller) in ALLOWED or (
        action == "play" and caller == "host" and turn_seat == 0)
    if allowed:
        outcome = calls[action]()
        assert outcome.version == version + 1
    else:
        with pytest.raises(ServiceError):
            calls[action]()
        assert Table.objects.get(pk=table.pk).version == version


def _play_first_legal(table, user, rnd_no, ply, engine=None):
    """Send the first legal move of ``engine``'s position (by default the table's now)."""
    if engine is None:
        engine, _, _ = position(table)
    from apps.rules.engine import legal_dict

    move = legal_dict(*engine.current.legal()[0])
    return services.play_move(user=user, table_id=table.pk, round_number=rnd_no, ply=ply,
                              tile=move.get("play"), end=move.get("end"),
                              is_pass=bool(move.get("pass")))


class TestMoves:
    def test_a_move_sent_twice_is_applied_once(self, full_table, people):
        services.start_match(user=people["host"], table_id=full_table.pk)
        engine, rnd_no, ply = position(full_table)
        user = seat_user(full_table, engine.current.turn)
        _play_first_legal(full_table, user, rnd_no, ply)
        with pytest.raises(StaleMove) as info:
            _play_first_legal(full_table, user, rnd_no, ply, engine)
        assert info.value.code == "stale"
        assert Move.objects.count() == 1

    def test_wrong_seat_illegal_tile_and_paused_table_change_nothing(self, full_table, people):
        services.start_match(user=people["host"], table_id=full_table.pk)
        engine, rnd_no, ply = position(full_table)
        turn = engine.current.turn
        other = seat_user(full_table, (turn + 1) % 4)
        refused("not_your_turn", services.play_move, user=other, table_id=full_table.pk,
                round_number=rnd_no, ply=ply, tile="6-6")
        mover = seat_user(full_table, turn)
        from apps.rules.tiles import NAMES

        not_held = next(t for t in NAMES if t not in _hand_names(engine, turn))
        err = refused("illegal_move", services.play_move, user=mover, table_id=full_table.pk,
                      round_number=rnd_no, ply=ply, tile=not_held)
        assert not_held in err.message
        refused("must_play", services.play_move, user=mover, table_id=full_table.pk,
                round_number=rnd_no, ply=ply, is_pass=True)
        refused("bad_tile", services.play_move, user=mover, table_id=full_table.pk,
                round_number=rnd_no, ply=ply, tile="9-9")
        services.pause(user=people["host"], table_id=full_table.pk)
        refused("paused", _play_first_legal, table=full_table, user=mover, rnd_no=rnd_no,
                ply=ply)
        assert Move.objects.count() == 0

    def test_a_whole_match_through_the_services_replays_to_the_same_scores(self, full_table,
                                                                        people):
        rng = random.Random(7)
        services.start_match(user=people["host"], table_id=full_table.pk)
        while True:
            engine, _, _ = position(full_table)
            if engine.current is not None:
                play_random_move(full_table, rng)
            elif engine.over:
                break
            else:
                services.next_round(user=people["host"], table_id=full_table.pk)
        match = Table.objects.get(pk=full_table.pk).current_match
        out = harness.replay(game.record_of(match))
        assert out["ok"] and out["match"]["over"]
        assert out["scores"] == match.scores and max(match.scores) >= 100
        assert match.finished_at is not None and match.winner is not None
        refused("match_over", services.next_round, user=people["host"], table_id=full_table.pk)
        services.new_match(user=people["host"], table_id=full_table.pk)
        engine, rnd_no, ply = position(full_table)
        assert (engine.scores(), rnd_no, ply) == ([0, 0], 0, 0)
        assert Table.objects.get(pk=full_table.pk).current_match.number == 2

    def test_automatic_passes_in_block(self, people):
        table = services.create_table(host=people["host"], preset="block", players=2,
                                      public=True)
        services.join_table(user=people["ana"], table_id=table.pk)
        services.start_match(user=people["host"], table_id=table.pk)
        rng = random.Random(3)
        while position(table)[0].current is not None:
            play_random_move(table, rng)
        assert Move.objects.filter(by=Move.By.TABLE, is_pass=True).exists() or \
            not Move.objects.filter(is_pass=True).exists()
        assert not Move.objects.filter(by=Move.By.PLAYER, is_pass=True).exists()


def _hand_names(engine, seat):
    from apps.rules.tiles import NAMES

    return [NAMES[t] for t in engine.current.hands[seat]]


def test_events_are_sent_only_after_the_commit(full_table, people,
                                               django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.start_match(user=people["host"], table_id=full_table.pk)
    assert len(callbacks) == 1


def test_every_view_keeps_other_hands_hidden(full_table, people):
    services.start_match(user=people["host"], table_id=full_table.pk)
    engine, _, _ = position(full_table)
    for seat in range(4):
        state = selectors.table_state(table_id=full_table.pk, user=seat_user(full_table, seat))
        text = str(state)
        for other in range(4):
            if other == seat:
                continue
            for name in _hand_names(engine, other):
                assert f"'{name}'" not in text
    watcher = selectors.table_state(table_id=full_table.pk, user=people["outsider"])
    assert watcher["view"]["hand"] == [] and watcher["view"]["legal"] == []
    for seat in range(4):
        for name in _hand_names(engine, seat):
            assert f"'{name}'" not in str(watcher)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_moves_from_two_threads_apply_once(people):
    table = services.create_table(host=people["host"], preset="partners", public=True)
    for name in ("ana", "bea", "caio"):
        services.join_table(user=people[name], table_id=table.pk)
    services.start_match(user=people["host"], table_id=table.pk)
    engine, rnd_no, ply = position(table)
    user = seat_user(table, engine.current.turn)
    from apps.rules.engine import legal_dict

    moves = [legal_dict(*m) for m in engine.current.legal()]

    def send(move):
        return lambda: services.play_move(user=user, table_id=table.pk, round_number=rnd_no,
                                          ply=ply, tile=move.get("play"), end=move.get("end"))

    results = race(("applied", send(moves[0])), ("applied", send(moves[1 % len(moves)])))
    assert sorted(results) == ["applied", "stale"]
    assert Move.objects.filter(round__match__table=table).count() == 1


def test_apps_that_follow_the_tables_hear_each_version_once_committed(
        people, monkeypatch, caplog, django_capture_on_commit_callbacks):
    """``hooks.on_committed``: after the commit, never inside a transaction that rolls back; a
    hook that fails is logged and the next one still hears."""
    from apps.tables import hooks

    heard, after = [], []

    def failing(**kwargs):
        raise RuntimeError("a bug in a follower")

    monkeypatch.setattr(hooks, "_committed", {})
    hooks.on_committed("failing", failing)
    hooks.on_committed("listener", lambda **kw: heard.append(kw))
    with django_capture_on_commit_callbacks(execute=True):
        table = services.create_table(host=people["host"], preset="partners")
        services.join_table(user=people["ana"], table_id=table.pk, code=table.code)
        after.append(len(heard))
    assert after == [0]  # nothing before the commit
    assert [e["kind"] for h in heard for e in h["events"]] == ["seat"]
    assert heard[0]["table_id"] == table.pk and heard[0]["version"] == 1
    assert "the failing hook failed" in caplog.text


def test_other_apps_may_refuse_a_seat_a_quick_play_and_hide_invitations(people, monkeypatch):
    """The hooks that the apps above use to say no (a host's condition on who sits, a wait
    before play now) and to hide people (blocked): each refusal changes nothing."""
    from apps.tables import hooks, selectors
    from apps.tables.models import Invitation, Seat

    monkeypatch.setattr(hooks, "_join_refusals", {})
    monkeypatch.setattr(hooks, "_quick_play_refusals", {})
    monkeypatch.setattr(hooks, "_hidden", {})
    hooks.on_join_refusal("test", lambda *, table, user: "Not you." if user == people["bea"]
                          else None)
    hooks.on_quick_play_refusal("test", lambda user: "Wait a minute.")
    hooks.on_hidden("test", lambda user_id: {people["host"].pk}
                    if user_id == people["ana"].pk else set())
    table = services.create_table(host=people["host"], preset="partners", public=True)
    version = Table.objects.get(pk=table.pk).version
    with pytest.raises(services.ServiceError, match="Not you."):
        services.join_table(user=people["bea"], table_id=table.pk)
    assert Table.objects.get(pk=table.pk).version == version
    assert not Seat.objects.filter(table=table, user=people["bea"]).exists()
    services.join_table(user=people["caio"], table_id=table.pk)  # others sit as before
    with pytest.raises(services.ServiceError, match="Wait a minute.") as refused:
        services.quick_play(user=people["caio"], preset="draw", players=2)
    assert refused.value.code == "wait"
    assert not Table.objects.filter(quick=True).exists()
    services.invite(user=people["host"], table_id=table.pk, display_name="ana")
    services.invite(user=people["host"], table_id=table.pk, display_name="bea")
    assert Invitation.objects.filter(table=table).count() == 2  # kept, not shown
    assert selectors.invitations_for(people["ana"]) == []
    assert [i.invitee for i in selectors.invitations_for(people["bea"])] == [people["bea"]]
