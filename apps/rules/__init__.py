"""The rules engine: pure Python, no Django, no I/O, deterministic given its random source."""

from .engine import OPEN, PASS_MOVE, Match, Round, RoundResult, apply, deal, legal_dict, move_dict
from .errors import RuleError
from .presets import PRESETS, Rules, make_rules

__all__ = ["OPEN", "PASS_MOVE", "PRESETS", "Match", "Round", "RoundResult", "RuleError", "Rules",
           "apply", "deal", "legal_dict", "make_rules", "move_dict"]
