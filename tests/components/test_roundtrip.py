"""Kokoro speaks, offline Whisper listens: the two real models check each other."""

from __future__ import annotations

import re

import pytest

from tests.components.conftest import SHARED

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


def _roundtrip(tts, asr, sentences: list[str], lang: str, tmp_path) -> list[str]:
    from vocalbench.audio import write

    paths = []
    for i, s in enumerate(sentences):
        x, sr = tts.synthesize(s, lang, voice=tts.voices(lang)[0])
        paths.append(write(tmp_path / f"{lang}{i}.wav", x, sr))
    results = asr.transcribe(paths, lang)
    texts = []
    for r in results:
        assert not hasattr(r, "reason"), r
        texts.append(r.text)
    return texts


def test_english_round_trip_wer(tts, asr, tmp_path):
    import jiwer
    from whisper_normalizer.english import EnglishTextNormalizer

    norm = EnglishTextNormalizer()
    hyps = _roundtrip(tts, asr, EN, "en", tmp_path)
    wer = jiwer.wer([norm(s) for s in EN], [norm(h) for h in hyps])
    print(f"\nen round trip WER = {100 * wer:.2f} % over {len(EN)} sentences")
    assert wer <= 0.10


def test_mandarin_round_trip_cer(tts, asr, tmp_path):
    import jiwer

    def han(s: str) -> str:
        return "".join(re.findall(r"[\u4e00-\u9fff]", s))

    hyps = _roundtrip(tts, asr, ZH, "zh", tmp_path)
    cer = jiwer.cer([han(s) for s in ZH], [han(h) for h in hyps])
    print(f"\nzh round trip CER = {100 * cer:.2f} % over {len(ZH)} sentences")
    assert cer <= 0.25


def test_transcripts_are_simplified(asr, tts, tmp_path):
    from vocalbench.components.asr import to_simplified

    assert to_simplified("這個問題很難") == "这个问题很难"
    hyp = _roundtrip(tts, asr, ["这个问题很难回答。"], "zh", tmp_path)[0]
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
