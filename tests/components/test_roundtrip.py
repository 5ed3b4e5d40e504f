"""Kokoro speaks, offline Whisper listens: the two real models check each other."""

from __future__ import annotations

import re

import numpy as np
import pytest
from tests.components.conftest import SHARED

from vocalbench.components.base import Transcript

pytestmark = pytest.mark.slow  # real TTS and ASR, dozens of utterances (minutes on 2 cores)

EN = [
    "The train to Boston leaves from platform four at half past seven.",
    "Please remember to water the plants while I am away this weekend.",
    "Our team finished the project two weeks ahead of schedule.",
    "She bought fresh bread, a bottle of milk and some apples at the market.",
    "The weather forecast says it will rain heavily tomorrow afternoon.",
    "Could you tell me how to get to the nearest post office?",
    "My brother is learning to play the guitar in the evenings.",
    "The museum has a large collection of ancient Greek sculptures.",
    "We should leave early to avoid the traffic on the highway.",
    "Reading a good book before bed helps me relax after a long day.",
]
ZH = [
    "今天天气很好，我们一起去公园散步吧。",
    "请把这本书放在桌子上。",
    "我每天早上七点起床，然后去跑步。",
    "这家餐厅的饺子非常好吃。",
    "明天下午我们要开一个重要的会议。",
    "他的妹妹在北京大学学习中文。",
    "周末我喜欢在家里看电影和听音乐。",
    "火车站离这里不远，走路十分钟就到了。",
    "妈妈做的红烧肉是我最喜欢的菜。",
    "学习一门新的语言需要很多耐心。",
]


def _speak(tts, sentences: list[str], lang: str, folder) -> list:
    from vocalbench.audio import write

    paths = []
    for i, s in enumerate(sentences):
        x, sr = tts.synthesize(s, lang, voice=tts.voices(lang)[0])
        paths.append(write(folder / f"{lang}{i}.wav", x, sr))
    return paths


def _texts(asr, paths, lang: str | None) -> list[str]:
    results = asr.transcribe(paths, lang)
    for r in results:
        assert isinstance(r, Transcript), r
    return [r.text for r in results]


@pytest.fixture(scope="module")
def en_audio(tts, tmp_path_factory):
    return _speak(tts, EN, "en", tmp_path_factory.mktemp("en"))


def test_english_round_trip_wer(en_audio, asr):
    import jiwer
    from whisper_normalizer.english import EnglishTextNormalizer

    norm = EnglishTextNormalizer()
    hyps = _texts(asr, en_audio, "en")
    wer = jiwer.wer([norm(s) for s in EN], [norm(h) for h in hyps])
    print(f"\nen round trip WER = {100 * wer:.2f} % over {len(EN)} sentences")
    assert wer <= 0.10


def test_long_audio_with_vad(en_audio, tmp_path):
    """All sentences in one file (> 30 s, Whisper's window) behind 3 s of silence, VAD on."""
    import jiwer
    from whisper_normalizer.english import EnglishTextNormalizer

    from vocalbench.audio import load, write
    from vocalbench.components import resolve

    pieces = [np.zeros(3 * 16000, dtype=np.float32)]
    for p in en_audio:
        x, _ = load(p, 16000)
        pieces += [x, np.zeros(8000, dtype=np.float32)]
    long = write(tmp_path / "long.wav", np.concatenate(pieces), 16000)
    (t,) = resolve("asr", "offline", vad=True).transcribe([long], "en")
    assert isinstance(t, Transcript) and t.seconds is not None and t.seconds > 30
    norm = EnglishTextNormalizer()
    wer = jiwer.wer(norm(" ".join(EN)), norm(t.text))
    print(f"\nlong audio ({t.seconds:.1f} s, VAD) WER = {100 * wer:.2f} %")
    assert wer <= 0.10


def test_mandarin_round_trip_cer(tts, asr, tmp_path):
    import jiwer

    def han(s: str) -> str:
        return "".join(re.findall(r"[\u4e00-\u9fff]", s))

    hyps = _texts(asr, _speak(tts, ZH, "zh", tmp_path), "zh")
    cer = jiwer.cer([han(s) for s in ZH], [han(h) for h in hyps])
    print(f"\nzh round trip CER = {100 * cer:.2f} % over {len(ZH)} sentences")
    assert cer <= 0.25


def test_transcripts_are_simplified(asr, tts, tmp_path):
    from vocalbench.components.asr import to_simplified

    assert to_simplified("這個問題很難") == "这个问题很难"
    hyp = _texts(asr, _speak(tts, ["这个问题很难回答。"], "zh", tmp_path), "zh")[0]
    assert to_simplified(hyp) == hyp


def test_official_knowledge_item(asr):
    from whisper_normalizer.english import EnglishTextNormalizer

    wav = SHARED / "en/outputs/llama-omni/wav/knowledge/knowledge-0000.wav"
    if not wav.exists():
        pytest.skip(f"official outputs not present at {wav}")
    (t,) = asr.transcribe([wav], "en")
    got = EnglishTextNormalizer()(t.text)
    print(f"\nknowledge-0000: {t.text!r}")
    assert got == "leonardo da vinci painted the famous painting mona lisa"
