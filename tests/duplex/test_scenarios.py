"""The duplex scenario scripts: counts per kind and language, seeded timing within its ranges."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from vocalbench.duplex import scenarios as S


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_full_set_has_50_per_kind_and_mini_a_few(lang: str) -> None:
    full = Counter(s.kind for s in S.read_scripts(lang, "full"))
    assert set(full) == set(S.KINDS) and min(full.values()) >= 50
    mini = S.read_scripts(lang, "mini")
    assert Counter(s.kind for s in mini) == {k: S.MINI_PER_KIND for k in S.KINDS}
    assert [s.id for s in mini][:2] == ["pause-001", "pause-002"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_gaps_follow_each_kind(lang: str) -> None:
    for s in S.read_scripts(lang, "full"):
        g = S.gaps(s)
        assert len(g) == len(s.parts) - 1
        lo, hi = {"pause": (1.0, 3.0), "interruption": (5.5, 7.0), "backchannel": (0.3, 0.8)}.get(s.kind, (0, 0))
        assert all(lo <= x <= hi for x in g), (s.id, g)
        assert S.gaps(s) == g  # seeded: the same every time


def test_a_malformed_script_names_its_file_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "en").mkdir()
    for kind in S.KINDS:
        (tmp_path / "en" / f"{kind}.txt").write_text("# comment\nonly one part\n", encoding="utf-8")
    monkeypatch.setattr(S, "scripts_file", lambda lang, kind: tmp_path / lang / f"{kind}.txt")
    with pytest.raises(ValueError, match=r"pause.txt:2: a pause scenario has 2-2 parts"):
        S.read_scripts("en")
