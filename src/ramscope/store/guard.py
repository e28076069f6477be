"""The URL and address guard: which spec URLs ramscope may fetch (SSRF defence).

Threat model. Spec URLs come from strangers' agent cards, and ramscope runs
inside registries and orchestrators that sit on internal networks, next to
cloud metadata services and admin ports on loopback. A card must not be able to
make ramscope talk to anything but the public internet, because whatever is
fetched ends up parsed, cached and summarised in a report the card's author may
see. So, before any byte leaves the machine:

* only ``https`` and ``http`` URLs are fetched (``http`` is allowed but
  reported: anyone on the path can change the spec);
* URLs with userinfo (``https://user:pw@host/``) are refused: they leak
  credentials and are a classic way to confuse URL parsers;
* a host that *reads* as a number is an address, however it is spelt. The
  inet_aton forms (``2130706433``, ``0x7f.1``, ``017700000001``, ``127.1``)
  and the WHATWG URL parser agree on what those mean; we normalise them the
  same way before deciding a host is a name, so they cannot pass as names;
* every address must be globally routable unicast: loopback, RFC 1918,
  link-local (169.254.169.254 is the cloud metadata service), CGNAT,
  ``0.0.0.0/8``, multicast, reserved and documentation ranges, IPv6 loopback,
  ULA, link-local and site-local are refused, and so are the IPv6 forms that
  smuggle an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4, Teredo);
* only the address check is lifted by ``--allow-private-network``; scheme,
  userinfo and host syntax rules always apply.

This module does no I/O. The connection layer (``http.py``) resolves each host
once, passes every resolved address through :meth:`AddressPolicy.refusal`, and
connects to the vetted address itself, so DNS cannot answer differently between
check and use. Redirects come back through :func:`check_url` hop by hop.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import BlockedURLError

if TYPE_CHECKING:
    import httpx

__all__ = [
    "ALLOWED_SCHEMES",
    "AddressBlockedError",
    "AddressPolicy",
    "CheckedURL",
    "IPAddress",
    "IPNetwork",
    "address_refusal",
    "check_url",
    "judge_host",
    "parse_ip",
    "parse_numeric_host",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

ALLOWED_SCHEMES = frozenset({"https", "http"})
_HINT = " (--allow-private-network lifts this check)"


class _MalformedHostError(ValueError):
    """A host that reads as a number but is not a valid address."""


class AddressBlockedError(Exception):
    """Raised by the connection layer when a resolved address is refused.

    Internal: the store turns it into :class:`~ramscope.errors.BlockedURLError`
    naming the URL. It is not an ``httpx``/``httpcore`` error on purpose, so no
    layer in between maps it to a plain connection failure.
    """

    def __init__(self, host: str, address: str, reason: str) -> None:
        self.host = host
        self.address = address
        self.reason = reason
        super().__init__(f"host {host} resolves to {address}, {reason}; refused{_HINT}")


# --------------------------------------------------------------------------- address classes

_V4: list[tuple[ipaddress.IPv4Network, str]] = [
    (ipaddress.IPv4Network(net), label)
    for net, label in (
        ("0.0.0.0/8", "a 'this network' address (0.0.0.0/8)"),
        ("10.0.0.0/8", "a private address (RFC 1918, 10.0.0.0/8)"),
        ("100.64.0.0/10", "a carrier-grade NAT address (100.64.0.0/10)"),
        ("127.0.0.0/8", "a loopback address (127.0.0.0/8)"),
        ("169.254.0.0/16", "a link-local address (169.254.0.0/16, where cloud metadata services live)"),
        ("172.16.0.0/12", "a private address (RFC 1918, 172.16.0.0/12)"),
        ("192.0.0.0/24", "an IETF protocol assignment (192.0.0.0/24)"),
        ("192.0.2.0/24", "a documentation address (192.0.2.0/24)"),
        ("192.88.99.0/24", "a 6to4 relay anycast address (192.88.99.0/24)"),
        ("192.168.0.0/16", "a private address (RFC 1918, 192.168.0.0/16)"),
        ("198.18.0.0/15", "a benchmarking address (198.18.0.0/15)"),
        ("198.51.100.0/24", "a documentation address (198.51.100.0/24)"),
        ("203.0.113.0/24", "a documentation address (203.0.113.0/24)"),
        ("224.0.0.0/4", "a multicast address (224.0.0.0/4)"),
        ("240.0.0.0/4", "a reserved address (240.0.0.0/4, incl. broadcast)"),
    )
]

# IPv6 ranges refused outright. The translation prefixes that carry an IPv4
# address a packet really goes to (IPv4-mapped, NAT64 well-known prefix) are
# judged by that IPv4 address instead, in ``address_refusal``.
_V6: list[tuple[ipaddress.IPv6Network, str]] = [
    (ipaddress.IPv6Network(net), label)
    for net, label in (
        ("::/128", "the unspecified address (::)"),
        ("::1/128", "the loopback address (::1)"),
        ("64:ff9b:1::/48", "a local-use NAT64 address (64:ff9b:1::/48)"),
        ("100::/64", "a discard-only address (100::/64)"),
        ("2001::/32", "a Teredo tunnel address (2001::/32)"),
        ("2001:db8::/32", "a documentation address (2001:db8::/32)"),
        ("2001::/23", "an IETF protocol assignment (2001::/23)"),
        ("2002::/16", "a 6to4 address (2002::/16, tunnels to an embedded IPv4 address)"),
        ("3fff::/20", "a documentation address (3fff::/20)"),
        ("5f00::/16", "an SRv6 segment identifier (5f00::/16)"),
        ("fc00::/7", "a unique local address (fc00::/7)"),
        ("fe80::/10", "a link-local address (fe80::/10)"),
        ("fec0::/10", "a site-local address (fec0::/10)"),
        ("ff00::/8", "a multicast address (ff00::/8)"),
    )
]
_V6_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_V4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_NAT64_WKP = ipaddress.IPv6Network("64:ff9b::/96")


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv4-mapped or NAT64 (well-known prefix) address reaches."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64_WKP:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_refusal(ip: IPAddress) -> str | None:
    """Why ``ip`` must not be connected to, or ``None`` if it is public unicast.

    The explicit tables come first so the reason names the range; ``is_global``
    is the backstop for whatever they miss (and differs a little between Python
    versions, which is why it is not the only rule).
    """
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            ip = ipaddress.IPv6Address(str(ip).split("%", 1)[0])
        inner = _embedded_v4(ip)
        if inner is not None:
            why = address_refusal(inner)
            form = "an IPv4-mapped" if ip.ipv4_mapped is not None else "a NAT64"
            return f"{form} form of {inner}, {why}" if why else None
        for net6, label in _V6:
            if ip in net6:
                return label
        if ip in _V4_COMPATIBLE:
            return f"an IPv4-compatible address (deprecated; embeds {ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)})"
        if ip not in _V6_GLOBAL_UNICAST:
            return "a reserved address (outside the global unicast range 2000::/3)"
    else:
        for net4, label in _V4:
            if ip in net4:
                return label
    if not ip.is_global:
        return "not a globally routable address"
    return None


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """Which addresses may be connected to.

    ``allow_private`` is ``--allow-private-network``: every address is then
    allowed. ``allow_networks`` admits a few ranges while refusing the rest (an
    internal spec server a registry trusts; the loopback test server).
    """

    allow_private: bool = False
    allow_networks: tuple[IPNetwork, ...] = ()

    def refusal(self, ip: IPAddress) -> str | None:
        if self.allow_private:
            return None
        if self.allow_networks:
            candidates: list[IPAddress] = [ip]
            if isinstance(ip, ipaddress.IPv6Address) and (inner := _embedded_v4(ip)) is not None:
                candidates.append(inner)
            for cand in candidates:
                if any(cand.version == net.version and cand in net for net in self.allow_networks):
                    return None
        return address_refusal(ip)

    def vet(self, host: str, addresses: Iterable[str]) -> list[str]:
        """Check every resolved address of ``host``; all must pass, or none is used.

        Refusing when *any* address is bad (not just picking a good one) keeps a
        hostile DNS server from mixing a public address with 169.254.169.254 and
        winning whenever the public one fails to connect.
        """
        vetted: list[str] = []
        for text in addresses:
            try:
                ip = parse_ip(text)
            except ValueError:
                raise AddressBlockedError(host, text, "not an IP address") from None
            why = self.refusal(ip)
            if why:
                raise AddressBlockedError(host, str(ip), why)
            vetted.append(text)
        if not vetted:
            raise AddressBlockedError(host, "(nothing)", "no address to connect to")
        return vetted


def parse_ip(text: str) -> IPAddress:
    """An IP address as a resolver returns it (IPv6 may carry a ``%scope``)."""
    return ipaddress.ip_address(text)


# --------------------------------------------------------------------------- numeric hosts

_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_OCT_DIGITS = frozenset("01234567")


def _ipv4_part(part: str) -> int | None:
    """One dot-separated part as inet_aton / WHATWG read it: 0x hex, leading-0 octal, decimal."""
    if part[:2] in ("0x", "0X"):
        digits = part[2:]
        if not digits:
            return 0
        return int(digits, 16) if set(digits) <= _HEX_DIGITS else None
    if len(part) > 1 and part[0] == "0":
        return int(part, 8) if set(part) <= _OCT_DIGITS else None
    return int(part) if part.isascii() and part.isdigit() else None


def parse_numeric_host(host: str) -> IPAddress | None:
    """The address a URL host denotes if it reads as a number, else ``None`` (a name).

    Follows the WHATWG URL standard's IPv4 parser, which accepts everything
    ``inet_aton`` does: ``2130706433``, ``0x7f000001``, ``0x7f.1``,
    ``017700000001``, ``127.1`` and a trailing dot all mean 127.0.0.1. A host
    whose last label is numeric but which is not a valid address (``1.2.3.4.5``,
    ``999.1``) raises :class:`ValueError`: resolvers disagree about such names,
    so they are refused rather than guessed at.
    """
    h = host
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    if ":" in h:
        # A zone ("%25eth0") only qualifies a link-local address; the address decides.
        addr = h.partition("%")[0]
        try:
            return ipaddress.IPv6Address(addr)
        except ValueError:
            raise _MalformedHostError(f"{host!r} is not a valid IPv6 address") from None
    parts = h.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    last_part = parts[-1]
    if not last_part or not ((last_part.isascii() and last_part.isdigit()) or _ipv4_part(last_part) is not None):
        return None  # does not end in a number: a name
    if len(parts) > 4:
        raise _MalformedHostError(f"{host!r} reads as a number but has more than four parts")
    numbers: list[int] = []
    for part in parts:
        value = _ipv4_part(part) if part else None
        if value is None:
            raise _MalformedHostError(f"{host!r} has a part that is not a valid number")
        numbers.append(value)
    last = numbers.pop()
    if any(n > 255 for n in numbers) or last >= 256 ** (4 - len(numbers)):
        raise _MalformedHostError(f"{host!r} reads as a number but is out of range for IPv4")
    value = last
    for i, n in enumerate(numbers):
        value += n << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


# --------------------------------------------------------------------------- URLs

# After httpx's IDNA encoding a name is ASCII; anything beyond LDH (and the
# underscore some real hosts use) is a parser-differential waiting to happen.
_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)\Z")


@dataclass(frozen=True, slots=True)
class CheckedURL:
    """A URL that passed the policy checks that need no DNS."""

    url: httpx.URL
    #: The host as sent on the wire (IDNA-encoded, no brackets).
    host: str
    #: The address, when the host is an IP literal or a numeric form of one.
    ip: IPAddress | None
    #: Plain http: the spec can be changed by anyone on the path.
    insecure: bool

    def __str__(self) -> str:
        return str(self.url)


def check_url(url: str | httpx.URL, policy: AddressPolicy) -> CheckedURL:
    """Everything that can be decided about ``url`` without DNS; raises :class:`BlockedURLError`.

    httpx's own parser is used so that the URL checked is exactly the URL sent.
    The fragment is dropped (it is never sent).
    """
    import httpx  # noqa: PLC0415 - a run answered from the cache never parses a URL with it

    shown = str(url)
    try:
        u = url if isinstance(url, httpx.URL) else httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise BlockedURLError(f"not a valid URL: {exc}", url=shown) from None
    if u.fragment:
        u = u.copy_with(fragment=None)
    if u.scheme not in ALLOWED_SCHEMES:
        what = f"scheme {u.scheme!r}" if u.scheme else "a URL without a scheme"
        raise BlockedURLError(f"{what} is not allowed; only https and http are fetched", url=shown)
    if u.userinfo:
        raise BlockedURLError("URLs carrying a user name or password are refused", url=shown)
    host = u.raw_host.decode("ascii", "replace")
    if not host:
        raise BlockedURLError("the URL has no host", url=shown)
    if u.port is not None and not 1 <= u.port <= 65535:
        raise BlockedURLError(f"port {u.port} is out of range", url=shown)
    ip = judge_host(host, policy, shown)
    return CheckedURL(url=u, host=host, ip=ip, insecure=u.scheme == "http")


def judge_host(host: str, policy: AddressPolicy, shown: str) -> IPAddress | None:
    """The checks of a parsed URL's host (as sent: IDNA-encoded, brackets kept); its address if numeric.

    The part of :func:`check_url` that depends on the policy, apart so the store can apply
    it to a URL it parsed in an earlier run. Raises :class:`BlockedURLError` naming ``shown``.
    """
    try:
        ip = parse_numeric_host(host)
    except ValueError as exc:
        raise BlockedURLError(f"refused: {exc}", url=shown) from None
    if ip is not None:
        why = policy.refusal(ip)
        if why:
            spelt = "" if host.strip("[]") == str(ip) else f" ({host} is a numeric form of {ip})"
            raise BlockedURLError(f"refused: {ip} is {why}{spelt}{_HINT}", url=shown)
    else:
        name = host[:-1] if host.endswith(".") else host
        if len(name) > 253 or not all(_LABEL.match(label) for label in name.split(".")):
            raise BlockedURLError(f"refused: {host!r} is not a valid host name", url=shown)
        if (name == "localhost" or name.endswith(".localhost")) and not policy.allow_private:
            # RFC 6761: such names are loopback by definition, whatever a resolver says.
            raise BlockedURLError(f"refused: {host} names the loopback interface{_HINT}", url=shown)
    return ip
