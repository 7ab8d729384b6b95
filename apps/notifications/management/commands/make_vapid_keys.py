"""``python manage.py make_vapid_keys``: a new VAPID key pair for web push, printed as the
environment lines the site reads (docs/notifications.md). Keep the private key secret; a new
pair makes every browser's subscription useless (they subscribe again from the profile)."""

from __future__ import annotations

import base64

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.core.management.base import BaseCommand


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def make_pair() -> tuple[str, str]:
    """(public, private): the public key as browsers take it (the uncompressed P-256 point,
    base64url), the private one as its 32-byte scalar (base64url)."""
    key = ec.generate_private_key(ec.SECP256R1())
    public = key.public_key().public_bytes(serialization.Encoding.X962,
                                           serialization.PublicFormat.UncompressedPoint)
    private = key.private_numbers().private_value.to_bytes(32, "big")
    return b64url(public), b64url(private)


class Command(BaseCommand):
    help = "Print a new VAPID key pair for web push (VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--subject", default="mailto:admin@example.com",
                            help="VAPID_SUBJECT: a mailto: or https: address push services "
                                 "may contact")

    def handle(self, *args, subject: str, **options) -> None:
        public, private = make_pair()
        self.stdout.write(f"VAPID_PUBLIC_KEY={public}\nVAPID_PRIVATE_KEY={private}\n"
                          f"VAPID_SUBJECT={subject}\n")
