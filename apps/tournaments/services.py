"""Tournaments before they are played: creating, registering, withdrawing, cancelling, and the
start (registration closes, partners are found, seeds given). The rounds themselves are in
:mod:`.running`. docs/tournaments.md says what each rule is for.

Every function checks first, then changes its rows under the tournament's row lock, in one
transaction with the club's ledger rows (entries and refunds go through
``apps.club.purses``), and rings the tournament page's socket after the commit
(:func:`.notify.changed`). A refusal raises ``ServiceError`` and changes nothing.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts.selectors import is_guest, user_by_display_name
from apps.club import numbers, purses
from apps.club.models import Rating, Wallet
from apps.club.selectors import level_for
from apps.core import limits
from apps.core.beat import act_on_each
from apps.core.errors import ServiceError
from apps.fairplay import selectors as fairplay
from apps.friends.selectors import blocked_either_way, blocked_ids
from apps.rules.errors import RuleError
from apps.rules.presets import PRESETS, make_rules
from apps.tables import hooks as table_hooks
from apps.tables import services as tables
from apps.tables.messages import rule_message
from apps.tables.names import normalize_table_name, table_name_problem
from apps.tables.pace import move_seconds_choices
from apps.tables.state import display_name

from . import events, notify, pairing, running
from .models import Entrant, PartnerInvitation, Team, Tournament

#: The four-player games played by pairs, and the games one-on-one may use.
PAIR_PRESETS = ("partners", "partners-66", "pairs-series", "tranca")
SOLO_PRESETS = ("draw", "block", "all-fives", "tranca")
MAX_SWISS_ROUNDS = 9
MAX_TEAMS = 64
MAX_ENTRY = 10_000
MAX_PRIZE_PLACES = 8
BEST_OF = (1, 3, 5)
#: Registrations (inviting a partner included) a person may make in a window, counted in the
#: shared cache: a registration taken back leaves no row to count, and each change rings every
#: open page of the tournament. Withdrawing is never limited: a person can always get out.
REGISTRATIONS_LIMIT = 10
REGISTRATIONS_WINDOW = 600  # seconds


# -- who may ------------------------------------------------------------------------------------

def _require_account(user) -> None:
    if user is None or not user.is_authenticated:
        raise ServiceError(_("Sign in first."), code="not_signed_in")
    if not user.is_active:
        raise ServiceError(_("Your account cannot play now."), code="inactive")
    if is_guest(user):
        raise ServiceError(_("Sign up to play in tournaments."), code="guest")


def is_staff_with(user, right: str) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active
                and user.is_staff and user.has_perm(f"tournaments.{right}"))


def member_level() -> int | None:
    """The club level from which members may create tournaments (``TOURNAMENT_MEMBER_LEVEL``);
    None: staff only, the default."""
    level = getattr(settings, "TOURNAMENT_MEMBER_LEVEL", None)
    return int(level) if level else None


def may_create(user) -> bool:
    if is_staff_with(user, "create_tournament"):
        return True
    level = member_level()
    if level is None or user is None or not user.is_authenticated or is_guest(user):
        return False
    xp = Wallet.objects.filter(pk=user.pk).values_list("xp", flat=True).first() or 0
    return level_for(xp) >= level


def _require_may_create(user) -> None:
    _require_account(user)
    if not may_create(user):
        level = member_level()
        if level is None:
            raise ServiceError(_("Only staff can create tournaments."), code="forbidden")
        raise ServiceError(_("Members can create tournaments from level %(level)d.")
                           % {"level": level}, code="forbidden")


def _registrations_key(user) -> str:
    return f"tournaments:registrations:{user.pk}"


def _require_calm(user) -> None:
    limits.require_under(_registrations_key(user), limit=REGISTRATIONS_LIMIT, message=_(
        "You can register %(limit)d times in %(minutes)d minutes: wait a few minutes before "
        "registering again.") % {"limit": REGISTRATIONS_LIMIT,
                                 "minutes": REGISTRATIONS_WINDOW // 60})


def _check_person(user) -> None:
    """What every registrant must pass: an account, no ban, and no wait after matches left
    before they ended (``apps.fairplay``)."""
    _require_account(user)
    tables.require_not_banned(user)
    waiting = fairplay.tournament_refusal(user)
    if waiting is not None:
        raise ServiceError(waiting, code="wait")


# -- creating -----------------------------------------------------------------------------------

def create_tournament(*, user, name: str, preset: str, players: int, format: str,
                      starts_at: datetime, rounds: int = 3, best_of: int = 1,
                      turn_seconds: int | None = 45, target: int | None = None,
                      entry: int = 0, prize_split: list[int] | None = None,
                      prize_added: int = 0, max_teams: int = 16,
                      move_seconds: int | None = None,
                      now: datetime | None = None) -> Tournament:
    """Staff (or, when the operator allows it, members from a level) create a tournament,
    with its purse in the club. Every option is checked here, so beat never meets a
    tournament its tables would refuse."""
    now = now or timezone.now()
    _require_may_create(user)
    tables.require_not_banned(user)
    if prize_added and not is_staff_with(user, "create_tournament"):
        raise ServiceError(_("Only staff can add the club's coins to the prizes."),
                           code="forbidden")
    name = normalize_table_name(name)
    if not name:
        raise ServiceError(_("Give the tournament a name."), code="bad_name")
    problem = table_name_problem(name)
    if problem is not None:
        raise ServiceError(problem, code="bad_name")
    if move_seconds is not None:
        # Turn-based (docs/turn-based.md): its tables have the time per move instead.
        if move_seconds not in move_seconds_choices():
            raise ServiceError(_("Choose one of the times per move offered."),
                               code="bad_options")
        turn_seconds = None
    _check_game(preset, players, turn_seconds, target)
    if format not in Tournament.Format.values:
        raise ServiceError(_("Choose Swiss or knockout."), code="bad_format")
    if format == Tournament.Format.SWISS:
        if not 1 <= rounds <= MAX_SWISS_ROUNDS:
            raise ServiceError(_("A Swiss tournament has from 1 to %(n)d rounds.")
                               % {"n": MAX_SWISS_ROUNDS}, code="bad_rounds")
        best_of = 1
    else:
        if best_of not in BEST_OF:
            raise ServiceError(_("A knockout tie is best of 1, 3 or 5 matches."),
                               code="bad_best_of")
        rounds = 0
    if starts_at <= now:
        raise ServiceError(_("Pick a start time in the future."), code="bad_start")
    if not 0 <= entry <= MAX_ENTRY:
        raise ServiceError(_("The entry is from 0 to %(n)d coins.") % {"n": MAX_ENTRY},
                           code="bad_entry")
    if not 0 <= prize_added <= MAX_ENTRY * 10:
        raise ServiceError(_("The club adds at most %(n)d coins.") % {"n": MAX_ENTRY * 10},
                           code="bad_prizes")
    split = _check_split(prize_split if prize_split is not None else [100])
    if not 2 <= max_teams <= MAX_TEAMS:
        raise ServiceError(_("A tournament takes from 2 to %(n)d teams.") % {"n": MAX_TEAMS},
                           code="bad_size")
    with transaction.atomic():
        tournament = Tournament.objects.create(
            name=name, preset=preset, players=players, format=format, rounds=rounds,
            best_of=best_of, turn_seconds=turn_seconds, move_seconds=move_seconds,
            target=target, starts_at=starts_at,
            entry=entry, prize_split=split, prize_added=prize_added, max_teams=max_teams,
            created_by=user, created_at=now)
        purses.open_purse(key=tournament.purse_key, entry=entry, added=prize_added, now=now)
    return tournament


def _check_game(preset: str, players: int, turn_seconds: int | None,
                target: int | None) -> None:
    if preset not in PRESETS:
        raise ServiceError(_("Choose one of the club's games."), code="bad_game")
    if not ((players == 4 and preset in PAIR_PRESETS)
            or (players == 2 and preset in SOLO_PRESETS)):
        raise ServiceError(_("Tournaments are for pairs (the four-player partner games) or "
                             "one-on-one (the two-player games)."), code="bad_game")
    options: dict = {"preset": preset, "turn_seconds": turn_seconds}
    if target is not None:
        options["target"] = target
    try:
        make_rules(options, players)
    except RuleError as err:
        raise ServiceError(rule_message(err), code="bad_options") from err


def _check_split(split: list[int]) -> list[int]:
    if not split or len(split) > MAX_PRIZE_PLACES \
            or any(isinstance(p, bool) or not isinstance(p, int) or p <= 0 for p in split) \
            or sum(split) != 100 or split != sorted(split, reverse=True):
        raise ServiceError(_("The prizes are percents of the pot for the first places, from "
                             "the largest down, adding up to 100."), code="bad_prizes")
    return list(split)


# -- registration -------------------------------------------------------------------------------

def _locked(tournament_id: int) -> Tournament:
    tournament = Tournament.objects.select_for_update().filter(pk=tournament_id).first()
    if tournament is None:
        raise ServiceError(_("There is no such tournament."), code="no_tournament")
    return tournament


def _require_registering(tournament: Tournament, now: datetime) -> None:
    if tournament.state != Tournament.State.REGISTERING or tournament.starts_at <= now:
        raise ServiceError(_("Registration for this tournament has closed."), code="closed")


def _places_taken(tournament: Tournament) -> int:
    """People registered, counted in teams' places (two people alone make one pair); a pair
    waiting for the partner's yes holds its place."""
    people = Entrant.objects.filter(tournament=tournament, left_out=False).count()
    people += 2 * PartnerInvitation.objects.filter(tournament=tournament).count()
    return -(-people // tournament.team_size)


def register(*, user, tournament_id: int, partner: str = "", find_partner: bool = False,
             now: datetime | None = None) -> Team | PartnerInvitation | None:
    """Register ``user``: alone (one-on-one: their team), asking for a partner
    (``find_partner``: None until the start pairs them), or, naming a ``partner``, inviting
    them: the pair's place is held and both entries paid by ``user`` until the partner
    answers (:func:`accept_partner`); the invitation is returned."""
    now = now or timezone.now()
    _check_person(user)
    _require_calm(user)
    with transaction.atomic():
        tournament = _locked(tournament_id)
        _require_registering(tournament, now)
        _require_free(tournament, user)
        if tournament.move_seconds:
            tables.require_room_for_match(user)  # the limit on unfinished turn-based matches
        limits.count_after_commit(_registrations_key(user), window=REGISTRATIONS_WINDOW)
        mate = _partner(tournament, user, partner.strip(), find_partner)
        people = 2 if mate is not None else 1
        if _places_taken(tournament) + people / tournament.team_size > tournament.max_teams:
            raise ServiceError(_("This tournament is full."), code="full")
        purses.pay_entry(key=tournament.purse_key, user=user, count=people, now=now)
        notify.changed(tournament)
        if mate is not None:
            invitation = PartnerInvitation.objects.create(tournament=tournament, inviter=user,
                                                          invitee=mate, created_at=now)
            events.send_after_commit(events.partner_invited, PartnerInvitation,
                                     invitation_id=invitation.pk, tournament_id=tournament.pk,
                                     inviter_id=user.pk, invitee_id=mate.pk)
            return invitation
        team = None if find_partner else Team.objects.create(tournament=tournament,
                                                             created_at=now)
        Entrant.objects.create(tournament=tournament, user=user, team=team,
                               wants_partner=find_partner, created_at=now,
                               paid_by=user if tournament.entry else None)
        return team


def _require_free(tournament: Tournament, user) -> None:
    """``user`` is neither registered nor holding a place for a pair, nor invited by someone
    (they answer that first). An invitation from someone they blocked holds nobody: it is
    hidden from them, and it ends at the start."""
    if Entrant.objects.filter(tournament=tournament, user=user).exists() \
            or PartnerInvitation.objects.filter(tournament=tournament, inviter=user).exists():
        raise ServiceError(_("You are registered already."), code="registered")
    invited = (PartnerInvitation.objects.filter(tournament=tournament, invitee=user)
               .exclude(inviter_id__in=blocked_ids(user.pk))
               .select_related("inviter__profile").first())
    if invited is not None:
        raise ServiceError(_("%(name)s has invited you to play as a pair: accept or decline "
                             "first.") % {"name": display_name(invited.inviter)},
                           code="invited")


def _partner(tournament: Tournament, user, name: str, find_partner: bool):
    if not tournament.pairs:
        if name or find_partner:
            raise ServiceError(_("This tournament is one-on-one: register alone."),
                               code="no_pairs")
        return None
    if find_partner:
        if name:
            raise ServiceError(_("Name a partner or ask for one, not both."),
                               code="bad_partner")
        return None
    if not name:
        raise ServiceError(_("Name your partner, or ask the tournament to find you one."),
                           code="no_partner")
    mate = user_by_display_name(name)
    if mate is None:
        raise ServiceError(_("Nobody is called %(name)s.") % {"name": name},
                           code="no_such_player")
    if mate.pk == user.pk:
        raise ServiceError(_("You cannot be your own partner."), code="self_partner")
    if is_guest(mate) or not mate.is_active:
        raise ServiceError(_("%(name)s cannot play in tournaments.") % {"name": name},
                           code="bad_partner")
    if table_hooks.refusal(mate) is not None:  # banned
        raise ServiceError(_("%(name)s cannot play in tournaments.") % {"name": name},
                           code="bad_partner")
    block = blocked_either_way(user.pk, mate.pk)
    if block is not None and block.blocker_id == user.pk:
        raise ServiceError(_("You blocked %(name)s: unblock them first.") % {"name": name},
                           code="blocked")
    if block is not None:
        # Neutral on purpose, as the friends' refusal: nobody learns they were blocked.
        raise ServiceError(_("You cannot name %(name)s as your partner.") % {"name": name},
                           code="refused")
    if Entrant.objects.filter(tournament=tournament, user=mate).exists() \
            or PartnerInvitation.objects.filter(tournament=tournament, inviter=mate).exists():
        raise ServiceError(_("%(name)s is registered already.") % {"name": name},
                           code="partner_registered")
    if PartnerInvitation.objects.filter(tournament=tournament, invitee=mate).exists():
        raise ServiceError(_("%(name)s has an invitation to this tournament waiting already.")
                           % {"name": name}, code="partner_invited")
    return mate


def _open_invitation(user, invitation_id: int) -> tuple[Tournament, PartnerInvitation]:
    """The invitation made to ``user``, and its tournament, locked (the tournament's row
    first, as every registration takes it)."""
    gone = ServiceError(_("That invitation is no longer open."), code="no_invitation")
    tournament_id = PartnerInvitation.objects.filter(pk=invitation_id).values_list(
        "tournament_id", flat=True).first()
    if tournament_id is None:
        raise gone
    tournament = _locked(tournament_id)
    invitation = (PartnerInvitation.objects.filter(pk=invitation_id, invitee=user)
                  .select_related("inviter__profile").first())
    if invitation is None:
        raise gone
    return tournament, invitation


def accept_partner(*, user, invitation_id: int, now: datetime | None = None) -> Team:
    """The partner says yes: the pair is registered (the inviter paid both entries)."""
    now = now or timezone.now()
    _check_person(user)
    with transaction.atomic():
        tournament, invitation = _open_invitation(user, invitation_id)
        _require_registering(tournament, now)
        if blocked_either_way(user.pk, invitation.inviter_id) is not None:
            # A block made since the invitation: it cannot become a pair (and says nothing).
            raise ServiceError(_("That invitation is no longer open."), code="no_invitation")
        if Entrant.objects.filter(tournament=tournament, user=user).exists() or \
                PartnerInvitation.objects.filter(tournament=tournament, inviter=user).exists():
            raise ServiceError(_("You are registered already."), code="registered")
        team = Team.objects.create(tournament=tournament, created_at=now)
        for person in (invitation.inviter, user):
            Entrant.objects.create(tournament=tournament, user=person, team=team,
                                   created_at=now,
                                   paid_by=invitation.inviter if tournament.entry else None)
        invitation.delete()
        notify.changed(tournament)
        return team


def decline_partner(*, user, invitation_id: int, now: datetime | None = None) -> None:
    """The partner says no: the held place frees and both entries go back to the inviter."""
    now = now or timezone.now()
    _require_account(user)
    with transaction.atomic():
        tournament, invitation = _open_invitation(user, invitation_id)
        _end_invitation(tournament, invitation, now=now)
        notify.changed(tournament)


def _end_invitation(tournament: Tournament, invitation: PartnerInvitation, *,
                    now: datetime) -> None:
    for _entry in range(2):
        purses.refund_entry(key=tournament.purse_key, user_id=invitation.inviter_id, now=now)
    invitation.delete()


def withdraw(*, user, tournament_id: int,
             now: datetime | None = None) -> PartnerInvitation | None:
    """Before the start, a person takes their team out (a pair goes together), or takes back
    the invitation they made (returned); every entry goes back to whoever paid it."""
    now = now or timezone.now()
    _require_account(user)
    with transaction.atomic():
        tournament = _locked(tournament_id)
        _require_registering(tournament, now)
        mine = Entrant.objects.filter(tournament=tournament, user=user).first()
        if mine is None:
            invitation = PartnerInvitation.objects.filter(tournament=tournament,
                                                          inviter=user).first()
            if invitation is None:
                raise ServiceError(_("You are not registered."), code="not_registered")
            _end_invitation(tournament, invitation, now=now)
            notify.changed(tournament)
            return invitation
        going = [mine] if mine.team_id is None else list(mine.team.members.all())
        for entrant in going:
            if entrant.paid_by_id is not None:
                purses.refund_entry(key=tournament.purse_key, user_id=entrant.paid_by_id,
                                    now=now)
        team_id = mine.team_id
        Entrant.objects.filter(pk__in=[e.pk for e in going]).delete()
        if team_id is not None:
            Team.objects.filter(pk=team_id).delete()
        notify.changed(tournament)
        return None


def cancel(*, user, tournament_id: int, now: datetime | None = None) -> None:
    """Staff with the right, or the member who created it, cancel a tournament that has not
    started: every entry goes back."""
    now = now or timezone.now()
    _require_account(user)
    with transaction.atomic():
        tournament = _locked(tournament_id)
        if not (is_staff_with(user, "cancel_tournament")
                or (tournament.created_by_id == user.pk and may_create(user))):
            raise ServiceError(_("You may not cancel this tournament."), code="forbidden")
        if tournament.state == Tournament.State.CANCELLED:
            raise ServiceError(_("This tournament is cancelled already."), code="cancelled")
        if tournament.state != Tournament.State.REGISTERING:
            raise ServiceError(_("A tournament that has started cannot be cancelled."),
                               code="started")
        _cancel(tournament, reason="cancelled", now=now)


def _cancel(tournament: Tournament, *, reason: str, now: datetime) -> None:
    PartnerInvitation.objects.filter(tournament=tournament).delete()  # refunded with the rest
    purses.refund_all(key=tournament.purse_key, now=now)
    tournament.state, tournament.finished_at = Tournament.State.CANCELLED, now
    tournament.ended_reason = reason
    tournament.save(update_fields=["state", "finished_at", "ended_reason"])
    notify.changed(tournament)


# -- the start ----------------------------------------------------------------------------------

def start_due(*, now: datetime | None = None) -> int:
    """Beat: every tournament whose start time came closes its registration and starts
    (each in its own transaction); returns how many."""
    now = now or timezone.now()
    due = Tournament.objects.filter(state=Tournament.State.REGISTERING, starts_at__lte=now) \
        .values_list("pk", flat=True)
    return act_on_each(due=due[:50],
                       act=lambda tournament_id: start(tournament_id=tournament_id, now=now))


def start(*, tournament_id: int, now: datetime | None = None) -> Tournament:
    """Registration closes: people who asked for a partner are paired (strongest with
    weakest; an odd one out is refunded), teams are seeded by rating, and the first round's
    tables open. Fewer than two teams: the tournament is cancelled and refunded."""
    now = now or timezone.now()
    with transaction.atomic():
        tournament = _locked(tournament_id)
        if tournament.state != Tournament.State.REGISTERING or tournament.starts_at > now:
            raise ServiceError(_("This tournament is not due to start."), code="not_due")
        # A pair still waiting for the partner's yes is not registered: its hold ends.
        for invitation in PartnerInvitation.objects.filter(tournament=tournament):
            _end_invitation(tournament, invitation, now=now)
        ratings = _ratings(tournament)
        _pair_the_solos(tournament, ratings, now=now)
        teams = list(Team.objects.filter(tournament=tournament).prefetch_related("members"))
        if len(teams) < 2:
            _cancel(tournament, reason="too_few", now=now)
            return tournament
        for team in teams:
            members = [e.user_id for e in team.members.all()]
            team.rating = round(sum(ratings.get(u, numbers.RATING_BASE) for u in members)
                                / len(members))
        teams.sort(key=lambda t: (-t.rating, t.created_at, t.pk))
        for seed, team in enumerate(teams, start=1):
            team.seed = seed
            team.save(update_fields=["seed", "rating"])
        if tournament.format == Tournament.Format.KNOCKOUT:
            size = pairing.bracket_size(len(teams))
            tournament.rounds = size.bit_length() - 1
        tournament.state, tournament.started_at = Tournament.State.RUNNING, now
        tournament.save(update_fields=["state", "started_at", "rounds"])
        running.start_round(tournament, number=1, now=now)
        notify.changed(tournament)
    running.open_tables(tournament_id=tournament.pk, now=now)
    return tournament


def _ratings(tournament: Tournament) -> dict[int, int]:
    kind = Rating.Kind.PAIRS if tournament.pairs else Rating.Kind.SOLO
    people = Entrant.objects.filter(tournament=tournament).values_list("user_id", flat=True)
    return dict(Rating.objects.filter(kind=kind, user_id__in=list(people))
                .values_list("user_id", "shown"))


def _pair_the_solos(tournament: Tournament, ratings: dict[int, int], *, now: datetime) -> None:
    alone = list(Entrant.objects.filter(tournament=tournament, team__isnull=True,
                                        left_out=False).order_by("created_at", "pk"))
    if not alone:
        return
    by_user = {e.user_id: e for e in alone}
    pairs, left = pairing.pair_solos(
        [(e.user_id, ratings.get(e.user_id, numbers.RATING_BASE)) for e in alone])
    for a, b in pairs:
        team = Team.objects.create(tournament=tournament, created_at=now)
        Entrant.objects.filter(pk__in=[by_user[a].pk, by_user[b].pk]).update(team=team)
    if left is not None:
        entrant = by_user[left]
        entrant.left_out = True
        entrant.save(update_fields=["left_out"])
        if entrant.paid_by_id is not None:
            purses.refund_entry(key=tournament.purse_key, user_id=entrant.paid_by_id, now=now)
