"""Take the numbers of reviews done before there were any: each person's accuracy and their
exercises (``services.take_numbers``) for every done review that has no accuracy yet.

Run once after deploying the accuracy (issue 35); running it again changes nothing.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from apps.reviews import services
from apps.reviews.models import MatchReview


class Command(BaseCommand):
    help = "Each person's accuracy and exercises for done reviews that have none yet."

    def handle(self, *args, **options) -> None:
        reviews = (MatchReview.objects.filter(status=MatchReview.Status.DONE,
                                              accuracies__isnull=True)
                   .select_related("match__table").order_by("pk"))
        taken = made = 0
        for review in reviews.iterator():
            made += services.take_numbers(review)
            taken += 1
        self.stdout.write(f"{taken} review(s) taken, {made} exercise(s) made")
