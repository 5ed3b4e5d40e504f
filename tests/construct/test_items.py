"""Item schema, the spoken records an item yields, official naming, comparison and voice plans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vocalbench.construct import gates, synth
from vocalbench.construct.items import (
    Item,
    ItemError,
    audio_rel,
    qid_for,
    read_jsonl,
    read_official,
    to_record,
    utterances,
)
from vocalbench.construct.verify import compare

OFFICIAL = Path(__file__).resolve().parents[2].parent / "shared" / "vocalbench"


def test_schema_rejects_incomplete_items(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="emotion needs field"):
        Item(subset="emotion", lang="en", question="I am so tired.")
    with pytest.raises(ValueError, match="5 integers"):
        Item(subset="emotion", lang="en", question="x", emotion="sad", ratings=[1, 2, 3])
    with pytest.raises(ValueError, match="emotion must be one of"):
        Item(subset="instruction_following", lang="en", question="x", category="Paralinguistic", text_emo="bored")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"subset": "knowledge", "lang": "en", "question": "q?"}\n{oops\n')
    with pytest.raises(ItemError, match=r"bad.jsonl:1: .*knowledge needs field\(s\): answer"):
        read_jsonl(bad)


def test_pairs_share_qids_and_history_stays_text() -> None:
    cs = Item(subset="cs_knowledge", lang="zh", question="Eiffel Tower在哪个城市？", question_en="Where is the Eiffel Tower?",
              answer_zh="巴黎", answer_en="Paris", category="Integrated")
    main, control = utterances(cs)
    assert (main.subset, main.asr_lang, main.compare) == ("cs_knowledge", None, "mixed")
    assert (control.subset, control.asr_lang, control.text) == ("cs_knowledge_en", "en", "Where is the Eiffel Tower?")
    qid = qid_for("zh", "cs_knowledge", 3)
    assert qid == "codeswitching_knowledge-003"
    assert audio_rel("zh", "cs_knowledge_en", qid) == "code_switching/knowledge_en/003.wav"
    rec = to_record(cs, control, qid, audio_rel("zh", "cs_knowledge_en", qid))
    assert rec["Question"] == "Where is the Eiffel Tower?" and rec["Answer"] == "Paris"
    mr = Item(subset="multi_round", lang="en", question="And now?", answer="B",
              history=[{"role": "user", "text": "A or B?"}, {"role": "assistant", "text": "A."}])
    (u,) = utterances(mr)
    assert u.text == "And now?"  # only the final user turn is spoken
    rec = to_record(mr, u, "multi_round-000", "multi_round/000.wav")
    assert rec["Context"] == [{"from": "user", "value": "A or B?"}, {"from": "assistant", "value": "A."}]
    d = Item(subset="dialect", lang="zh", question="你吃饭了吗？", question_dialect="食咗饭未？", dialect="粤语", answer="吃了")
    spoken, mandarin = utterances(d)
    assert spoken.instruct and "粤语" in spoken.instruct and spoken.text == "食咗饭未？"
    assert (mandarin.subset, mandarin.text) == ("dialect_mandarin", "你吃饭了吗？")


def test_official_naming() -> None:
    assert qid_for("en", "knowledge", 7) == "knowledge-0007"
    assert qid_for("en", "instruction_following", 50) == "instruction-050"
    assert audio_rel("en", "instruction_following", "instruction-050") == "instruction_following/050.wav"
    assert audio_rel("zh", "instruction_following", "instruction-050") == "instruction/050.wav"
    assert audio_rel("zh", "general_knowledge", "general_knowledge-0001") == "knowledge/general/0001.wav"
    assert qid_for("en", "robust_clean", 2) == "robust-002" and qid_for("zh", "robust_clean", 2) == "robust_clean-002"


def test_comparisons() -> None:
    assert compare("What is the capital of France?", "what is the capital of france", "en").rate == 0
    assert compare("What is the capital of France?", "What is the capitol of France?", "en").rate == pytest.approx(1 / 6)
    assert compare("中国最长的河流是哪一条？", "中國最長的河流是哪一條", "zh").rate == 0  # Traditional output
    assert compare("中国最长的河流是哪一条？", "中国最长的合流是那一条", "zh").rate == pytest.approx(2 / 11)
    assert compare("中国最长的河流是哪一条？", "中国最长的合流是那一条", "zh", homophones=True).rate == 0
    assert compare("一共有3个", "一共有三个", "zh").rate == 0
    assert compare("Python这种programming language是谁发明的？", "python这种programming language是谁发明的",
                   "mixed").rate == 0
    with pytest.raises(ValueError):
        compare("a", "b", "fr")


def test_voice_plans_are_seeded_and_rotate_voices() -> None:
    voices, speeds = ["a", "b", "c"], [1.0, 0.9, 1.1]
    p1 = synth.plan("item", voices, speeds, 0, 6)
    assert p1 == synth.plan("item", voices, speeds, 0, 6)
    assert p1 != synth.plan("item", voices, speeds, 1, 6)
    assert len({a.voice for a in p1[:3]}) == 3  # each retry moves to another voice
    assert len({(a.voice, a.speed) for a in p1}) == 6
    assert synth.split_runs("请解释一下Transformer中的self-attention机制。") == [
        ("zh", "请解释一下"), ("en", "Transformer"), ("zh", "中的"), ("en", "self-attention"), ("zh", "机制。")]


def test_voice_pools_split_by_mos() -> None:
    scores = {"a": 4.4, "b": 2.0, "c": 3.9, "d": 3.0, "e": 2.5}
    pools = gates.voice_pools(list(scores), scores, top_share=0.4, low_share=0.5, seed=0)
    assert pools.clarity == ["a", "c"]
    assert pools.conversational[:2] == ["a", "c"] and len(pools.conversational) == 4
    assert set(pools.conversational[2:]) <= {"b", "d", "e"}
    assert pools.for_subset("reasoning") == ["a", "c"] and pools.for_subset("single_round") == pools.conversational
    flat = gates.voice_pools(["a", "b"], None)
    assert flat.clarity == flat.conversational == ["a", "b"] and "no MOS" in flat.note


def test_emotion_gate_thresholds(tmp_path: Path) -> None:
    class Fixed:
        """A stand-in classifier returning fixed distributions (the real one needs user weights)."""

        id = "fixed"

        def __init__(self, p: dict[str, float]) -> None:
            self.p = p

        def classify(self, paths: list[str]) -> list[dict[str, float]]:
            return [self.p for _ in paths]

    hi = {"angry": 0.05, "happy": 0.85, "neutral": 0.05, "sad": 0.03, "surprised": 0.02}
    assert gates.EmotionGate(Fixed(hi)).check("q.wav", "happy")["passed"]
    assert not gates.EmotionGate(Fixed(hi)).check("q.wav", "happy", prompt="p.wav")["passed"]  # prompt needs > 0.9
    assert not gates.EmotionGate(Fixed(hi)).check("q.wav", "sad")["passed"]
    off = gates.EmotionGate(None, "emotion_model_unavailable")
    assert off.check("q.wav", "sad") == {"gate": "skipped", "passed": True, "reason": "emotion_model_unavailable"}
    from vocalbench.components import resolve

    placeholder = gates.EmotionGate(resolve("emotion", "offline"))
    assert placeholder.check("q.wav", "sad")["gate"] == "skipped" and not placeholder.active
    assert "emotion_model_unavailable" in placeholder.describe()["reason"]


def test_official_json_reads_as_items() -> None:
    if not OFFICIAL.exists():
        pytest.skip("../shared/vocalbench is absent")
    zh = read_official(OFFICIAL / "zh", "zh", limit=2)
    subsets = {i.subset for i in zh}
    assert "cs_knowledge_en" not in subsets and "robust" not in subsets  # derived from partners / perturb
    cs = next(i for i in zh if i.subset == "cs_knowledge")
    assert cs.question_en and cs.answer_en and cs.id == "codeswitching_knowledge-000"
    en = read_official(OFFICIAL / "en", "en", subsets=["emotion", "multi_round"], limit=1)
    emo = next(i for i in en if i.subset == "emotion")
    assert emo.emotion and emo.ratings and "Question_prmopt" in emo.extra
    mr = next(i for i in en if i.subset == "multi_round")
    rec = to_record(mr, utterances(mr)[0], mr.id or "", mr.audio or "")
    original = json.loads((OFFICIAL / "en" / "json" / "multi_round.json").read_text())[0]
    assert rec["Context"] == original["Context"] and rec["Answer"] == original["Answer"]
