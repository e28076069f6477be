"""The URL and address guard: numeric host tricks, address classes, and the SSRF table through the store."""

from __future__ import annotations

import ipaddress
from typing import Any

import httpcore
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ramscope.config import Settings
from ramscope.errors import BlockedURLError, FetchError
from ramscope.store import AddressPolicy, GuardedTransport, SpecStore, address_refusal, check_url, parse_numeric_host

# --------------------------------------------------------------------------- numeric hosts

LOOPBACK_SPELLINGS = [
    "2130706433",
    "0x7f000001",
    "0x7F000001",
    "0x7f.1",
    "0x7f.0.0.1",
    "017700000001",
    "0177.0.0.1",
    "0177.0.1",
    "127.1",
    "127.0.1",
    "127.0.0.1",
    "127.0.0.1.",
    "0x7f.0x0.0x0.0x1",
]


@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS)
def test_numeric_spellings_of_loopback_are_read_as_127_0_0_1(host: str) -> None:
    """Every inet_aton/WHATWG spelling of 127.0.0.1 is recognised as that address, not a name."""
    assert parse_numeric_host(host) == ipaddress.IPv4Address("127.0.0.1")


@pytest.mark.parametrize("host", ["example.com", "1e100.net", "123.example", "xn--nxasmq6b.com", "a-b.c_d.test"])
def test_names_are_not_numbers(host: str) -> None:
    """Hosts whose last label is not numeric are names."""
    assert parse_numeric_host(host) is None


@pytest.mark.parametrize("host", ["1.2.3.4.5", "999.1", "256.0.0.1", "foo.0x", "09.1.1.1", "4294967296", "1.2.3.08"])
def test_malformed_numeric_hosts_are_errors(host: str) -> None:
    """A host that ends in a number but is not a valid IPv4 address is refused, not guessed at."""
    with pytest.raises(ValueError, match=r"host|number|range|part"):
        parse_numeric_host(host)


@settings(deadline=None)  # no timing in tests: a loaded CI machine must not fail a correct parser
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_any_ipv4_in_decimal_hex_and_octal_reads_back(value: int) -> None:
    """Decimal, hex and octal whole-number spellings all denote the same IPv4 address."""
    expected = ipaddress.IPv4Address(value)
    for spelling in (str(value), hex(value), "0" + oct(value)[2:]):
        assert parse_numeric_host(spelling) == expected


@settings(deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_any_ipv4_in_dotted_shorthand_reads_back(value: int) -> None:
    """a.b.c.d, a.b.(c*256+d) and a.(b,c,d as 24 bits) forms are read as inet_aton reads them."""
    ip = ipaddress.IPv4Address(value)
    a, b, c, d = ip.packed
    for spelling in (
        f"{a}.{b}.{c}.{d}",
        f"{a}.{b}.{c * 256 + d}",
        f"{a}.{(b << 16) + (c << 8) + d}",
        f"{a:#x}.{b}.{c:#o}.{d}",
    ):
        assert parse_numeric_host(spelling.replace("0o", "0")) == ip


# --------------------------------------------------------------------------- address classes

#: (label, address, a word the refusal names). Every class the issue lists, and the IPv6 smuggling forms.
REFUSED: list[tuple[str, str, str]] = [
    ("loopback", "127.0.0.1", "loopback"),
    ("loopback, other", "127.255.255.254", "loopback"),
    ("RFC 1918 10/8", "10.0.0.1", "RFC 1918"),
    ("RFC 1918 172.16/12", "172.16.0.1", "RFC 1918"),
    ("RFC 1918 172.31", "172.31.255.255", "RFC 1918"),
    ("RFC 1918 192.168/16", "192.168.1.1", "RFC 1918"),
    ("link-local", "169.254.0.1", "link-local"),
    ("cloud metadata", "169.254.169.254", "link-local"),
    ("CGNAT", "100.64.0.1", "carrier-grade NAT"),
    ("CGNAT top", "100.127.255.254", "carrier-grade NAT"),
    ("this network", "0.0.0.0", "this network"),
    ("this network, other", "0.1.2.3", "this network"),
    ("multicast", "224.0.0.1", "multicast"),
    ("multicast SSDP", "239.255.255.250", "multicast"),
    ("reserved", "240.0.0.1", "reserved"),
    ("broadcast", "255.255.255.255", "reserved"),
    ("IETF assignments", "192.0.0.8", "IETF"),
    ("documentation", "192.0.2.1", "documentation"),
    ("documentation 2", "198.51.100.7", "documentation"),
    ("documentation 3", "203.0.113.9", "documentation"),
    ("benchmarking", "198.18.0.1", "benchmarking"),
    ("IPv6 loopback", "::1", "loopback"),
    ("IPv6 unspecified", "::", "unspecified"),
    ("IPv6 ULA fc00::/7", "fc00::1", "unique local"),
    ("IPv6 ULA fd", "fd12:3456:789a::1", "unique local"),
    ("IPv6 link-local", "fe80::1", "link-local"),
    ("IPv6 site-local", "fec0::1", "site-local"),
    ("IPv6 multicast", "ff02::1", "multicast"),
    ("IPv6 documentation", "2001:db8::1", "documentation"),
    ("IPv6 discard", "100::1", "discard"),
    ("IPv4-mapped loopback", "::ffff:127.0.0.1", "IPv4-mapped form of 127.0.0.1"),
    ("IPv4-mapped private", "::ffff:10.0.0.1", "IPv4-mapped form of 10.0.0.1"),
    ("IPv4-mapped metadata", "::ffff:169.254.169.254", "IPv4-mapped form of 169.254.169.254"),
    ("IPv4-compatible loopback", "::127.0.0.1", "IPv4-compatible"),
    ("NAT64 loopback", "64:ff9b::7f00:1", "NAT64 form of 127.0.0.1"),
    ("NAT64 metadata", "64:ff9b::a9fe:a9fe", "NAT64 form of 169.254.169.254"),
    ("NAT64 private", "64:ff9b::c0a8:101", "NAT64 form of 192.168.1.1"),
    ("local-use NAT64", "64:ff9b:1::a00:1", "local-use NAT64"),
    ("6to4 of loopback", "2002:7f00:1::1", "6to4"),
    ("6to4 of metadata", "2002:a9fe:a9fe::1", "6to4"),
    ("Teredo", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
    ("IPv6 outside 2000::/3", "4000::1", "reserved"),
]

ALLOWED = ["8.8.8.8", "1.1.1.1", "93.184.215.14", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"]


@pytest.mark.parametrize(("label", "address", "reason"), REFUSED, ids=[r[0] for r in REFUSED])
def test_non_public_addresses_are_refused_with_their_class(label: str, address: str, reason: str) -> None:
    """Each non-public address class is refused, and the reason names the class."""
    why = address_refusal(ipaddress.ip_address(address))
    assert why is not None
    assert reason in why


@pytest.mark.parametrize("address", ALLOWED)
def test_public_unicast_addresses_are_allowed(address: str) -> None:
    """Globally routable unicast addresses (also through IPv4-mapped and NAT64 forms) pass."""
    assert address_refusal(ipaddress.ip_address(address)) is None


def test_allow_networks_admits_only_the_listed_range() -> None:
    """An explicit allow-list opens one range and leaves every other private range closed."""
    policy = AddressPolicy(allow_networks=(ipaddress.ip_network("127.0.0.1/32"),))
    assert policy.refusal(ipaddress.ip_address("127.0.0.1")) is None
    assert policy.refusal(ipaddress.ip_address("::ffff:127.0.0.1")) is None
    assert policy.refusal(ipaddress.ip_address("127.0.0.2")) is not None
    assert policy.refusal(ipaddress.ip_address("10.0.0.1")) is not None


# --------------------------------------------------------------------------- URLs

STRICT = AddressPolicy()
OPEN = AddressPolicy(allow_private=True)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://example.com/spec.json", "scheme 'ftp'"),
        ("file:///etc/passwd", "scheme 'file'"),
        ("gopher://example.com/", "scheme"),
        ("//example.com/spec.json", "without a scheme"),
        ("https://user:pw@example.com/spec.json", "user name or password"),
        ("https://user@example.com/spec.json", "user name or password"),
        ("http://127.0.0.1%5C@example.com/", "user name or password"),
        ("https:///spec.json", "no host"),
        ("https://example.com:65536/", "out of range"),
        ("https://example.com:0/", "out of range"),
        ("http://%31%32%37.0.0.1/", "not a valid (host name|number)"),
        ("https://exa%20mple.com/", "not a valid host name"),
        ("http://1.2.3.4.5/", "more than four parts"),
        ("http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/", "not a valid URL"),
    ],
)
def test_policy_refusals_that_no_flag_lifts(url: str, message: str) -> None:
    """Schemes, userinfo, ports and host syntax are refused even with --allow-private-network."""
    for policy in (STRICT, OPEN):
        with pytest.raises(BlockedURLError, match=message):
            check_url(url, policy)


@pytest.mark.parametrize(
    "url",
    [
        "http://2130706433/",
        "http://0x7f.1/",
        "http://017700000001/",
        "http://127.1/",
        "http://0/",
        "http://127.0.0.1./",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:7f00:1]:8080/x",
        "http://[fe80::1%25eth0]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://localhost:8080/",
        "http://api.localhost/",
    ],
)
def test_private_literals_and_tricks_are_refused_unless_allowed(url: str) -> None:
    """Numeric and literal private hosts are refused without DNS, and allowed with --allow-private-network."""
    with pytest.raises(BlockedURLError, match="allow-private-network"):
        check_url(url, STRICT)
    assert check_url(url, OPEN).url.host


def test_check_url_keeps_what_is_sent_and_flags_http() -> None:
    """The fragment is dropped, the host is IDNA-encoded, and plain http is flagged insecure."""
    c = check_url("HTTP://Bücher.Example/spec.json#/paths", STRICT)
    assert str(c.url) == "http://xn--bcher-kva.example/spec.json"
    assert c.host == "xn--bcher-kva.example"
    assert c.insecure
    assert c.ip is None
    assert not check_url("https://example.com/", STRICT).insecure


# --------------------------------------------------------------------------- the SSRF table through the store


class SpyResolver:
    """Resolves every name to fixed addresses and remembers what it was asked."""

    def __init__(self, addresses: list[str]) -> None:
        self.addresses = addresses
        self.calls: list[tuple[str, int]] = []

    def resolve(self, host: str, port: int) -> list[str]:
        self.calls.append((host, port))
        return list(self.addresses)


class SpyConnector:
    """Records connection attempts and makes none: nothing leaves the machine."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def __call__(self, ip: str, port: int, timeout: float | None) -> httpcore.NetworkStream:
        self.calls.append((ip, port))
        raise httpcore.ConnectError("spy: no real connection is made")


def _store(tmp_path: Any, addresses: list[str], *, allow: bool) -> tuple[SpecStore, SpyResolver, SpyConnector]:
    cfg = Settings(cache_dir=tmp_path / "cache", allow_private_network=allow, timeout=5.0)
    resolver, connector = SpyResolver(addresses), SpyConnector()
    policy = AddressPolicy(allow_private=allow)
    transport = GuardedTransport(policy, resolver=resolver, connector=connector)
    return SpecStore(cfg, transport=transport, policy=policy), resolver, connector


@pytest.mark.parametrize(("label", "address", "reason"), REFUSED, ids=[r[0] for r in REFUSED])
def test_ssrf_table_hostname_resolving_to_each_class(tmp_path: Any, label: str, address: str, reason: str) -> None:
    """A name resolving to each non-public class is refused before any connection; allowed with the flag."""
    store, resolver, connector = _store(tmp_path / "strict", [address], allow=False)
    with store, pytest.raises(BlockedURLError) as info:
        store.get("https://specs.attacker.test/openapi.json")
    assert reason in str(info.value)
    assert "specs.attacker.test" in str(info.value)
    assert resolver.calls == [("specs.attacker.test", 443)]
    assert connector.calls == []

    store, resolver, connector = _store(tmp_path / "open", [address], allow=True)
    with store, pytest.raises(FetchError, match="spy: no real connection"):
        store.get("https://specs.attacker.test/openapi.json")
    assert connector.calls == [(address, 443)]


def test_one_bad_address_among_good_ones_refuses_the_host(tmp_path: Any) -> None:
    """A public and a private answer together are refused: the private one could win any fallback."""
    store, _resolver, connector = _store(tmp_path, ["93.184.215.14", "169.254.169.254"], allow=False)
    with store, pytest.raises(BlockedURLError, match=r"169\.254\.169\.254"):
        store.get("https://mixed.test/spec.json")
    assert connector.calls == []


@pytest.mark.parametrize(
    "url", ["http://2130706433/", "http://0x7f.1/", "http://017700000001/", "http://[::ffff:127.0.0.1]/"]
)
def test_numeric_tricks_are_refused_without_dns_or_connection(tmp_path: Any, url: str) -> None:
    """Numeric hosts never reach the resolver and never the network."""
    store, resolver, connector = _store(tmp_path, ["127.0.0.1"], allow=False)
    with store, pytest.raises(BlockedURLError, match=r"127\.0\.0\.1"):
        store.get(url)
    assert resolver.calls == []
    assert connector.calls == []


def test_the_connection_goes_to_the_vetted_address_resolved_once(tmp_path: Any) -> None:
    """No rebinding window: the host is resolved once and the socket opened to that very address."""
    answers = iter([["93.184.215.14"], ["127.0.0.1"]])

    class Rebinding(SpyResolver):
        def resolve(self, host: str, port: int) -> list[str]:
            self.calls.append((host, port))
            return next(answers)

    resolver, connector = Rebinding([]), SpyConnector()
    policy = AddressPolicy()
    store = SpecStore(
        Settings(cache_dir=tmp_path / "c", timeout=5.0),
        transport=GuardedTransport(policy, resolver=resolver, connector=connector),
    )
    with store, pytest.raises(FetchError, match="spy"):
        store.get("https://rebind.test/spec.json")
    assert resolver.calls == [("rebind.test", 443)]
    assert connector.calls == [("93.184.215.14", 443)]


def test_blocked_url_is_a_fetch_error_with_the_url(tmp_path: Any) -> None:
    """A refusal is a structured FetchError naming the URL and its code, for the access that needed it."""
    store, _, _ = _store(tmp_path, ["10.0.0.7"], allow=False)
    with store, pytest.raises(BlockedURLError) as info:
        store.get("https://intranet.test/spec.json")
    err = info.value
    assert isinstance(err, FetchError)
    assert err.url == "https://intranet.test/spec.json"
    assert err.code == "url-blocked"
