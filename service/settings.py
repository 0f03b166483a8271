"""All configuration, from ``RLVR_*`` environment variables. Defaults serve the embedded mode."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RLVR_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)

    # Unset → SQLite file under data_dir (embedded mode). Postgres: postgresql+psycopg://…
    database_url: str | None = None
    data_dir: Path = Path("data")
    # Unset → verifications run in a local pool of worker processes (embedded mode).
    broker_url: str | None = None
    # Celery result backend; defaults to the broker (Redis).
    result_backend_url: str | None = None

    # Embedded pool size; 0 means one process per CPU.
    local_workers: int = Field(default=0, ge=0, le=256)
    # Items per task: whole groups are packed into chunks up to this size.
    chunk_size: int = Field(default=64, ge=1, le=4096)
    max_items_per_request: int = Field(default=4096, ge=1, le=65536)
    # Characters of completion / prompt stored in the decision log; hashes cover the full text.
    max_completion_chars: int = Field(default=1_000_000, ge=1)
    stored_text_cap: int = Field(default=65_536, ge=0)
    # Caps on one item (413 naming the field): prompt characters, and the characters of the
    # ground truth and metadata as compact JSON (code tests can be large; metadata is small).
    max_prompt_chars: int = Field(default=1_000_000, ge=1)
    max_ground_truth_chars: int = Field(default=8_388_608, ge=1)
    max_metadata_chars: int = Field(default=65_536, ge=2)
    # A request body larger than this is refused with 413 while it is read, before it is
    # buffered (Content-Length is checked first when sent). 4096 items of ~16 KB fit.
    max_body_bytes: int = Field(default=64 * 1024 * 1024, ge=1024)
    # Bounds on one verification, enforced by a killable child process: CPU seconds (the wall
    # clock ends a call at 2x this + 1 s) and memory.
    verify_timeout_s: float = Field(default=5.0, gt=0, le=600)
    verify_memory_mb: int = Field(default=1024, ge=64)
    # How long the API waits for a whole request before answering 503.
    request_timeout_s: float = Field(default=600.0, gt=0)

    # Capacity and fairness (service/limits). Sandboxed code has capacity of its own, so it
    # never delays cheap checks: the embedded sandbox pool's processes, and the sandbox
    # consumer's concurrency of `rlvr worker` (0: as many as the cpu side).
    sandbox_workers: int = Field(default=0, ge=0, le=256)
    # Items in flight per API process past which a request is answered 503 + Retry-After at
    # once instead of queueing (0: no limit). A request alone is always admitted.
    max_inflight_items: int = Field(default=16_384, ge=0)
    # The wait a new request's items would have behind those in flight, at the pace this API
    # process has been finishing items over the last 10 s, past which it is answered 503 +
    # Retry-After at once (0: no limit). A request alone is always admitted.
    max_queue_wait_s: float = Field(default=5.0, ge=0)
    # How late the API's event loop may run what is due, held over two ticks 0.1 s apart,
    # before new work requests are answered 503 + Retry-After at once (0: no limit): past it
    # the API process itself is the bottleneck and every request waits that long unseen.
    max_loop_lag_s: float = Field(default=1.0, ge=0)
    # How long a work request read whole may wait to be admitted (for its key's check, its
    # key's limits and one of the API's threads) before new work requests are answered 503 +
    # Retry-After at once (0: no limit).
    max_admission_wait_s: float = Field(default=1.0, ge=0)
    # Deployed: how long a request waits for a live worker on a queue that has none (a worker
    # restarting) before it is answered 503 + Retry-After instead of waiting for nobody.
    worker_wait_s: float = Field(default=30.0, ge=0)
    # `rlvr serve`: seconds an idle keep-alive connection stays open (longer than clients'
    # idle expiry, or a client reuses a connection as the server closes it), and connections
    # plus requests in progress past which uvicorn itself answers 503 (a last resort, far
    # above any burst a trainer sends).
    keep_alive_s: int = Field(default=75, ge=1)
    max_connections: int = Field(default=4096, ge=16)
    # A request's head must arrive within this many seconds of its first byte (of the
    # connection, for its first request), its body within the second figure of its head: a
    # connection that sends slower is closed (408 for a late head).
    request_head_timeout_s: float = Field(default=10.0, gt=0, le=3600)
    request_body_timeout_s: float = Field(default=60.0, gt=0, le=3600)
    # Per API key: requests per second (a token bucket of `rate_limit_burst`) and requests in
    # flight; past them 429 + Retry-After (0: no limit).
    rate_limit_rps: float = Field(default=200.0, ge=0)
    rate_limit_burst: int = Field(default=400, ge=1)
    max_concurrent_requests_per_key: int = Field(default=64, ge=0)
    # Sandbox seconds (a code item's budget: compile plus every test at its wall clock): at
    # most this much per request (413), and per tenant per minute (429 + Retry-After); the
    # unused part of a request's budget is given back when it completes (0: no limit).
    max_sandbox_s_per_request: float = Field(default=14_400.0, ge=0)
    max_sandbox_s_per_tenant_per_minute: float = Field(default=57_600.0, ge=0)
    # Celery workers beat this often in Redis; a worker silent for three beats is dead and the
    # tasks it held go back to their queue at once (not after the broker's visibility timeout).
    worker_heartbeat_s: float = Field(default=2.0, gt=0, le=60)

    # Where untrusted programs run: "local" (namespaces on this machine, a warm fork server)
    # or "docker" (a warm pool of locked-down containers of the runner image).
    sandbox_backend: Literal["local", "docker"] = "local"
    # Interpreter for Python programs inside the local sandbox; unset → the system python3.
    sandbox_python: str | None = None
    # The docker backend: runner image (scripts/build-sandbox-image.sh), warm containers per
    # worker process, a new container's memory limit (each run then sets its own), CPUs, pids.
    sandbox_docker_image: str = "rlvr-sandbox:bookworm"
    # Per-language images, JSON: '{"cpp": "rlvr-sandbox-cpp:bookworm"}'; others use the above.
    sandbox_docker_images: dict[str, str] = Field(default_factory=dict)
    sandbox_docker_pool: int = Field(default=2, ge=0, le=64)
    sandbox_docker_memory_mb: int = Field(default=1536, ge=128)
    sandbox_docker_cpus: float = Field(default=1.0, gt=0)
    sandbox_docker_pids: int = Field(default=64, ge=8)
    # How the host talks to a container's supervisor: "socket" (a unix socket bound into the
    # container, bypassing the engine; the attach stream where the engine cannot reach it) or
    # "attach" (always the engine's attach stream).
    sandbox_docker_channel: Literal["socket", "attach"] = "socket"

    log_level: str = "info"

    # An admin key (every scope) for the operator's tenant, created or replaced at start.
    # Unset in the embedded mode: the first start creates one and prints it once.
    bootstrap_admin_key: SecretStr | None = None
    # The operator's tenant: it owns the built-in verifiers and the bootstrap key.
    operator_tenant: str = Field(default="default", pattern=r"^[a-z0-9][a-z0-9_.-]{0,63}$")
    # Run health (GET /v1/runs/{run_id}/health): the last `health_window_steps` steps are
    # compared with the budgets below and with the window before them.
    health_window_steps: int = Field(default=10, ge=1, le=10_000)
    health_max_timeout_rate: float = Field(default=0.05, ge=0, le=1)
    health_max_error_rate: float = Field(default=0.01, ge=0, le=1)
    health_max_all_same_fraction: float = Field(default=0.8, ge=0, le=1)
    health_max_length_growth: float = Field(default=0.25, ge=0)
    health_max_flagged_rate: float = Field(default=0.02, ge=0, le=1)
    # A rejected numeric answer within this relative distance of the ground truth is queued
    # for review as "possibly correct".
    health_close_rel_tol: float = Field(default=0.01, gt=0, le=1)
    # Runs whose rlvr_run_health_warning series /metrics keeps: the ones checked last (a series
    # per warning kind each); an older run's series are removed when a new run is checked.
    run_health_gauge_runs: int = Field(default=200, ge=1)

    # The promotion gate: moving one of these aliases first runs the candidate over the
    # verifier's labelled inputs and canary cases; it is refused when a case is contradicted
    # or its timeout/error rate or p95 latency is worse than the current version's by more
    # than these margins.
    gated_aliases: list[str] = Field(default_factory=lambda: ["stable"])
    gate_max_rate_increase: float = Field(default=0.01, ge=0, le=1)
    gate_max_p95_ratio: float = Field(default=1.5, ge=1)
    gate_p95_floor_ms: float = Field(default=50.0, ge=0)

    # Experiments and replays (service/experiments): work off the hot path, on the "shadow" and
    # "replay" queues, consumed by one background consumer of `rlvr worker` with this many
    # processes at this niceness (embedded: one background process, niced alike).
    background_workers: int = Field(default=1, ge=1, le=64)
    background_nice: int = Field(default=10, ge=0, le=19)
    # Linux's SCHED_IDLE class as well: background work runs only on CPU nothing else wants.
    background_idle: bool = True
    # Shadow chunks waiting on the shadow queue (embedded: in the background pool) past which
    # shadow work is dropped and counted, and shadow chunks the API holds before it publishes
    # them: a shadow backlog never delays or fails a reward request.
    shadow_max_backlog: int = Field(default=2000, ge=1)
    shadow_buffer: int = Field(default=1024, ge=1)
    # Shadow work waits for a gap between reward requests: published once none has been in
    # flight in the API for this long, or at the latest this long after the request it shadows.
    shadow_quiet_s: float = Field(default=0.05, ge=0.0, le=10.0)
    shadow_defer_s: float = Field(default=2.0, ge=0.0, le=60.0)
    # Decisions one replay may re-score (per target), and how long a replay may make no
    # progress before reading it re-dispatches its work (a lost message, a dead worker).
    replay_max_decisions: int = Field(default=1_000_000, ge=1)
    replay_stall_s: float = Field(default=30.0, gt=0)

    # The servers OpenAI graders call: an OpenAI-compatible chat completions server for
    # score_model/label_model ("http://host:8001/v1") and an embeddings server for the cosine
    # metric. Unset: graders that need one are a 422 naming the setting.
    grader_model_url: str | None = None
    grader_embedding_url: str | None = None
    grader_embedding_model: str = "text-embedding-3-large"

    # Whether /metrics and the OpenAPI docs answer without a key.
    metrics_public: bool = True
    docs_public: bool = True

    @field_validator(
        "database_url",
        "broker_url",
        "result_backend_url",
        "sandbox_python",
        "grader_model_url",
        "grader_embedding_url",
        mode="before",
    )
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("bootstrap_admin_key", mode="before")
    @classmethod
    def _no_placeholder_key(cls, value: object) -> object:
        if value in (None, ""):
            return None
        text = value.get_secret_value() if isinstance(value, SecretStr) else str(value)
        if len(text) < 24 or len(set(text)) < 8 or "change" in text.lower():
            raise ValueError(
                "RLVR_BOOTSTRAP_ADMIN_KEY must be a random string of at least 24 characters "
                "(not a placeholder)"
            )
        return value

    @property
    def embedded(self) -> bool:
        return self.broker_url is None

    @property
    def sqlalchemy_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'rlvr.db').resolve()}"

    @property
    def pool_size(self) -> int:
        return self.local_workers or _CPUS


# Read once: os.cpu_count() reads /sys each call (~5 us), and the pools are sized at start.
_CPUS = os.cpu_count() or 1


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
