"""How one send ended (``delivery`` writes it on the delivery rows)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Outcome:
    """How a send ended: ``sent``, ``skipped`` (a reason), ``retry`` (transient) or
    ``failed`` (permanent)."""

    state: str
    reason: str = ""
    batch: str = ""
    #: Forget this push subscription (its service answered 404/410).
    gone: bool = False
    #: Remember this address as refused.
    refused: str = ""
    retry_after: float | None = None
    extra: dict = field(default_factory=dict)
