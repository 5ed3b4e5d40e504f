"""Plug-ins from outside the package (docs/extending.md): the example package's system and component
found through their entry points, run end to end, named as ``module:attr``; broken plug-ins named in
one line without breaking anything else."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from plugin_env import CLI, EXAMPLE, env_with

from vocalbench import audio


def cli(args: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, check=False, env=env)


def listing(what: str, env: dict[str, str]) -> list[dict[str, object]]:
    r = cli(["list", what, "--json"], env)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def test_list_shows_the_plugins_with_their_package(echo_site: str | None) -> None:
    env = env_with(echo_site)
    systems = {r["name"]: r for r in listing("systems", env)}
    assert systems["echo"]["package"] == "vocalbench-echo" and systems["echo"]["installed"]
    assert systems["scripted"]["package"] == "vocalbench"
    components = {(r["kind"], r["name"]): r for r in listing("components", env)}
    assert components[("tts", "morse")]["package"] == "vocalbench-echo"
    table = cli(["list", "systems"], env)
    assert "vocalbench-echo" in table.stdout


def test_example_system_runs_from_its_own_package_on_the_mini_set(echo_site: str | None, tmp_path: Path) -> None:
    env = env_with(echo_site)
    out = tmp_path / "run"
    r = cli(["run", "--system", "echo", "--lang", "en", "--subsets", "knowledge,single_round", "--limit", "1",
             "--judge", "none", "--asr", "none", "--mos", "none", "--emotion", "none", "--out", str(out), "--quiet"],
            env)
    assert r.returncode == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["system"] == "echo" and summary["subsets"]["knowledge"]["n"] == 1
    assert summary["dimensions"]["fcl_ms"] is not None  # the streamed audio was timed
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert config["system_details"]["system"]["kind"] == "python"
    assert config["system_details"]["system"]["callable"] == "vocalbench_echo:parrot"
    exported = cli(["export", str(out)], env)
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    assert rows and all(row["reply_text"].startswith("I heard ") for row in rows)


def test_component_plugin_by_entry_point_and_by_module_attr(echo_site: str | None, tmp_path: Path) -> None:
    env = env_with(echo_site)
    for spec in ("morse", "vocalbench_echo:MorseTTS"):
        wav = tmp_path / f"{spec.replace(':', '_')}.wav"
        r = cli(["speak", "sos", "--tts", spec, "--out", str(wav)], env)
        assert r.returncode == 0, r.stderr
        assert audio.info(wav).sample_rate == 24000 and audio.duration(wav) > 0.5


def test_system_named_as_module_attr_needs_no_install(tmp_path: Path) -> None:
    """``--system module:attr[:ARG]``: the example's factory from its folder on the path, not installed."""
    env = env_with(str(EXAMPLE))
    out = tmp_path / "run"
    r = cli(["run", "--system", "vocalbench_echo:echo_system:morse", "--lang", "en", "--subsets", "knowledge",
             "--limit", "1", "--judge", "none", "--asr", "none", "--mos", "none", "--emotion", "none",
             "--out", str(out), "--quiet"], env)
    assert r.returncode == 0, r.stderr
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    assert config["system"] == "vocalbench_echo:echo_system:morse"
    assert config["system_details"]["system"]["tts"] == "morse@vocalbench-echo"


def test_broken_plugins_are_named_in_one_line_and_break_nothing_else(echo_site: str | None, broken_site: str,
                                                                   tmp_path: Path) -> None:
    env = env_with(echo_site, broken_site)
    systems = {r["name"]: r for r in listing("systems", env)}
    assert systems["echo"]["installed"] and systems["offline"]["package"] == "vocalbench"  # the others still list
    assert systems["ghost"]["problem"] == "no module named 'no_such_module_xyz'" and not systems["ghost"]["installed"]
    components = {(r["kind"], r["name"]): r for r in listing("components", env)}
    assert "is not KIND.NAME" in str(components[("component", "bad-name")]["problem"])

    subsets = cli(["list", "subsets", "--json"], env)  # the subset plug-in raises on import: one warning line
    assert subsets.returncode == 0
    listed = {row["subset"]: row for row in map(json.loads, subsets.stdout.splitlines())}
    assert listed["knowledge"]["package"] == "vocalbench"
    assert listed["recall_extra"]["package"] == "good-subsets" and listed["recall_extra"]["items"] == 12
    warned = [line for line in subsets.stderr.splitlines() if "boom" in line]
    assert len(warned) == 1 and "'broken-plugin'" in warned[0] and "RuntimeError: plug-in bug" in warned[0]

    r = cli(["run", "--system", "explodes", "--lang", "en", "--subsets", "knowledge", "--limit", "1",
             "--out", str(tmp_path / "run")], env)
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert r.returncode == 2 and len(errors) == 1 and "Traceback" not in r.stderr
    assert errors[0] == ("error: plug-in system 'explodes' from package 'broken-plugin' (exploding_plugin:factory) "
                         "cannot be loaded: RuntimeError: plug-in bug")


@pytest.mark.parametrize("spec", ["no_such_module_xyz:factory", "ghost"])
def test_an_unloadable_system_spec_is_one_line(spec: str, broken_site: str, tmp_path: Path) -> None:
    r = cli(["run", "--system", spec, "--lang", "en", "--subsets", "knowledge", "--limit", "1", "--judge", "none",
             "--out", str(tmp_path / "run")], env_with(broken_site))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "cannot be loaded: no module named 'no_such_module_xyz'" in r.stderr
