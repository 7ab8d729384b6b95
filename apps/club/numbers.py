"""Every number of the club's economy, in one place (documented in docs/club.md).

Coins are play money: nothing is bought or sold, so these are tuning knobs, not prices. Change
them here and in docs/club.md together; the tests read them from here.
"""

from __future__ import annotations

from datetime import timedelta

#: Coins a new account starts with: enough for a few 100-coin stake tables.
START_COINS = 1000
#: Who holds fewer coins than this may collect the daily grant, once per UTC day.
DAILY_FLOOR = 300
DAILY_COINS = 200

#: Online tables (public, quick play included): coins per final rank, best first, by the
#: number of sides (pairs: 2 sides; individual presets: one side per player).
ONLINE_COINS: dict[int, tuple[int, ...]] = {
    2: (60, 20),
    3: (80, 40, 15),
    4: (100, 60, 30, 10),
}
#: Experience follows the same rules with its own table.
ONLINE_XP: dict[int, tuple[int, ...]] = {
    2: (40, 20),
    3: (50, 30, 15),
    4: (60, 40, 25, 15),
}
#: Private tables ("contra amigos") pay only the winning side, at this fraction of rank 1.
PRIVATE_FACTOR = 0.5

#: Level L is reached at LEVEL_STEP * L * (L - 1) / 2 experience: 0, 100, 300, 600, ...
LEVEL_STEP = 100

#: Entries a stake table may ask; only online (public) tables have one.
STAKES = (100, 250, 500, 1000)
#: A stake table not started this long after it opened is cancelled and every entry refunded.
STAKE_FILL_TIME = timedelta(minutes=5)

#: How many ledger rows the profile shows.
PROFILE_LEDGER_ROWS = 10
