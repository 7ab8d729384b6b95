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
