"""The stress suite: does a judge read the content of a reply, or its length and wording? (``judge-check --stress``)

Agreement with labels cannot tell content from length on a set where, as in most natural replies,
the longer replies are the better ones. So every labelled test reply is also transformed in ways
whose effect on a correct verdict is known, and the judge's verdicts on the transformed replies
are compared with its verdicts on the originals (binary families read in the rubric's "good"
direction: correct, followed, consistent; for safety, refused). The transformations
(``transforms``), deterministic per item id:

- **padding**: filler that adds nothing (a greeting, the question restated, generic remarks, a
  closing) to 2-4x the length; instruction following is padded without its instruction.
- **padding with the question** (instruction following): the same filler with the instruction
  restated (a quoted instruction is not a followed one).
- **off-topic**: the reply given to another question of the same family and language.
- **echo**: the question restated with praise and a promise to answer, and no answer.
- **drift**: the reply's own first sentence, a lead, then another question's reply.
- **parroting** (families whose judge sees a reference: reasoning, multi-round, code-switched
  open questions): the reference's content words around a wrong or contradicting answer.
- **condensing** (criteria that do not ask for length): high-labelled replies cut to their key
  sentences, at most 60 % as long.
- **tone flip** (empathy): an opening and a closing that clash with the user's feeling.

What each must show, and how a figure is read on its 95 % interval (by question) and counts a judge
error as a failure: ``bars``. A transformation with fewer than ``MIN_STRESS_ITEMS`` items is
reported but does not count; a run cut short by a limit is a partial run and validates nothing.

**Wordings.** Every added sentence comes from a pool in ``wordings``, split by wording into a
*design* half and a *check* half. Rules, graders and fits may only be built and tuned against the
design wordings; the check wordings are for ``judge-check`` alone, and a family passes the stress
bar only on them (the design figures are reported beside them, so a judge that knows its
design wordings shows as a gap between the two).
"""

from vocalbench.judge.stress.bars import MIN_STRESS_ITEMS, Expectation, not_applied, transformations
from vocalbench.judge.stress.suite import (
    StressItem,
    family_stress,
    run_stress,
    stress_count,
    stress_items,
    stress_line,
)
from vocalbench.judge.stress.transforms import (
    condense,
    drift,
    echo,
    flip_tone,
    pad,
    parrot,
    sentences,
    size,
    wrong_answer,
)
from vocalbench.judge.stress.wordings import POOLS

__all__ = ["MIN_STRESS_ITEMS", "POOLS", "Expectation", "StressItem", "condense", "drift", "echo", "family_stress",
           "flip_tone", "not_applied", "pad", "parrot", "run_stress", "sentences", "size", "stress_count",
           "stress_items", "stress_line", "transformations", "wrong_answer"]
