"""Check the club's books: every wallet against its ledger rows, every stake's escrow against
its entries, and the coin invariant (wallets + escrow = minted). Exit status 1 on a mismatch."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from apps.club.selectors import coin_totals, wallet_problems


class Command(BaseCommand):
    help = "Check wallets, escrow and the coin invariant against the ledger."

    def handle(self, *args, **options):
        problems = wallet_problems()
        totals = coin_totals()
        self.stdout.write(f"wallets {totals['wallets']} + escrow {totals['escrow']} = "
                          f"minted {totals['minted']}")
        for line in problems:
            self.stdout.write(line)
        if problems:
            raise CommandError(f"{len(problems)} problem(s) in the club's books")
        self.stdout.write("the books hold")
