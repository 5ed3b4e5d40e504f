"""The runner tests share the systems tests' fixtures (real wavs, scripts, served systems)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("vocalbench_systems_fixtures",
                                               Path(__file__).resolve().parent.parent / "systems" / "conftest.py")
assert _spec is not None and _spec.loader is not None
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)

make_wav = _fixtures.make_wav
make_samples = _fixtures.make_samples
write_script = _fixtures.write_script
script = _fixtures.script
samples = _fixtures.samples
served = _fixtures.served
