"""The snapshot store: a process builds the next version on the one it stored last without
reading it back, and never hands out another version or another table's."""

from __future__ import annotations

import pytest

from apps.core import snapshots


@pytest.fixture(autouse=True)
def clean():
    snapshots.forget_all()
    yield
    snapshots.forget_all()


def snap(version: int, code: str = "ABC123") -> dict:
    return {"version": version, "table": {"code": code}, "log": []}


def test_the_last_stored_version_comes_from_this_process(monkeypatch):
    stored = snap(7)
    assert snapshots.store(41, stored)
    reads = []
    monkeypatch.setattr(snapshots, "load", lambda *a: reads.append(a) or None)
    assert snapshots.load_version(41, "ABC123", 7) is stored
    assert reads == []


def test_any_other_version_or_code_is_read_from_redis():
    snapshots.store(41, snap(7))
    newer = snap(8)
    snapshots.client().hset(snapshots.key(41, "ABC123"), mapping={
        "v": 8, "d": snapshots.encode(newer)})  # another process stored version 8
    assert snapshots.load_version(41, "ABC123", 8) == newer
    assert snapshots.load_version(41, "OTHER1", 7) is None  # a table that reused the id


def test_a_version_stored_here_is_handed_out_for_that_version_or_an_older_ask():
    snapshots.store(41, snap(7))
    assert snapshots.remembered(41, "ABC123", 7)["version"] == 7
    assert snapshots.remembered(41, "ABC123", 5)["version"] == 7
    assert snapshots.remembered(41, "ABC123", 8) is None  # newer: only Redis can say
    assert snapshots.remembered(41, "OTHER1", 7) is None
    assert snapshots.remembered(42, "ABC123", 0) is None


async def test_a_doorbell_for_a_move_applied_here_reads_nothing_from_redis(monkeypatch):
    """The move's doorbell can reach this process's sockets before the move's own answer
    hands the hub its snapshot: the hub takes the one the database thread stored."""
    from apps.realtime.hub import Hub

    stored = snap(9)
    snapshots.store(41, stored)
    hub = Hub()

    def no_reads():
        raise AssertionError("read from Redis")

    monkeypatch.setattr(hub, "_client", no_reads)
    assert await hub.snapshot(41, "ABC123", at_least=9) is stored
    # A newer version than this process stored is read (and built if Redis lost it).
    reads = []

    async def fetch(table_id, code, at_least):
        reads.append(at_least)
        return snap(10), False

    monkeypatch.setattr(hub, "_fetch", fetch)
    assert (await hub.snapshot(41, "ABC123", at_least=10))["version"] == 10
    assert reads == [10]
