"""``--executor ray``: the same run with the system held in Ray actors, ``--replicas N`` of them.

The driver keeps the one event loop, the retries, the limits and the run store; each attempt is
a call to one of N async ``SystemActor`` replicas (each holds the system, for a cascade its ASR,
TTS and LLM client, loaded once, with its own ``--ray-num-cpus``/``--ray-num-gpus``) and is timed
inside the replica with the same harness. Results (text, audio, timings) come back to the driver,
which writes them into the run store as they arrive. A replica whose worker dies is replaced and
the attempts it held are sent again to a live replica (:class:`ActorPool`), so nothing is lost,
and the store's one row per sample means nothing is written twice.

Ray start follows OFFLINE.md: ``RAY_USAGE_STATS_ENABLED=0``, ``RAY_AUTH_MODE=disabled``, ``HOME``
pointing at a folder holding ``ray_bootstrap_config.yaml`` with ``provider: {type: local}``,
``_node_ip_address="127.0.0.1"`` with Ray's single-node mode on (else Ray 2.60 swaps it for the
address of the default route), no dashboard, and ``VOCALBENCH_CACHE`` set explicitly so model
caches stay outside that HOME.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from pydantic import JsonValue

from vocalbench.config import cache_dir
from vocalbench.limits import ReplyLimits
from vocalbench.records import ErrorInfo, Sample
from vocalbench.run_config import RunConfig
from vocalbench.systems.base import Collected
from vocalbench.systems.options import SystemOptions

log = logging.getLogger(__name__)

_SAVED_ENV: dict[str, str | None] = {}
_SAVED_CLUSTER_MODE: dict[str, bool] = {}
SINGLE_NODE = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # "0": Ray's single-node mode, loopback only
RESENDS = 2  # times one call is sent again after the replica holding it died


def ray_home() -> Path:
    """A HOME for Ray holding ``ray_bootstrap_config.yaml`` (provider: local)."""
    home = cache_dir() / "ray-home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "ray_bootstrap_config.yaml").write_text("provider: {type: local}\n")
    return home


def ray_env() -> dict[str, str]:
    """The environment every Ray process gets (driver, raylet, workers)."""
    cache = str(cache_dir().resolve())  # resolved before HOME moves
    return {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled", "HOME": str(ray_home()),
            "VOCALBENCH_CACHE": cache}


def start_ray(address: str | None = None, num_cpus: float | None = None) -> bool:
    """Start (or connect to) Ray on loopback only; False when this process was already connected
    (whoever connected it stops it). A local Ray offers at least ``num_cpus`` logical CPUs, so the
    replicas asked for fit on it."""
    import ray

    if ray.is_initialized():
        return False
    env = ray_env() if address else {**ray_env(), SINGLE_NODE: "0"}
    for k, v in env.items():
        _SAVED_ENV.setdefault(k, os.environ.get(k))
        os.environ[k] = v
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                              "runtime_env": {"env_vars": {k: env[k] for k in ("RAY_USAGE_STATS_ENABLED",
                                                                               "VOCALBENCH_CACHE")}}}
    if address:
        ray.init(address=address, **kwargs)
    else:
        _single_node(True)
        cpus = max(2, os.cpu_count() or 2, int(-(-(num_cpus or 0) // 1)))
        ray.init(_node_ip_address="127.0.0.1", num_cpus=cpus, **kwargs)
    return True


def _single_node(on: bool) -> None:
    """Ray 2.60 swaps a loopback ``_node_ip_address`` for the address of the default route (and
    every Ray process then listens there) unless its single-node mode is on, which it reads from
    ``SINGLE_NODE`` once, at import: set here for this process too, and undone by :func:`stop_ray`."""
    from ray._private import ray_constants

    if on:
        _SAVED_CLUSTER_MODE.setdefault("on", ray_constants.ENABLE_RAY_CLUSTER)
        ray_constants.ENABLE_RAY_CLUSTER = False
    elif "on" in _SAVED_CLUSTER_MODE:
        ray_constants.ENABLE_RAY_CLUSTER = _SAVED_CLUSTER_MODE.pop("on")


def stop_ray() -> None:
    """Shut Ray down and restore the driver's environment."""
    import ray

    if ray.is_initialized():
        ray.shutdown()
    _single_node(False)
    for k, v in _SAVED_ENV.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    _SAVED_ENV.clear()


@dataclass(frozen=True)
class Resources:
    """How many actors of one kind and what each one reserves on the cluster."""

    replicas: int = 1
    num_cpus: float = 1.0
    num_gpus: float = 0.0

    def __post_init__(self) -> None:
        if self.replicas < 1 or self.num_cpus < 0 or self.num_gpus < 0:
            raise ValueError(f"replicas must be >= 1 and resources >= 0, got {self}")

    @property
    def total_cpus(self) -> float:
        return self.replicas * self.num_cpus


class Placement(TypedDict):
    """Where an actor runs: its worker's pid, Ray node id and node address."""

    pid: int
    node: str
    ip: str


class SystemStarted(Placement):
    """A started :class:`SystemActor`: where it runs and its system's ``describe()``."""

    system: dict[str, JsonValue]


def placement() -> Placement:
    """Where the calling actor runs: its worker's pid, Ray node id and node address."""
    import ray

    return {"pid": os.getpid(), "node": ray.get_runtime_context().get_node_id(), "ip": ray.util.get_node_ip_address()}


@dataclass
class _Replica:
    """One slot of a pool: its current actor, the calls it holds and its ``start`` result (a Ray
    object reference, awaited before each call)."""

    actor: Any
    ready: Any
    inflight: int = 0
    generation: int = 0


@dataclass
class ActorPool:
    """N actors of one class behind least-loaded dispatch; a dead actor is replaced in its slot
    and the calls it held are sent again (up to :data:`RESENDS` times each)."""

    make: Callable[[], Any]  # a new actor handle (its ``start`` method is called before use)
    size: int
    name: str
    replaced: int = 0
    _slots: list[_Replica] = field(default_factory=list)

    def begin(self) -> list[Any]:
        """Create the actors; the references of their ``start`` results."""
        self._slots = [self._new() for _ in range(self.size)]
        return [r.ready for r in self._slots]

    async def start(self) -> list[dict[str, Any]]:
        """Create the actors and wait until every one has started; their ``start`` results."""
        return list(await asyncio.gather(*self.begin()))

    def _new(self, generation: int = 0) -> _Replica:
        actor = self.make()
        return _Replica(actor, actor.start.remote(), generation=generation)

    async def call(self, method: str, *args: Any) -> Any:
        """``actor.method(*args)`` on the least-loaded live actor."""
        import ray

        for sent in range(RESENDS + 1):
            slot = min(range(len(self._slots)), key=lambda i: self._slots[i].inflight)
            r = self._slots[slot]
            r.inflight += 1
            try:
                await r.ready
                return await getattr(r.actor, method).remote(*args)
            except ray.exceptions.RayActorError as exc:
                self._replace(slot, r.generation)
                if sent == RESENDS:
                    raise
                log.warning("%s replica %d died (%s); sending the call again", self.name, slot,
                            type(exc).__name__)
            finally:
                r.inflight -= 1
        raise AssertionError("unreachable")

    def _replace(self, slot: int, generation: int) -> None:
        """A new actor in ``slot`` unless another caller already replaced that generation."""
        import ray

        old = self._slots[slot]
        if old.generation != generation:
            return
        ray.kill(old.actor, no_restart=True)
        self._slots[slot] = self._new(generation + 1)
        self.replaced += 1

    async def placements(self) -> list[dict[str, Any]]:
        """The ``start`` result of each live actor (its pid and node among them)."""
        return list(await asyncio.gather(*(r.ready for r in self._slots)))

    async def close(self, method: str | None = None) -> None:
        """Call ``method`` (a clean shutdown) on each actor, then kill them all."""
        import ray

        for r in self._slots:
            try:
                if method is not None:
                    await getattr(r.actor, method).remote()
            except ray.exceptions.RayError as exc:
                log.warning("%s: closing a replica failed: %s", self.name, type(exc).__name__)
            finally:
                ray.kill(r.actor)
        self._slots = []


class SystemActor:
    """Holds one system inside a Ray worker and runs timed attempts on it (an async actor), under
    the run's reply limits (``--max-reply-chars``, ``--max-reply-audio-seconds``)."""

    def __init__(self, spec: str, options: SystemOptions, timeout: float, stall_timeout: float,
                 limits: ReplyLimits) -> None:
        from vocalbench.systems import resolve

        self.system = resolve(spec, options)
        self.timeout = timeout
        self.stall_timeout = stall_timeout
        self.limits = limits

    async def start(self) -> SystemStarted:
        await self.system.start()
        return {**placement(), "system": self.system.describe()}

    async def attempt(self, sample_json: str) -> Collected:
        from vocalbench.systems.base import collect

        return await collect(self.system, Sample.model_validate_json(sample_json), self.timeout, self.stall_timeout,
                             self.limits)

    async def close(self) -> None:
        await self.system.close()


class RayExecutor:
    """Executor whose attempts run on a pool of ``SystemActor`` replicas; the driver stays the
    single writer. ``--concurrency`` holds per replica: N replicas take N times the calls."""

    def __init__(self, spec: str, options: SystemOptions, cfg: RunConfig, resources: Resources | None = None) -> None:
        import importlib.util

        from vocalbench.errors import MissingDependency
        from vocalbench.systems import resolve

        if importlib.util.find_spec("ray") is None:
            raise MissingDependency("the ray executor", "ray", "ray")

        probe = resolve(spec, options)  # validates the SPEC here, before Ray starts
        self.resource = probe.resource
        self.spec = spec
        self.options = options
        self.cfg = cfg
        self.resources = resources or Resources()
        self.slots = self.resources.replicas
        self.pool: ActorPool | None = None
        self.replaced = 0  # replicas replaced after their worker died
        self._owns_ray = False
        self._describe: dict[str, JsonValue] = {}

    async def start(self) -> None:
        import ray

        self._owns_ray = start_ray(self.cfg.ray_address, self.resources.total_cpus)
        actor_cls = ray.remote(SystemActor)
        per = self.resources
        args = (self.spec, self.options, self.cfg.request_timeout, self.cfg.stall_timeout,
                self.cfg.reply_limits)
        width = max(self.cfg.concurrency, self.cfg.latency_concurrency)

        def make() -> Any:
            return actor_cls.options(max_concurrency=width + 1, num_cpus=per.num_cpus,
                                     num_gpus=per.num_gpus).remote(*args)

        self.pool = ActorPool(make, per.replicas, "system")
        started = await self.pool.start()
        self._describe = started[0]["system"]

    async def attempt(self, sample: Sample) -> Collected:
        import ray

        assert self.pool is not None, "start() first"
        try:
            collected: Collected = await self.pool.call("attempt", sample.model_dump_json())
            return collected
        except ray.exceptions.RayError as exc:  # no live replica could take it: recorded, retried
            msg = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
            return Collected(error=ErrorInfo(type="executor_error", message=f"{type(exc).__name__}: {msg}"),
                             retryable=True)

    async def close(self) -> None:
        if self.pool is not None:
            try:
                await self.pool.close("close")
            finally:
                self.replaced, self.pool = self.pool.replaced, None
        if self._owns_ray:
            stop_ray()  # a local Ray stops; on a cluster the driver disconnects

    def describe(self) -> dict[str, JsonValue]:
        return {"executor": "ray", "ray_address": "local" if not self.cfg.ray_address else "<cluster>",
                "replicas": self.resources.replicas, "num_cpus": self.resources.num_cpus,
                "num_gpus": self.resources.num_gpus, "replaced": self.replaced, "system": self._describe}
