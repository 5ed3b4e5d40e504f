"""``vocalbench list systems|subsets|components``."""

from __future__ import annotations

import json

import pytest

from vocalbench import catalog
from vocalbench.cli import main
from vocalbench.commands.list_parts import rows


def test_subsets_per_language() -> None:
    en, zh = rows("subsets", "en"), rows("subsets", "zh")
    duplex = ["duplex/pause", "duplex/smooth", "duplex/interruption", "duplex/backchannel"]  # --subsets duplex
    assert [r["subset"] for r in en] == catalog.names("en") + duplex
    assert [r["subset"] for r in zh] == catalog.names("zh") + duplex
    assert next(r for r in en if r["subset"] == "duplex/smooth")["items"] >= 50
    assert next(r for r in en if r["subset"] == "knowledge")["items"] == 2000
    assert next(r for r in zh if r["subset"] == "dialect")["items"] is None  # our own set, no public data
    assert all(r["scoring"] for r in en + zh)


def test_components_and_systems_show_installed_and_extra(capsys: pytest.CaptureFixture[str]) -> None:
    comps = rows("components")
    kinds = {r["kind"] for r in comps}
    assert {"asr", "mos", "emotion", "judge"} <= kinds
    local = next(r for r in comps if r["kind"] == "judge" and r["name"] == "local")
    assert local["extra"] == "llm" and isinstance(local["installed"], bool)
    assert all(r["kind"] == "system" for r in rows("systems"))
    assert main(["list", "components", "--json"]) == 0
    lines = [json.loads(l) for l in capsys.readouterr().out.splitlines()]
    assert len(lines) == len(comps) and {"installed", "extra", "name"} <= set(lines[0])
    assert main(["list", "components"]) == 0
    assert "vocalbench[llm]" in capsys.readouterr().out  # the extra is shown literally, not eaten as markup
