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

#: Ratings (openskill, Plackett-Luce): a bot seat is a fixed-strength opponent with this
#: rating, never updated; a rating is provisional until this many rated matches.
BOT_MU = 25.0
BOT_SIGMA = 2.0
RATING_PROVISIONAL_MATCHES = 10
#: Shown rating = RATING_BASE + RATING_SCALE * (mu - 3 sigma): a new player shows 1000.
RATING_BASE = 1000
RATING_SCALE = 40
LEADERBOARD_ROWS = 20

#: Weekly league: points per final rank in an online match, by the number of sides; halved
#: (exactly: every number is even) when a bot filled any seat.
LEAGUE_POINTS: dict[int, tuple[int, ...]] = {
    2: (8, 4),
    3: (10, 6, 2),
    4: (10, 6, 4, 2),
}
#: Coins for the week's top places (shared ranks are paid the better place's prize).
LEAGUE_PRIZES = (1000, 600, 400, 200, 100)
