"""Reading a provider's words about cost, shared by the build (``scripts/build_costs.py``) and the run."""

from __future__ import annotations

import re

__all__ = ["customer_data_level"]

#: Shopify's Admin API reference and its schema's ``requiredAccess``: "... access scope. Also: Level 2
#: access to Customer data including name, address, phone, and email fields."
_LEVEL = re.compile(r"\bLevel ([12]) access to Customer data\b")


def customer_data_level(text: str) -> int | None:
    """The protected customer data level a Shopify ``requiredAccess`` text names, or ``None``."""
    m = _LEVEL.search(text[:4000])
    return int(m.group(1)) if m else None
