"""The connection layer under the URL guard (store/http.py): the system resolver is bounded by the exchange's
deadline and turns every failure into httpcore's ConnectError; the guarded backend refuses malformed numeric
hosts and unix sockets, and a connect timeout is not retried on the next address. Only `localhost` is ever
resolved (from the hosts file); no connection leaves the machine."""

from __future__ import annotations

import httpcore
import pytest

from ramscope.store import AddressPolicy
from ramscope.store.http import GuardedBackend, SystemResolver, _clamp, deadline


def test_the_system_resolver_answers_localhost_without_repeats() -> None:
    """getaddrinfo's answers, in order, each address once (it lists one per socket type)."""
    got = SystemResolver(timeout=5.0).resolve("localhost", 443)
    assert "127.0.0.1" in got
    assert len(got) == len(set(got))


def test_a_resolver_failure_is_a_connect_error_naming_the_host() -> None:
    """getaddrinfo's own error (here: an impossible port) is a ConnectError, not a crash in a thread."""
    with pytest.raises(httpcore.ConnectError) as info:
        SystemResolver(timeout=5.0).resolve("localhost", -1)
    assert str(info.value).startswith("cannot resolve localhost: ")


def test_no_time_left_means_no_wait_for_the_resolver() -> None:
    """Past the exchange's deadline the resolver is not waited for: ConnectTimeout at once."""
    with deadline(0.0), pytest.raises(httpcore.ConnectTimeout) as info:
        SystemResolver(timeout=5.0).resolve("localhost", 443)
    assert str(info.value) == "the total time allowed for this exchange ran out"


def test_clamp_keeps_the_smaller_of_timeout_and_time_left() -> None:
    """Without a deadline the timeout stands; within one, the smaller of the two."""
    assert _clamp(7.0, TimeoutError) == 7.0
    assert _clamp(None, TimeoutError) is None
    with deadline(1000.0):
        assert _clamp(7.0, TimeoutError) == 7.0
        left = _clamp(None, TimeoutError)
        assert left is not None
        assert 0 < left <= 1000.0


class _Connector:
    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls: list[str] = []

    def __call__(self, ip: str, port: int, timeout: float | None) -> httpcore.NetworkStream:
        self.calls.append(ip)
        raise self.error


class _Resolver:
    def resolve(self, host: str, port: int) -> list[str]:
        return ["93.184.215.14", "93.184.215.15"]


def test_a_malformed_numeric_host_is_a_connect_error_before_any_connection() -> None:
    """`1.2.3.4.5` reads as a number but is no address: refused, never resolved as a name."""
    connector = _Connector(httpcore.ConnectError("no"))
    transport = GuardedBackend(AddressPolicy(), _Resolver(), connector)
    with pytest.raises(httpcore.ConnectError) as info:
        transport.connect_tcp("1.2.3.4.5", 443)
    assert str(info.value) == "'1.2.3.4.5' reads as a number but has more than four parts"
    assert connector.calls == []


def test_a_connect_timeout_is_not_retried_on_the_next_address() -> None:
    """A timeout spends the exchange's time: it is raised at once; a refused connection tries the next address."""
    slow = _Connector(httpcore.ConnectTimeout("slow"))
    with pytest.raises(httpcore.ConnectTimeout):
        GuardedBackend(AddressPolicy(), _Resolver(), slow).connect_tcp("h.test", 443)
    assert slow.calls == ["93.184.215.14"]
    refused = _Connector(httpcore.ConnectError("refused"))
    with pytest.raises(httpcore.ConnectError) as info:
        GuardedBackend(AddressPolicy(), _Resolver(), refused).connect_tcp("h.test", 443)
    assert refused.calls == ["93.184.215.14", "93.184.215.15"]
    assert str(info.value) == "cannot connect to h.test (93.184.215.14, 93.184.215.15): refused"


def test_unix_sockets_are_never_used() -> None:
    """A spec URL never reaches a unix socket, whatever asks for one."""
    transport = GuardedBackend(AddressPolicy(), _Resolver(), _Connector(OSError()))
    with pytest.raises(httpcore.ConnectError) as info:
        transport.connect_unix_socket("/var/run/docker.sock")
    assert str(info.value) == "unix sockets are never used for spec URLs"
    transport.sleep(0)
