"""The duplex report in a real headless Chromium: the table with intervals and a playable timeline.

A run against the scripted realtime double (tones, energy turn detection) is scored and reported;
the page is opened from file://, its timelines must be drawn with the speech segments and the
measures' windows, no label may overprint another, the wheel zooms and a drag pans, and "play" must
play input and output together. The screenshot goes to $VOCALBENCH_SCREENSHOTS (default: the temp
folder).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest

from vocalbench.audio import to_wav_bytes
from vocalbench.components.vad import TurnSettings
from vocalbench.duplex.run import add_scenarios, replay_all, score_all, write_result
from vocalbench.duplex.scenarios import Part, Scenario
from vocalbench.report.duplex import write_duplex_report
from vocalbench.run_config import RunConfig
from vocalbench.runner.store import RunStore
from vocalbench.systems import resolve
from vocalbench.systems.options import SystemOptions
from vocalbench.systems.scripted import ScriptedSystem
from vocalbench.systems.serve import SystemServer

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--autoplay-policy=no-user-gesture-required"]
SCREENSHOTS = Path(os.environ.get("VOCALBENCH_SCREENSHOTS", tempfile.gettempdir()))
RATE = 24000
# the double replies with 2 s of a real system's speech (Full-Duplex-Bench's example, used in place)
SPEECH = Path(__file__).resolve().parents[2].parent / "shared" / "fdb_v1_examples" / "smooth_turn_taking_example" / "1" / "output.wav"

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason="Debian chromium is not installed (apt-get install -y chromium)")


def _scenario(tmp: Path, sid: str, kind: str, bursts: list[tuple[float, float]], seconds: float) -> Scenario:
    x = np.zeros(int(seconds * RATE), dtype=np.float32)
    for a, b in bursts:
        t = np.arange(int((b - a) * RATE)) / RATE
        x[int(a * RATE):int(a * RATE) + t.size] = 0.3 * np.sin(2 * np.pi * 300 * t)
    path = tmp / f"{sid}.wav"
    path.write_bytes(to_wav_bytes(x, RATE))
    parts = [Part(f"part {i}", a, b, "tone", 0.0, True) for i, (a, b) in enumerate(bursts)]
    span = bursts[1] if kind == "interruption" else None
    return Scenario(sid, kind, "en", str(path), seconds, parts, bursts[0][1], span)  # type: ignore[arg-type]


async def test_duplex_report_timeline_plays(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.async_api", reason="playwright is not installed")
    from vocalbench.audio import load

    if not SPEECH.is_file():
        pytest.skip(f"{SPEECH} is not there (a real reply's speech)")
    speech, _ = load(SPEECH, sample_rate=RATE)
    (tmp_path / "reply.wav").write_bytes(to_wav_bytes(speech[int(3.3 * RATE):int(5.3 * RATE)], RATE))
    script = tmp_path / "double.jsonl"
    script.write_text(json.dumps({"id": "*", "text": "a reply", "audio": {"wav": "reply.wav"},
                                  "first_chunk_delay": 0.2, "chunk_seconds": 0.1, "chunk_interval": 0.1}) + "\n")
    server = SystemServer(ScriptedSystem(script), turn_detection="energy")
    port = await server.start(0)
    scenarios = [_scenario(tmp_path, "smooth-001", "smooth", [(0.48, 1.44)], 5.0),
                 _scenario(tmp_path, "interruption-001", "interruption", [(0.48, 1.44), (2.88, 3.36)], 6.0)]
    run = tmp_path / "run"
    store = RunStore(run)
    add_scenarios(store, scenarios)
    system = resolve(f"realtime:double@http://127.0.0.1:{port}/v1", SystemOptions(max_reply_tokens=64))
    cfg = RunConfig(system="realtime:double", lang="en", concurrency=2, quiet=True)
    try:
        await replay_all(system, scenarios, store, TurnSettings(vad="energy", silence_duration_ms=480), 40, 1, cfg)
    finally:
        await server.stop()
    result = score_all(scenarios, store, 1, "en", quiet=True)
    store.close()
    write_result(run, {"system": "realtime:double", "lang": "en", "set": "test", "repeats": 1,
                       "turn_detection": {"type": "server_vad"}, "kinds": result})
    page_path = write_duplex_report([run], tmp_path / "report")

    async with sync_api.async_playwright() as p:
        ctx = await p.chromium.launch_persistent_context(str(tmp_path / "profile"), executable_path=CHROMIUM,
                                                         args=ARGS, headless=True, viewport={"width": 1300, "height": 900})
        page = await ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        await page.goto(page_path.as_uri())
        rows = await page.eval_on_selector_all(".duplex-table tbody tr", "rs => rs.map(r => r.innerText)")
        assert any("Smooth turn-taking" in r and "take-over rate" in r for r in rows)
        assert any("User interruption" in r and "time to stop" in r for r in rows)
        assert await page.locator(".tl").count() == 2
        # the interruption timeline is drawn: output (orange) pixels where the reply played, a barge-in marker
        drawn = await page.evaluate("""() => {
            const cv = document.querySelector(".tl[data-id='interruption-001'] canvas");
            const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
            let orange = 0, red = 0;
            for (let i = 0; i < d.length; i += 4) {
                if (d[i] === 0xc2 && d[i + 1] === 0x57) orange++;
                if (d[i] === 0xb3 && d[i + 1] === 0x26) red++;
            }
            return {orange, red};
        }""")
        assert drawn["orange"] > 100 and drawn["red"] > 10
        # the speech segments (system: #e6a27a) and the measures' windows (take-over: #6b4fa3) are drawn
        colours = await page.evaluate("""() => {
            const cv = document.querySelector(".tl[data-id='smooth-001'] canvas");
            const d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
            let seg = 0, win = 0;
            for (let i = 0; i < d.length; i += 4) {
                if (d[i] === 0xe6 && d[i + 1] === 0xa2 && d[i + 2] === 0x7a) seg++;
                if (d[i] === 0x6b && d[i + 1] === 0x4f && d[i + 2] === 0xa3) win++;
            }
            return {seg, win};
        }""")
        assert colours["seg"] > 50 and colours["win"] > 50, colours
        # no label overprints another, and every label lies inside the canvas
        for sid in ("smooth-001", "interruption-001"):
            boxes = await page.evaluate(f"() => {{ const el = document.querySelector(\".tl[data-id='{sid}']\");"
                                        " return {labels: el._labels, width: el.querySelector('canvas').clientWidth}; }")
            labels = boxes["labels"]
            assert len(labels) >= 3
            for i, a in enumerate(labels):
                assert 0 <= a["x"] and a["x"] + a["w"] <= boxes["width"] + 0.5, a
                for b in labels[i + 1:]:
                    apart = a["x"] + a["w"] <= b["x"] or b["x"] + b["w"] <= a["x"] or a["y"] + a["h"] <= b["y"] \
                        or b["y"] + b["h"] <= a["y"]
                    assert apart, (a, b)
        # the wheel zooms in around the pointer, a drag pans, "fit" shows the whole recording
        canvas = tl_view = page.locator(".tl[data-id='interruption-001'] canvas")
        await canvas.scroll_into_view_if_needed()
        box = await canvas.bounding_box()
        assert box is not None
        await page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        for _ in range(4):
            await page.mouse.wheel(0, -100)
            await page.wait_for_timeout(50)
        view = await tl_view.evaluate("cv => cv.closest('.tl')._view")
        assert view[1] - view[0] < 6.0 * 0.5 and view[0] > 0.5
        await page.mouse.down()
        await page.mouse.move(box["x"] + box["width"] / 2 + 200, box["y"] + box["height"] / 2, steps=5)
        await page.mouse.up()
        panned = await tl_view.evaluate("cv => cv.closest('.tl')._view")
        assert panned[0] < view[0] and abs((panned[1] - panned[0]) - (view[1] - view[0])) < 1e-6
        await page.screenshot(path=str(SCREENSHOTS / "duplex_timeline_zoomed.png"), full_page=True)
        await page.locator(".tl[data-id='interruption-001'] button.fit").click()
        assert await tl_view.evaluate("cv => cv.closest('.tl')._view") == [0, 6.0]
        tl = page.locator(".tl[data-id='interruption-001']")
        await tl.locator("button.play").click()
        await page.wait_for_timeout(800)
        times = await tl.evaluate("el => [el.querySelector('audio.in').currentTime, el.querySelector('audio.out').currentTime]")
        assert times[0] > 0.2 and abs(times[0] - times[1]) < 0.1  # both play, in step
        await page.screenshot(path=str(SCREENSHOTS / "duplex_report.png"), full_page=True)
        assert not errors, errors
        await ctx.close()
