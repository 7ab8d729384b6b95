"""The profile's rating chart: a rating's history (``RatingChange`` rows) as the numbers of an
inline SVG the template draws. Server-side, no script: the site's CSP allows only its own
scripts and no inline style, and an SVG's presentation attributes and classes need neither."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.formats import date_format

from .models import Rating, RatingChange

#: The chart's last matches, at most.
CHART_MATCHES = 60
WIDTH, HEIGHT = 560, 180
LEFT, RIGHT, TOP, BOTTOM = 44, 12, 12, 26


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    value: int
    when: str


@dataclass(frozen=True)
class Chart:
    kind: str
    label: str
    width: int
    height: int
    points: str          # the polyline's "x,y x,y ..."
    dots: list[Dot]      # one per match (the first is the rating before the first match)
    ticks: list[tuple[float, float, int]]  # (y, the label's baseline, value) on the left axis
    left: int
    right: int
    bottom: float
    label_x: int         # the left axis' labels end here
    date_y: int          # the dates' baseline, under the chart
    first_when: str
    last_when: str
    first: int
    last: int
    lowest: int
    highest: int
    matches: int


def _ticks(low: int, high: int) -> list[int]:
    if high == low:
        return [low]
    mid = (low + high) // 2
    return sorted({low, mid, high})


def rating_charts(user, *, matches: int = CHART_MATCHES) -> list[Chart]:
    """One chart per kind of rating ``user`` has changed, oldest change on the left."""
    labels = dict(Rating.Kind.choices)
    charts = []
    for kind in (Rating.Kind.PAIRS, Rating.Kind.SOLO):
        changes = list(RatingChange.objects.filter(user=user, kind=kind)
                       .order_by("-created_at", "-pk")[:matches])[::-1]
        if not changes:
            continue
        values = [changes[0].before] + [c.after for c in changes]
        whens = [changes[0].created_at] + [c.created_at for c in changes]
        low, high = min(values), max(values)
        # A flat history still gets a band to sit in.
        span = max(high - low, 10)
        pad = span * 0.1
        y_low, y_high = low - pad, low + span + pad
        inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
        n = len(values)

        def x(i: int, n: int = n, inner_w: int = inner_w) -> float:
            return round(LEFT + (i * inner_w / (n - 1) if n > 1 else inner_w / 2), 1)

        def y(v: float, y_low: float = y_low, y_high: float = y_high,
              inner_h: int = inner_h) -> float:
            return round(TOP + (y_high - v) * inner_h / (y_high - y_low), 1)

        dots = [Dot(x(i), y(v), v, date_format(whens[i], "SHORT_DATE_FORMAT"))
                for i, v in enumerate(values)]
        charts.append(Chart(
            kind=kind, label=labels[kind], width=WIDTH, height=HEIGHT,
            points=" ".join(f"{d.x},{d.y}" for d in dots), dots=dots,
            ticks=[(y(v), y(v) + 4, v) for v in _ticks(low, high)], left=LEFT,
            right=WIDTH - RIGHT, bottom=HEIGHT - BOTTOM, label_x=LEFT - 6, date_y=HEIGHT - 8,
            first_when=dots[0].when, last_when=dots[-1].when, first=values[0],
            last=values[-1], lowest=low, highest=high, matches=len(changes)))
    return charts
