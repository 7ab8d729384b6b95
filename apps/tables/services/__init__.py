"""The only code that changes a table's state, by concern; the contract every one of them keeps
(row lock, ply check, version, doorbell after commit) is written once, in :mod:`.base`.

- :mod:`.lifecycle`: create, name, start, deal, pause and resume, close;
- :mod:`.seats`: join, leave, bots in seats, invitations, stand-ins, new names;
- :mod:`.moves`: a person's move, the table's move when a deadline comes, auto-pass;
- :mod:`.rounds`: dealing, recording and settling a round;
- :mod:`.clock`: deadlines and the presence limits; :mod:`.sweep`: beat's guarantee;
- :mod:`.presence`: sockets open at a table, and the web processes' leases;
- :mod:`.play`: practice (and guests), quick play;
- :mod:`.staff`: what moderators do to a table.

Callers use this package's names (``services.play_move``); the modules are for reading. A
module's name without a leading underscore that is not listed here (``base.bump``,
``rounds.deal``, ...) is one its sibling modules share; an underscore keeps a name to its
module.
"""

from apps.core.errors import ServiceError, StaleMove
from apps.core.protocol import WATCHING_OFF_CLOSE_CODE

from .adjourn import (
    adjourn,
    end_adjourned,
    resume_adjourned,
)
from .base import (
    AUTO_PASS_PRESETS,
    RUNNING,
    NotDue,
    Outcome,
    lock_table,
    require_not_banned,
    require_open,
    require_room_for_match,
    require_signed_in,
)
from .clock import (
    AWAY_LIMIT,
    DUE_TOLERANCE,
    EMPTY_LIMIT,
    GRACE_TIMED,
    GRACE_UNTIMED,
    SLOW_BOT_LEVELS,
)
from .lifecycle import (
    cancel_waiting,
    close_empty,
    create_table,
    find_by_code,
    mark_unopened,
    new_match,
    next_round,
    pause,
    rename_table,
    resume,
    set_watching,
    start_match,
    start_with_bots,
    touch,
)
from .moves import (
    act_on_deadline,
    play_move,
    set_preferences,
)
from .play import (
    QUICK_PLAY_TURN_SECONDS,
    delete_idle_guests,
    fill_quick_table,
    guest_idle_limit,
    open_practice,
    practice_max_age,
    quick_play,
)
from .presence import (
    HEARTBEAT,
    LEASE,
    Lease,
    Renewal,
    SocketOpened,
    connect,
    disconnect,
    expire_leases,
    hold_lease,
    lease_length,
    open_socket,
    register_node,
    renew_lease,
)
from .rematch import rematch
from .seats import (
    add_bot,
    invite,
    join_table,
    leave_table,
    person_renamed,
    remove_bot,
    stand_in,
)
from .staff import (
    close_by_staff,
    remove_seated_player,
    update_by_staff,
)
from .sweep import (
    prune_table_events,
    sweep,
)
from .vacation import (
    on_vacation,
    start_vacation,
    stop_vacation,
    vacation_left,
)

__all__ = [
    "AUTO_PASS_PRESETS",
    "AWAY_LIMIT",
    "DUE_TOLERANCE",
    "EMPTY_LIMIT",
    "GRACE_TIMED",
    "GRACE_UNTIMED",
    "HEARTBEAT",
    "LEASE",
    "Lease",
    "NotDue",
    "Outcome",
    "QUICK_PLAY_TURN_SECONDS",
    "RUNNING",
    "Renewal",
    "SLOW_BOT_LEVELS",
    "ServiceError",
    "SocketOpened",
    "StaleMove",
    "WATCHING_OFF_CLOSE_CODE",
    "act_on_deadline",
    "add_bot",
    "cancel_waiting",
    "close_by_staff",
    "close_empty",
    "connect",
    "create_table",
    "delete_idle_guests",
    "disconnect",
    "expire_leases",
    "fill_quick_table",
    "find_by_code",
    "guest_idle_limit",
    "hold_lease",
    "invite",
    "join_table",
    "lease_length",
    "leave_table",
    "lock_table",
    "mark_unopened",
    "new_match",
    "next_round",
    "open_practice",
    "open_socket",
    "pause",
    "person_renamed",
    "play_move",
    "practice_max_age",
    "prune_table_events",
    "quick_play",
    "register_node",
    "remove_bot",
    "remove_seated_player",
    "rename_table",
    "renew_lease",
    "require_not_banned",
    "require_open",
    "require_room_for_match",
    "require_signed_in",
    "resume",
    "set_preferences",
    "set_watching",
    "stand_in",
    "start_match",
    "start_with_bots",
    "sweep",
    "touch",
    "update_by_staff",
    "adjourn",
    "end_adjourned",
    "resume_adjourned",
    "rematch",
    "on_vacation",
    "start_vacation",
    "stop_vacation",
    "vacation_left",
]
