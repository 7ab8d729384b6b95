"""The one exception the engine raises: a refusal with a stable code and a plain message."""

from __future__ import annotations


class RuleError(ValueError):
    """A refused record, option or move.

    ``code`` is one of the harness codes (``bad_record``, ``not_your_turn``, ``illegal_move``,
    ``end_required``, ``must_play``, ``must_open_with``, ``round_over``) or ``bad_options`` for a
    host's option the preset cannot take. ``message`` is English for the harness; ``key`` and
    ``params`` let the site say the same thing in the player's language.
    """

    def __init__(self, code: str, message: str, *, key: str | None = None, **params: object):
        super().__init__(message)
        self.code = code
        self.message = message
        self.key = key or code
        self.params = params
        self.round: int | None = None
        self.move: int | None = None

    def as_dict(self) -> dict:
        return {"code": self.code, "round": self.round, "move": self.move, "message": self.message}
