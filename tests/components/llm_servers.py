"""The llama.cpp servers of one cache that run now, read from /proc (shared by the drills of the
local server and of two runs on one cache)."""

from __future__ import annotations

from pathlib import Path


def servers(cache: Path) -> list[int]:
    """Pids of the running llama.cpp servers whose command line names ``cache`` (zombies excluded)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        state = stat[stat.rindex(")") + 2:].split()[0]
        if b"llama_cpp.server" in cmd and any(str(cache).encode() in a for a in cmd) and state not in ("Z", "X"):
            found.append(int(proc.name))
    return found
