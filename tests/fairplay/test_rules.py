"""The fair-play arithmetic on any record (hypothesis), and its numbers as documented."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from apps.fairplay import rules

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
#: Small records (around the 5 matches a share needs) as often as large ones.
counts = st.one_of(st.integers(min_value=0, max_value=8),
                   st.integers(min_value=0, max_value=10_000))
#: Abandonments within the two days before NOW, as offsets.
offsets = st.lists(st.integers(min_value=0, max_value=48 * 3600), max_size=12)


def times(seconds: list[int]) -> list[datetime]:
    return sorted(NOW - timedelta(seconds=s) for s in seconds)


@given(counts, counts)
def test_the_share_is_a_whole_percent_rounded_down_once_there_are_enough(finished, abandoned):
    share = rules.share(finished, abandoned)
    total = finished + abandoned
    if total < rules.MATCHES_TO_JUDGE:
        assert share is None
        return
    assert 0 <= share <= 100
    assert share * total <= finished * 100 < (share + 1) * total
    assert (share == 100) == (abandoned == 0)


@given(counts, counts, st.integers(min_value=0, max_value=100))
def test_a_minimum_is_met_exactly_and_newcomers_always_meet_it(finished, abandoned, minimum):
    ok = rules.meets(finished, abandoned, minimum)
    total = finished + abandoned
    if total < rules.MATCHES_TO_JUDGE:
        assert ok
    else:
        assert ok == (finished / total * 100 >= minimum - 1e-9)
        assert not ok or rules.share(finished, abandoned) >= minimum


@given(offsets)
def test_the_wait_follows_the_tiers_and_is_never_longer_than_the_longest(seconds):
    moments = times(seconds)
    left = rules.wait_left(moments, NOW)
    assert rules.ZERO <= left <= rules.WAIT_AFTER_4
    recent = rules.recent(moments, NOW)
    if len(recent) < 2:
        assert left == rules.ZERO
    else:
        assert left == max(rules.ZERO, max(recent) + rules.wait_for(len(recent)) - NOW)


@given(offsets, st.integers(min_value=0, max_value=24 * 3600))
def test_one_more_abandonment_never_shortens_the_wait(seconds, ago):
    moments = times(seconds)
    newest = NOW - timedelta(seconds=min([ago] + seconds))
    assert rules.wait_left(moments + [newest], NOW) >= rules.wait_left(moments, NOW)


@given(offsets, st.integers(min_value=0, max_value=3 * 3600))
def test_the_wait_only_shrinks_as_time_passes(seconds, later):
    moments = times(seconds)
    then = NOW + timedelta(seconds=later)
    assert rules.wait_left(moments, then) <= rules.wait_left(moments, NOW)


def test_the_tiers():
    minute = timedelta(minutes=1)
    assert rules.wait_left([NOW - minute], NOW) == rules.ZERO
    assert rules.wait_left([NOW - 2 * minute, NOW - minute], NOW) == 4 * minute
    assert rules.wait_left([NOW - 3 * minute, NOW - 2 * minute, NOW - minute], NOW) \
        == 29 * minute
    assert rules.wait_left([NOW - k * minute for k in range(1, 9)], NOW) == 119 * minute
    # Older than the window: forgotten.
    old = NOW - rules.ABANDON_WINDOW - minute
    assert rules.wait_left([old, old, NOW - minute], NOW) == rules.ZERO


def test_the_numbers_are_the_ones_documented():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "fairplay.md").read_text()
    for words in ("fewer than 5", "24 hours", "5 minutes", "30 minutes", "2 hours"):
        assert words in doc, words
    assert (rules.MATCHES_TO_JUDGE, rules.ABANDON_WINDOW) == (5, timedelta(hours=24))
    assert [(n, w) for n, w in rules.WAITS] == [
        (4, timedelta(hours=2)), (3, timedelta(minutes=30)), (2, timedelta(minutes=5))]
