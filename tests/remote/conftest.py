"""Fixtures of the agent-side remote tests: each real broker (skips with the reason when absent, fails
under CI=true), a queue name of its own per test (so tests never see each other's messages), and TCP
proxies that play a broker going down and coming back."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator

import pytest
from forwarder_helpers import BROKERS, Broker, TcpProxy, free_port


@pytest.fixture(params=sorted(BROKERS))
def broker(request: pytest.FixtureRequest) -> Broker:
    """Each real broker in turn (RabbitMQ, Redis)."""
    return Broker(request.param)


@pytest.fixture
def rabbitmq() -> Broker:
    return Broker("rabbitmq")


@pytest.fixture
def queue_name(request: pytest.FixtureRequest) -> Iterator[str]:
    """A queue name no other test uses; its queues are deleted afterwards on the broker the test used."""
    name = f"agentevals_test_{uuid.uuid4().hex[:12]}"
    yield name
    for fixture in ("broker", "rabbitmq"):
        if fixture in request.fixturenames:
            used: Broker = request.getfixturevalue(fixture)
            with contextlib.suppress(Exception):
                used.delete(name)


@pytest.fixture
def proxy_to() -> Iterator[Callable[[int], TcpProxy]]:
    """``proxy_to(target_port)``: a stopped proxy on a free port (start it in the test); stopped after."""
    made: list[TcpProxy] = []

    def make(target: int) -> TcpProxy:
        made.append(TcpProxy(free_port(), target))
        return made[-1]

    yield make
    for proxy in made:
        proxy.stop()
