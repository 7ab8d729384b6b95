"""The presets of ``shared/specs/rules.md`` and the options a host may change.

A :class:`Rules` is the frozen, validated answer to "which game are we playing": everything the
engine needs is a plain attribute, so the hot paths never look anything up by preset name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .errors import RuleError

PRESETS = ("partners", "partners-66", "draw", "block", "all-fives", "tranca", "pairs-series")
TIE_RULES = ("closer_loses", "opener_loses", "replay")
OPTION_KEYS = ("preset", "target", "hand_size", "best_of", "tie", "turn_seconds")
MAX_TURN_SECONDS = 3600


@dataclass(frozen=True, slots=True)
class Rules:
    preset: str
    players: int
    target: int
    hand_size: int
    turn_seconds: int | float | None
    best_of: int | None
    tie: str | None
    #: Teams 0 (seats 0, 2) and 1 (seats 1, 3) instead of every seat for itself.
    partners: bool
    #: A stuck player draws from the boneyard until a tile fits.
    draws: bool
    #: all-fives: the first double is a spinner and open ends multiple of 5 score.
    fives: bool
    #: "holder_66" | "random" | "heaviest"
    first_opener: str
    #: "rotate" | "winner" | "heaviest"
    later_opener: str
    #: partners-66: the first round of a match opens with 6-6 itself.
    forced_double_six: bool
    #: "opponents" | "all" | "opponents_rounded"
    domino_points: str
    #: "opponents" | "opponents_minus_own" | "all" | "opponents_rounded"
    blocked_points: str
    #: "closer_wins" | "closer_loses" | "opener_loses" | "replay" | "nobody"
    blocked_tie: str

    @property
    def sides(self) -> int:
        return 2 if self.partners else self.players

    def side_of(self, seat: int) -> int:
        return seat % 2 if self.partners else seat

    @property
    def games_to_win(self) -> int:
        return (self.best_of or 1) // 2 + 1

    def options(self) -> dict:
        """Every option in force, defaults filled in, as a record's ``rules`` holds them."""
        out: dict = {
            "preset": self.preset,
            "target": self.target,
            "hand_size": self.hand_size,
            "turn_seconds": self.turn_seconds,
        }
        if self.preset == "pairs-series":
            out["best_of"] = self.best_of
            out["tie"] = self.tie
        return out


def _refuse(message: str, key: str, **params: object) -> RuleError:
    return RuleError("bad_record", message, key=key, **params)


def _players_for(preset: str, players: object) -> int:
    if preset in ("partners", "partners-66", "pairs-series"):
        if players not in (None, 4):
            raise _refuse(f"{preset} is played by exactly 4 players, not {players}",
                          "players_exactly_four", preset=preset, players=players)
        return 4
    if players is None:
        raise _refuse(f"{preset} is played by 2 to 4 players: say how many", "players_required",
                      preset=preset)
    if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= 4:
        raise _refuse(f"{preset} is played by 2 to 4 players, not {players!r}",
                      "players_range", preset=preset, players=players)
    return players


def _default_target(preset: str, players: int) -> int:
    if preset in ("draw", "block"):
        return 100 if players == 2 else 61
    return {"partners": 100, "partners-66": 50, "all-fives": 150, "tranca": 100,
            "pairs-series": 300}[preset]


def _check_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _refuse(f"{name} must be a whole number, not {value!r}", "not_a_number", option=name)
    return value


def _check_target(preset: str, target: object) -> int:
    target = _check_int("target", target)
    if preset == "tranca":
        if target not in (50, 100, 150):
            raise _refuse("the target of tranca is 50, 100 or 150 points",
                          "target_choices", choices=[50, 100, 150])
    elif preset in ("partners", "partners-66", "pairs-series"):
        if not (50 <= target <= 500 and target % 50 == 0):
            raise _refuse("the target must be between 50 and 500 points, in steps of 50",
                          "target_range", low=50, high=500, step=50)
    elif not 1 <= target <= 1000:
        raise _refuse("the target must be between 1 and 1000 points", "target_range",
                      low=1, high=1000, step=1)
    return target


def _hand_size(preset: str, players: int, asked: object) -> int:
    if preset == "tranca":
        size = 7 if asked is None else _check_int("hand_size", asked)
        if size not in (5, 7):
            raise _refuse("tranca deals 5 or 7 tiles to each player", "hand_size_choices",
                          choices=[5, 7])
        return size
    if preset in ("partners", "partners-66", "pairs-series"):
        fixed = 7
    elif preset == "draw":
        fixed = 6 if players == 4 else 7
    else:  # block, all-fives
        fixed = 7 if players == 2 else 5
    # A record exported from a view names the hand size of every preset; the fixed value is
    # harmless, any other is an option this preset does not have.
    if asked is not None and asked != fixed:
        raise _refuse(f"{preset} with {players} players deals {fixed} tiles each; "
                      "the hand size is not an option here", "hand_size_fixed",
                      preset=preset, players=players, size=fixed)
    return fixed


def make_rules(options: Mapping, players: object = None) -> Rules:
    """Validate a host's options (a record's ``rules``) and return the rules in force."""
    if not isinstance(options, Mapping):
        raise _refuse("rules must be an object naming a preset", "rules_not_object")
    unknown = sorted(set(options) - set(OPTION_KEYS))
    if unknown:
        raise _refuse(f"unknown option {unknown[0]!r}", "unknown_option", option=unknown[0])
    preset = options.get("preset")
    if preset not in PRESETS:
        raise _refuse(f"unknown preset {preset!r}; the presets are {', '.join(PRESETS)}",
                      "unknown_preset", preset=preset)
    n = _players_for(preset, players)

    target = options.get("target")
    target = _default_target(preset, n) if target is None else _check_target(preset, target)
    hand_size = _hand_size(preset, n, options.get("hand_size"))
    if n * hand_size > 28:
        raise _refuse(f"{n} hands of {hand_size} need more than 28 tiles", "too_many_tiles")

    turn_seconds = options.get("turn_seconds", 45 if preset == "partners" else None)
    if turn_seconds is not None:
        if isinstance(turn_seconds, bool) or not isinstance(turn_seconds, (int, float)) \
                or not 1 <= turn_seconds <= MAX_TURN_SECONDS:
            raise _refuse(f"the turn time is a number of seconds from 1 to {MAX_TURN_SECONDS}, "
                          "or none", "turn_seconds_range", high=MAX_TURN_SECONDS)

    best_of = options.get("best_of")
    tie = options.get("tie")
    if preset == "pairs-series":
        best_of = 1 if best_of is None else _check_int("best_of", best_of)
        if best_of not in (1, 3, 5):
            raise _refuse("a series is best of 1, 3 or 5 games", "best_of_choices")
        tie = "closer_loses" if tie is None else tie
        if tie not in TIE_RULES:
            raise _refuse(f"the tie rule is one of {', '.join(TIE_RULES)}", "tie_choices")
    else:
        for name, value in (("best_of", best_of), ("tie", tie)):
            if value is not None:
                raise _refuse(f"{preset} has no option {name!r}", "option_not_in_preset",
                              preset=preset, option=name)

    all_dealt = n * hand_size == 28
    common = dict(preset=preset, players=n, target=target, hand_size=hand_size,
                  turn_seconds=turn_seconds, best_of=best_of, tie=tie)
    if preset in ("partners", "partners-66"):
        return Rules(**common, partners=True, draws=False, fives=False,
                     first_opener="holder_66", later_opener="rotate",
                     forced_double_six=preset == "partners-66",
                     domino_points="opponents", blocked_points="opponents",
                     blocked_tie="closer_wins" if preset == "partners" else "closer_loses")
    if preset == "pairs-series":
        return Rules(**common, partners=True, draws=False, fives=False,
                     first_opener="random", later_opener="rotate", forced_double_six=False,
                     domino_points="all", blocked_points="all", blocked_tie=tie)
    if preset in ("draw", "block"):
        return Rules(**common, partners=False, draws=preset == "draw", fives=False,
                     first_opener="random", later_opener="winner", forced_double_six=False,
                     domino_points="opponents", blocked_points="opponents_minus_own",
                     blocked_tie="nobody")
    if preset == "all-fives":
        return Rules(**common, partners=False, draws=True, fives=True,
                     first_opener="random", later_opener="winner", forced_double_six=False,
                     domino_points="opponents_rounded", blocked_points="opponents_rounded",
                     blocked_tie="nobody")
    # tranca: four players are always partners; draws while any tile is left.
    return Rules(**common, partners=n == 4, draws=not all_dealt, fives=False,
                 first_opener="heaviest", later_opener="heaviest", forced_double_six=False,
                 domino_points="opponents", blocked_points="all", blocked_tie="nobody")
