"""Stripe restricted keys: a permission per resource and level, compiled by hand from docs.stripe.com.

Stripe's OpenAPI description names only the secret key (HTTP basic or bearer): full access to the
account. A restricted key grants None, Read or Write per resource (Write includes Read;
https://docs.stripe.com/keys/restricted-api-keys), which is what least privilege asks for. This
catalog maps each path prefix of the API to its resource and each method to a level (GET: Read or
Write; POST and DELETE: Write), and is added *beside* the spec's requirements (``beside_spec``):
the secret key stays an alternative, the restricted key's permission is the narrower one.
Identifiers are ``rak_<resource>_<read|write>``; each permission's short name is the Dashboard's
resource and level. Paths the catalog does not map stay with the spec's secret key alone.
"""

from __future__ import annotations

from pathlib import Path

from .hand import build_hand, normalise_path

__all__ = ["NAME", "SERVERS", "build", "normalise_path"]

NAME = "stripe-restricted-keys"
SERVERS: tuple[str, ...] = (r"^https://api\.stripe\.com$",)


def build(vendor_dir: Path) -> bytes:
    return build_hand(vendor_dir)
