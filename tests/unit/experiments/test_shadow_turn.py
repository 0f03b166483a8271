"""Shadow work waits its turn: published in a gap between reward requests, or once its
deferral is up when the rewards never pause."""

from __future__ import annotations

import threading
import time
import uuid

from service.contract import ChunkRequest
from service.execution.background import ShadowDispatcher
from service.execution.shadow import ShadowJob
from service.limits.policy import Limits
from service.limits.store import MemoryStore
from service.settings import Settings
from service.verifiers.registry import VerifierVersionSpec


class RecordingSink:
    """The broker's side of the dispatcher: what was handed over, and when."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, float]] = []
        self.arrived = threading.Event()

    def backlog_full(self) -> bool:
        return False

    def send_shadow(self, job: ShadowJob) -> None:
        self.sent.append((job.experiment_id, time.monotonic()))
        self.arrived.set()

    def kick_replay(self, replay_id: uuid.UUID) -> None:
        raise AssertionError("no replay here")

    def close(self) -> None:
        pass


def _settings(**overrides: object) -> Settings:
    return Settings(broker_url=None, **overrides)  # type: ignore[arg-type]


def _job() -> ShadowJob:
    spec = VerifierVersionSpec(
        name="math", version="1.1.0", kind="math", config={}, code_version="1", library_versions={}
    )
    chunk = ChunkRequest(
        tenant_id="t1",
        request_id="r1",
        run_id=None,
        step=None,
        verifier=spec,
        timeout_s=5.0,
        items=(),
    )
    return ShadowJob(str(uuid.uuid4()), chunk, (), ())


def _dispatcher(settings: Settings, limits: Limits) -> tuple[ShadowDispatcher, RecordingSink]:
    sink = RecordingSink()
    dispatcher = ShadowDispatcher(settings, sink)
    dispatcher.yield_to(limits.wait_quiet)
    dispatcher.flush = lambda: None  # type: ignore[method-assign]  # no experiment rows here
    return dispatcher, sink


def test_quiet_waits_for_the_request_in_flight_and_its_quiet_time() -> None:
    limits = Limits(_settings(), MemoryStore())
    with limits.admit(4):
        # In flight until the deadline: not quiet.
        assert limits.wait_quiet(0.0, time.monotonic() + 0.05) is False
    finished = time.monotonic()
    assert limits.wait_quiet(0.1, finished + 30) is True
    assert time.monotonic() - finished >= 0.1  # the quiet time was waited for


def test_a_waiter_is_woken_when_the_last_request_ends() -> None:
    limits = Limits(_settings(), MemoryStore())
    answers: list[bool] = []
    entered = threading.Event()
    release = threading.Event()

    def request() -> None:
        with limits.admit(1):
            entered.set()
            release.wait(30)

    holder = threading.Thread(target=request)
    holder.start()
    entered.wait(30)
    waiter = threading.Thread(
        target=lambda: answers.append(limits.wait_quiet(0.0, time.monotonic() + 60))
    )
    waiter.start()
    time.sleep(0.05)
    assert answers == []  # still in flight
    release.set()
    holder.join(30)
    waiter.join(30)
    assert answers == [True]  # woken by the end of the request, long before its deadline


def test_shadow_work_is_held_while_a_reward_request_runs_and_sent_after_it() -> None:
    limits = Limits(_settings(), MemoryStore())
    dispatcher, sink = _dispatcher(_settings(shadow_quiet_s=0.0, shadow_defer_s=60.0), limits)
    try:
        with limits.admit(16):
            dispatcher.offer([_job()], "math")
            assert not sink.arrived.wait(0.3)  # held while the request is in flight
            ended = time.monotonic()
        assert sink.arrived.wait(30)
        assert sink.sent[0][1] >= ended
    finally:
        dispatcher.close()


def test_shadow_work_goes_out_when_its_deferral_is_up_even_if_rewards_never_pause() -> None:
    limits = Limits(_settings(), MemoryStore())
    dispatcher, sink = _dispatcher(_settings(shadow_quiet_s=0.0, shadow_defer_s=0.2), limits)
    try:
        with limits.admit(16):
            offered = time.monotonic()
            dispatcher.offer([_job()], "math")
            assert sink.arrived.wait(30)  # sent while the request is still in flight
            assert sink.sent[0][1] - offered >= 0.2
    finally:
        dispatcher.close()
