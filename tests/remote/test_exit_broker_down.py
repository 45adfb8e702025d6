"""With the broker down and a spool, the exit (interpreter exit, SIGTERM, ``shutdown()``) returns as soon
as every run is in the spool, not after ``exit_timeout`` (a pod's grace period is 30 s); the next start
publishes them once the broker is back. The bounds are far from any real duration: they tell "returned
once spooled" from "waited for the timeout", not how fast."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

from forwarder_helpers import Broker, TcpProxy, free_port

from agentevals import Run, ScoringEngine, create_scorer
from agentevals.engine import BrokerOptions

_SCORER = create_scorer(id="s").generate_score(lambda run, **_: 1.0)
_TIMEOUT = 60.0  # the exit's timeout; an exit that waits for it takes at least this long
_PROMPTLY = 20.0  # an exit that did not wait for it returns well before

_AGENT = textwrap.dedent(
    """
    import sys
    from agentevals import Run, ScoringEngine, create_scorer
    from agentevals.engine import BrokerOptions, ExitOptions

    url, queue, spool = sys.argv[1], sys.argv[2], sys.argv[3]
    scorer = create_scorer(id="s").generate_score(lambda run, **_: 1.0)
    engine = ScoringEngine(
        [scorer], broker=BrokerOptions(url, queue=queue, spool=spool), exit=ExitOptions(timeout=60.0)
    )
    for i in range(20):
        assert engine.submit(Run(run_id=f"r{i}", input="q", output="a"))
    print("submitted", flush=True)
    # the interpreter exits here: the engine's exit hook flushes within ExitOptions.timeout
    """
)


def _published_after_restart(rabbitmq: Broker, queue_name: str, spool: Path, proxy: TcpProxy) -> list[str]:
    proxy.start()  # the broker is back
    engine = ScoringEngine(
        [_SCORER], broker=BrokerOptions(rabbitmq.url_via(proxy.port), queue=queue_name, spool=spool)
    )
    assert engine.stats().recovered == 20
    report = engine.flush(60)
    assert report.completed and report.published == 20
    assert engine.shutdown()
    return sorted(remote.run.run_id for remote in rabbitmq.drain_runs(queue_name))


def test_shutdown_returns_once_the_runs_are_spooled(
    rabbitmq: Broker, queue_name: str, tmp_path: Path, proxy_to: Callable[[int], TcpProxy]
) -> None:
    proxy = proxy_to(rabbitmq.port)  # not started: a closed port, as a broker that is down
    spool = tmp_path / "spool.db"
    engine = ScoringEngine(
        [_SCORER], broker=BrokerOptions(rabbitmq.url_via(proxy.port), queue=queue_name, spool=spool)
    )
    for i in range(20):
        engine.submit(Run(run_id=f"r{i}", input="q", output="a"))
    started = time.monotonic()
    report = engine.shutdown(_TIMEOUT)
    assert time.monotonic() - started < _PROMPTLY
    assert not report.completed and report.pending == 20 and report.abandoned == 0
    stats = engine.stats()
    assert (stats.spooled, stats.published, stats.forwarding) == (20, 0, 20)
    assert stats.unbalanced() == []
    assert _published_after_restart(rabbitmq, queue_name, spool, proxy) == sorted(f"r{i}" for i in range(20))


def test_the_interpreter_exit_returns_once_the_runs_are_spooled(
    rabbitmq: Broker, queue_name: str, tmp_path: Path, proxy_to: Callable[[int], TcpProxy]
) -> None:
    proxy = proxy_to(rabbitmq.port)
    spool = tmp_path / "spool.db"
    started = time.monotonic()
    agent = subprocess.run(
        [sys.executable, "-c", _AGENT, rabbitmq.url_via(proxy.port), queue_name, str(spool)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        timeout=_TIMEOUT + 60,
    )
    assert agent.returncode == 0, agent.stderr
    assert time.monotonic() - started < _PROMPTLY, agent.stderr
    assert "stay in spool" in agent.stderr
    assert _published_after_restart(rabbitmq, queue_name, spool, proxy) == sorted(f"r{i}" for i in range(20))


def test_without_a_spool_the_exit_still_waits_for_the_broker(tmp_path: Path) -> None:
    """Runs held in memory are not safe: a shutdown gives the broker its time before abandoning them."""
    engine = ScoringEngine([_SCORER], broker=f"amqp://guest:guest@127.0.0.1:{free_port()}/")
    engine.submit(Run(run_id="r", input="q", output="a"))
    started = time.monotonic()
    report = engine.shutdown(2.0)
    assert time.monotonic() - started >= 2.0
    assert report.abandoned == 1
