"""RunConfig: the one place for defaults and system-kind policies; config.json keys are checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vocalbench.run_config import RunConfig, saved_records


def test_options_not_given_take_the_config_defaults_and_policies() -> None:
    local = RunConfig.from_options(system="offline", judge=None, max_attempts=None)
    assert (local.concurrency, local.max_reply_tokens, local.judge.text, local.max_attempts) == (1, 64, "local", 4)
    net = RunConfig.from_options(system="openai-audio:gpt-4o", concurrency=3)
    assert (net.concurrency, net.max_reply_tokens) == (3, 1024)
    # one source of the system kind's defaults: a config built directly agrees with the flags' one
    assert RunConfig(system="offline") == local and RunConfig(system="openai-audio:gpt-4o").concurrency == 8
    # an imported run records no reply cap (its replies were not generated here)
    assert RunConfig(system="imported:x", max_reply_tokens=None).max_reply_tokens is None


def test_unknown_config_keys_are_an_error(tmp_path: Path) -> None:
    cfg = RunConfig(system="s", judge="none")
    cfg.save(tmp_path, extra={"versions": {"vocalbench": "0.1.0"}, "imported_from": "/x"})
    assert RunConfig.load(tmp_path) == cfg
    assert saved_records(tmp_path) == {"versions": {"vocalbench": "0.1.0"}, "imported_from": "/x"}
    body = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**body, "judge_concurency": 4}))
    with pytest.raises(ValueError, match="unknown key.*judge_concurency"):
        RunConfig.load(tmp_path)


def test_specs_are_parsed_once_at_the_field_and_saved_as_given(tmp_path: Path) -> None:
    from pydantic import ValidationError

    from vocalbench.components.base import ComponentSpec
    from vocalbench.judge.spec import JudgeSpec
    from vocalbench.systems.spec import SystemSpec

    cfg = RunConfig(system="openai-audio:gpt-4o@<url>", judge="openai:m@http://h/v1", judge_fit="f.json",
                    asr="offline:official", mos="paper", emotion="none")
    assert cfg.system == SystemSpec("openai-audio", "gpt-4o@<url>") and not cfg.system.local
    assert cfg.judge == JudgeSpec("openai", "m", "http://h/v1", "f.json")
    assert isinstance(cfg.asr, ComponentSpec) and cfg.asr.options == {"decoding": "official"}
    assert cfg.mos.profile == "paper" and cfg.emotion.off
    cfg.save(tmp_path)
    body = json.loads((tmp_path / "config.json").read_text())
    assert {k: body[k] for k in ("system", "judge", "judge_fit", "asr", "mos", "emotion")} == {
        "system": "openai-audio:gpt-4o@<url>", "judge": "openai:m@http://h/v1", "judge_fit": "f.json",
        "asr": "offline:official", "mos": "paper", "emotion": "none"}
    assert RunConfig.load(tmp_path) == cfg
    assert RunConfig(judge="local:f.json").judge_fit == "f.json"  # the older local:FIT form
    # an imported run's system is a label that runs nothing
    assert RunConfig(system="LLaMA-Omni").system == SystemSpec("", "LLaMA-Omni")
    for field, bad in (("judge", "bogus"), ("asr", "bogus"), ("mos", "nope:x"), ("emotion", "openai")):
        with pytest.raises(ValidationError, match=field):
            RunConfig(**{field: bad})
    with pytest.raises(ValidationError, match="no judge to fit"):
        RunConfig(judge="none", judge_fit="f.json")
