"""Emotion/empathy: acoustic expectation, EER combinations, unscored vs failed, v1 sum."""

from __future__ import annotations

import pytest
from subset_doubles import ScriptedJudge, aggregate, by_reply, const, ctx, one, raising, rate, reply, samples

from vocalbench.components.base import ComponentUnavailable
from vocalbench.records import Score
from vocalbench.scoring.subsets.emotion import Emotion, acoustic_score, empathic


def test_acoustic_expected_rating_by_hand() -> None:
    ratings = [5, 1, 2, 4, 2]  # en emotion-000
    assert acoustic_score({"angry": 1.0}, ratings) == 5.0
    assert acoustic_score({"angry": 0.5, "sad": 0.5}, ratings) == 4.5
    # renormalised over the five classes
    assert acoustic_score({"angry": 0.2, "happy": 0.2, "other": 0.6}, ratings) == pytest.approx(3.0)
    with pytest.raises(ValueError):
        acoustic_score({"other": 1.0}, ratings)


@pytest.mark.parametrize("sem,aco,ok", [(3, 3.0, True), (5, 4.2, True), (2, 5.0, False), (5, 2.99, False),
                                        (1, 1.0, False)])
def test_eer_rule(sem: float, aco: float, ok: bool) -> None:
    assert empathic(sem, aco) is ok


async def test_scores_semantic_and_acoustic_on_real_item() -> None:
    s = samples("en", "emotion")[0]
    assert s.metadata["Score"] == [5, 1, 2, 4, 2] and s.metadata["Question_emo"] == "angry"
    judge = ScriptedJudge(by_reply({"sorry": rate(4)}))
    c = ctx("en", judge=judge, emotion=const({"angry": 0.1, "happy": 0.0, "neutral": 0.0, "sad": 0.9,
                                               "surprised": 0.0}))
    scores = await Emotion("en").score(s, reply(s, "I'm sorry you feel that way."), c)
    assert one(scores, "semantic").value == 4.0 and one(scores, "acoustic").value == pytest.approx(4.1)
    assert judge.calls[0][1]["emotion"] == "angry"
    # classifier unavailable -> acoustic unscored; missing audio -> acoustic failed (worst 1)
    off = ctx("en", judge=judge, emotion=raising(ComponentUnavailable("emotion_model_unavailable", "offline")))
    assert one(await Emotion("en").score(s, reply(s, "sorry"), off), "acoustic").unscored == "emotion_model_unavailable"
    mute = await Emotion("en").score(s, reply(s, "sorry", audio=False), c)
    assert one(mute, "acoustic").value == 1.0 and one(mute, "acoustic").system_error == "missing_audio"
    assert one(mute, "semantic").value == 4.0


def _pair(s, sem, aco, *, sem_unscored=None, aco_error=None):  # noqa: ANN001, ANN202
    return [Score(subset="emotion", sample_id=s.id, name="semantic", value=sem, unscored=sem_unscored, scorer="e@1"),
            Score(subset="emotion", sample_id=s.id, name="acoustic", value=aco, system_error=aco_error, scorer="e@1")]


def test_eer_aggregate_combinations_and_v1() -> None:
    items = samples("zh", "emotion")[:5]
    scores = (_pair(items[0], 3.0, 3.0) + _pair(items[1], 5.0, 2.5) + _pair(items[2], 2.0, 4.0)
              + _pair(items[3], 4.0, 1.0, aco_error="missing_audio") + _pair(items[4], None, 4.0,
                                                                             sem_unscored="judge_unparseable"))
    res = aggregate(Emotion("zh"), scores, {}, items)
    assert res.metric == "eer" and res.value == 25.0 and res.scored == 4 and res.unscored == 1
    assert res.system_errors == 1 and not res.complete
    assert res.extra["semantic_rate"] == 75.0 and res.extra["acoustic_rate"] == 60.0
    assert res.extra["semantic_mean"] == 3.5 and res.extra["acoustic_mean"] == 2.9
    v1 = aggregate(Emotion("zh", "v1"), scores, {}, items)
    assert v1.metric == "mean_score" and v1.value == 6.4
