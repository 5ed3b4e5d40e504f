"""The system SPEC, typed: ``--system SPEC`` parsed once into a :class:`SystemSpec` (its kind must be
a registered system kind, :data:`vocalbench.systems.KINDS`); what ``RunConfig.system`` holds. A run
of imported outputs names its system by a label that runs nothing (``LLaMA-Omni``,
``imported:NAME``): :meth:`SystemSpec.read` takes either."""

from __future__ import annotations

from dataclasses import dataclass

from vocalbench import parts
from vocalbench.config import is_local_system


@dataclass(frozen=True)
class SystemSpec:
    """Which system: its registered ``kind`` and the ``arg`` after the first ``:`` (a model, a URL,
    a cascade's parts, a script file), as recorded on disk (endpoint URLs shown as ``<url>``); kind
    ``""``: the label of imported outputs (``arg``), no system to run."""

    kind: str
    arg: str = ""

    @classmethod
    def read(cls, text: str) -> SystemSpec:
        """A run's recorded system: a SPEC of a registered kind, else the label of imported outputs."""
        try:
            return cls.parse(text)
        except ValueError:
            return cls("", text.strip())

    @classmethod
    def parse(cls, text: str) -> SystemSpec:
        """``--system`` as a spec; ValueError naming the SPEC and the known kinds when it is not one."""
        kind, _, arg = text.strip().partition(":")
        try:
            parts.get("system", kind)
        except KeyError as exc:
            named = parts.direct("system", text)  # a plug-in factory named as module:attr[:ARG]
            if named is None:
                raise ValueError(f"unknown system '{text}': {exc.args[0]}") from None
            if named[0].problem:
                raise ValueError(f"unknown system '{text}': {exc.args[0]}; as a module:attr factory it "
                                 f"cannot be loaded: {named[0].problem}") from None
            return cls(named[0].name, named[1])
        return cls(kind, arg)

    @property
    def text(self) -> str:
        """The SPEC itself (what ``--system`` takes), or an imported run's label."""
        if not self.kind:
            return self.arg
        return f"{self.kind}:{self.arg}" if self.arg else self.kind

    @property
    def local(self) -> bool:
        """A local cascade (one llama.cpp slot and the CPU): :func:`vocalbench.config.is_local_system`."""
        return is_local_system(self.text)

    def __str__(self) -> str:
        return self.text
