"""The typed judge SPEC: parsed once, every kind, and a clear error for what is not one."""

from __future__ import annotations

import pytest

from vocalbench.judge.spec import JudgeSpec, JudgeState
from vocalbench.run_config import RunConfig


@pytest.mark.parametrize("text, fit, spec", [
    ("local", None, JudgeSpec("local")),
    (" local ", "f.json", JudgeSpec("local", fit="f.json")),
    ("local:old.json", None, JudgeSpec("local", fit="old.json")),  # the older spelling of --fit
    ("gguf:/m/q.gguf", None, JudgeSpec("gguf", model="/m/q.gguf")),
    ("local-json", None, JudgeSpec("local-json")),
    ("openai:gpt-4o-mini", None, JudgeSpec("openai", model="gpt-4o-mini")),
    ("openai:m@http://h:8000/v1", "f", JudgeSpec("openai", model="m", endpoint="http://h:8000/v1", fit="f")),
    ("paper", None, JudgeSpec("paper")),
    ("none", None, JudgeSpec("none")),
    ("off", None, JudgeSpec("none")),
])
def test_every_kind_parses_and_prints_back(text: str, fit: str | None, spec: JudgeSpec) -> None:
    parsed = JudgeSpec.parse(text, fit)
    assert parsed == spec
    assert JudgeSpec.parse(parsed.text, parsed.fit) == parsed  # the SPEC text round-trips


@pytest.mark.parametrize("text", ["", "gpt-4o", "gguf:", "openai:", "openai:@http://h/v1", "judge-b"])
def test_what_is_not_a_spec_is_named(text: str) -> None:
    with pytest.raises(ValueError, match=f"unknown judge SPEC '{text}'"):
        JudgeSpec.parse(text)


def test_no_judge_takes_no_fit_and_states_are_typed() -> None:
    with pytest.raises(ValueError, match="no judge to fit"):
        JudgeSpec.parse("none", "f.json")
    assert JudgeSpec.parse("paper").paper and JudgeSpec.parse("openai:qwen-max-2025-01-25@http://x/v1").paper
    assert not JudgeSpec.parse("openai:qwen-plus").paper and not JudgeSpec.parse("local").paper
    spec = RunConfig(judge="openai:m@http://h/v1", judge_fit="f.json").judge
    assert spec.key == "openai:m@http://h/v1 --fit f.json" and RunConfig(judge="none").judge.off
    assert JudgeState(spec, "m+cal-1@h").key == "m+cal-1@h"
    assert JudgeState(spec, unavailable="no server").key == "unavailable:openai:m@http://h/v1"
    assert JudgeState(JudgeSpec("none")).key == "none"


def test_a_judge_plugin_named_as_module_attr_is_built_by_the_factory(tmp_path: object,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``--judge module:attr``: a plug-in judge factory, called with the options every judge gets."""
    from pathlib import Path

    from vocalbench.components import clear
    from vocalbench.judge.factory import build_judge

    folder = Path(str(tmp_path))
    (folder / "my_judges.py").write_text(
        "class Strict:\n"
        "    def __init__(self, **opts):\n"
        "        self.id, self.opts = 'strict@mine', opts\n"
        "def factory(**opts):\n"
        "    return Strict(**opts)\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    spec = JudgeSpec.parse("my_judges:factory")
    assert (spec.kind, spec.text, spec.paper) == ("plugin", "my_judges:factory", False)
    assert JudgeSpec.parse(spec.text) == spec
    try:
        judge = build_judge(spec, concurrency=3)
        assert judge.id == "strict@mine" and judge.opts == {"concurrency": 3, "lazy": False}  # type: ignore[attr-defined]
    finally:
        clear()
