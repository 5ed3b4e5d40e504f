"""``--executor ray``: the same run with the system held in a Ray actor.

The driver keeps the one event loop, the retries, the limits and the run store; each attempt is
a call to an async ``SystemActor`` that holds the system (for a cascade: its ASR, TTS and LLM
client, loaded once) and times it with the same harness. Results (text, audio, timings) come
back to the driver, which writes them into the run store as they arrive.

Ray start follows OFFLINE.md: ``RAY_USAGE_STATS_ENABLED=0``, ``RAY_AUTH_MODE=disabled``, ``HOME``
pointing at a folder holding ``ray_bootstrap_config.yaml`` with ``provider: {type: local}``,
``_node_ip_address="127.0.0.1"``, no dashboard, and ``VOCALBENCH_CACHE`` set explicitly so model
caches stay outside that HOME.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from vocalbench.config import RunConfig, cache_dir
from vocalbench.records import ErrorInfo, Sample
from vocalbench.systems.base import Collected
from vocalbench.systems.options import SystemOptions

_SAVED_ENV: dict[str, str | None] = {}


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


def start_ray(address: str | None = None, num_cpus: int | None = None) -> None:
    """Start (or connect to) Ray on loopback only; idempotent."""
    env = ray_env()
    for k, v in env.items():
        _SAVED_ENV.setdefault(k, os.environ.get(k))
        os.environ[k] = v
    import ray

    if ray.is_initialized():
        return
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                              "runtime_env": {"env_vars": {k: env[k] for k in ("RAY_USAGE_STATS_ENABLED",
                                                                               "VOCALBENCH_CACHE")}}}
    if address:
        ray.init(address=address, **kwargs)
    else:
        ray.init(_node_ip_address="127.0.0.1", num_cpus=num_cpus or max(2, os.cpu_count() or 2), **kwargs)


def stop_ray() -> None:
    """Shut Ray down and restore the driver's environment."""
    import ray

    if ray.is_initialized():
        ray.shutdown()
    for k, v in _SAVED_ENV.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    _SAVED_ENV.clear()


class SystemActor:
    """Holds one system inside a Ray worker and runs timed attempts on it (an async actor)."""

    def __init__(self, spec: str, options: dict[str, Any], timeout: float, stall_timeout: float) -> None:
        from vocalbench.systems import resolve

        self.system = resolve(spec, SystemOptions(**options))
        self.timeout = timeout
        self.stall_timeout = stall_timeout

    async def start(self) -> dict[str, Any]:
        await self.system.start()
        return self.system.describe()

    async def attempt(self, sample_json: str) -> Collected:
        from vocalbench.systems.base import collect

        return await collect(self.system, Sample.model_validate_json(sample_json), self.timeout, self.stall_timeout)

    async def close(self) -> None:
        await self.system.close()


class RayExecutor:
    """Executor whose attempts run in a ``SystemActor``; the driver stays the single writer."""

    def __init__(self, spec: str, options: SystemOptions, cfg: RunConfig) -> None:
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
        self.actor: Any = None
        self._describe: dict[str, Any] = {}

    async def start(self) -> None:
        import ray

        start_ray(self.cfg.ray_address)
        actor_cls = ray.remote(SystemActor)
        self.actor = actor_cls.options(max_concurrency=max(2, self.cfg.concurrency + 1), num_cpus=1).remote(
            self.spec, asdict(self.options), self.cfg.request_timeout, self.cfg.stall_timeout)
        self._describe = await self.actor.start.remote()

    async def attempt(self, sample: Sample) -> Collected:
        import ray

        try:
            collected: Collected = await self.actor.attempt.remote(sample.model_dump_json())
            return collected
        except ray.exceptions.RayError as exc:  # the actor or its worker died: recorded, retried
            msg = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
            return Collected(error=ErrorInfo(type="executor_error", message=f"{type(exc).__name__}: {msg}"),
                             retryable=True)

    async def close(self) -> None:
        import ray

        if self.actor is not None:
            try:
                await self.actor.close.remote()
            finally:
                ray.kill(self.actor)
                self.actor = None
        stop_ray()  # a local Ray stops; on a cluster the driver disconnects

    def describe(self) -> dict[str, Any]:
        return {"executor": "ray", "ray_address": "local" if not self.cfg.ray_address else "<cluster>",
                "system": self._describe}
