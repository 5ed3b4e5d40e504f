"""Features for the 1-5 families, where nothing is mechanical enough to settle an item.

Every feature is bounded (0-1, a capped count 0-3, length 0-2), grows or falls with a quality the
family's criterion names, and reads the language of the text, not the items of the calibration set:

- open reasoning: how much of the reference's own answer (its content beyond the question) the
  reply recalls, whether it also rejects a premise the reference rejects, how much of the
  question it takes up, whether it reasons (because, 所以) or hedges (maybe, 吧);
- empathy: an opening that meets the feeling, cues of acknowledgement and support, a feeling
  given to the user that fits the question (and, in English, its emotion label) or misreads it,
  brush-offs, second person;
- creativity: size, variety (little repetition), imagery, the category's form (lines for poems,
  a first-person story, a stance with reasons, senses in a description, analysis terms and the
  shown reference in an appreciation, an in-role voice, classical particles), and replies that
  talk about the task or explain instead of writing;
- single-round advice: size, variety, how many things it names, topic uptake, refusals of the
  question;
- code-switched open questions: size and recall of the reference.

None of them settles an item: the family's fitted rule weighs the features (docs/judge.md).
Texts are read up to ``MAX_CHARS`` (enough for every capped feature), with a plain word split for
English, so a grader stays around a millisecond.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache

from vocalbench.judge.graders.registry import found, grader
from vocalbench.judge.graders.tokens import (
    STOPWORDS_EN,
    content_words,
    is_zh,
    polar_recall,
    polar_terms,
    recall,
    stem,
)
from vocalbench.judge.rubrics.record import Evidence

MAX_CHARS = 2000
_EN_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z][A-Za-z-]+")

# --- open reasoning ----------------------------------------------------------------------------
REASONS = {"en": re.compile(r"\b(because|since|so|therefore|thus|which means|as a result|due to|that's why|"
                            r"this is why|leads? to|caus(?:es|ed|ing)|hence|means that)\b"),
           "zh": re.compile(r"因为|所以|因此|由于|导致|说明|意味着|从而|于是|原因|可见|使得|造成")}
DENIAL = {"en": re.compile(r"\b(impossible|never|did not|didn't|could not|couldn't|was not|wasn't|were not|weren't|"
                           r"no evidence|not possible|misconception|premise|none|they don't|it doesn't|"
                           r"long before|long after|centuries (?:before|after|apart)|different (?:eras|times|periods))\b"),
          "zh": re.compile(r"不可能|并没有|并非|从未|从来没|不存在|前提|没有(?:任何)?(?:证据|记载|关系|交集|重叠)|"
                           r"不同的?时代|还没出生|早已去世|去世(?:多年|之后)|相隔|没有(?:扮演|参加|见过|合作|去过|发明)")}
HEDGE = {"en": re.compile(r"\b(maybe|probably|i guess|i suppose|i think|perhaps|kind of|sort of|or something)\b"),
         "zh": re.compile(r"吧|嘛|大概|反正|好像|也许|或许|差不多|之类")}

# --- empathy -----------------------------------------------------------------------------------
EMPATHY = {
    "en": re.compile(r"\b(sorry(?!,? but)|good to hear|that's (?:nice|good)|sounds nice|i understand|understandable|"
                     r"that sounds|sounds like|it's (?:okay|ok|normal|natural)|it is (?:okay|normal|natural)|"
                     r"not alone|that must|must (?:be|feel|have)|i can (?:imagine|hear|see|tell)|i hear you|"
                     r"makes (?:total |complete )?sense|congratulations|congrats|happy for you|proud of you|"
                     r"be proud|i'm glad|i am glad|glad to hear|take care|here for you|don't worry|valid|"
                     r"hang in there|be (?:gentle|kind) (?:with|to) yourself|go easy on yourself|you deserve|"
                     r"you've earned|you did (?:it|this)|what a|how (?:exciting|wonderful|lovely|frustrating|awful)|"
                     r"wow|i love (?:that|this|how)|that's (?:so |really |absolutely )?(?:great|wonderful|amazing|"
                     r"exciting|fantastic|awesome|sweet|tough|hard|awful|rough|frustrating|unfair|painful))\b"),
    "zh": re.compile(r"我(?:能|很|完全|特别|非常)?(?:理解|明白|懂)|可以理解|能理解|难怪|心疼|抱抱|别担心|不要担心|放心|"
                     r"辛苦了|能感受到|感受得到|听起来|真为你|替你|恭喜|太好了|太棒了|不容易|陪着你|陪你|加油|别难过|"
                     r"没关系|深呼吸|照顾好自己|一定很|肯定很|换作是我|谁都会|很正常|太正常|不是你的错|并不孤单|"
                     r"不是一个人|值得|骄傲|哇|能想象|好好休息|慢慢来|温暖|真好|为你高兴|开心的事"),
}
DISMISS = {
    "en": re.compile(r"\b(you're overthinking|overthinking it|just (?:move on|get over|deal with|relax|enjoy|"
                     r"ignore|accept)|get over it|not a big deal|no big deal|calm down|stop (?:worrying|complaining|"
                     r"being)|that's (?:just )?how (?:it|things|events|life) (?:is|are|work)|it's not that "
                     r"(?:bad|serious)|nothing to (?:be|feel) (?:upset|sad|angry)|you should(?:n't| not) feel|"
                     r"actually the opposite|plans change|life isn't fair|"
                     # the stock phrases of emotional invalidation, as lists of them give them
                     r"so what|who cares|whatever|don't be (?:so )?(?:dramatic|sensitive)|(?:you're|you are) "
                     r"(?:too sensitive|being dramatic)|overreact\w*|stop (?:whining|crying)|toughen up|suck it up|"
                     r"man up|first world problem|it is what it is|(?:it )?could be (?:a lot |much )?worse|"
                     r"(?:others|other people|some people) have it (?:much |far )?worse|all in your head|"
                     r"look on the bright side|everything happens for a reason|don't get too excited)\b"),
    "zh": re.compile(r"想太多|想多了|想这么多|想那么多|没什么大不了|有什么好|至于吗|别矫情|习惯就好|忍忍就|就这样吧|"
                     r"就这么简单|不值得生气|别抱怨|看开点就|没必要(?:难过|生气|伤心|想)|也不重要|不是你能控制|"
                     # 常见的否定感受的套话
                     r"多大点事|多大的事|这点小事|小题大做|大惊小怪|玻璃心|太敏感|矫情|比你惨|那又怎样|那又怎么样|"
                     r"谁在乎|无所谓|关我什么事|别哭了|坚强点|有什么大不了"),
}
FEELINGS: dict[str, dict[str, re.Pattern[str]]] = {  # feeling words by class
    "en": {
        "happy": re.compile(r"\b(happ(?:y|iness)|joy\w*|excit\w*|thrill\w*|delight\w*|glad|proud|celebrat\w*|"
                            r"elat\w*|cheer\w*|wonderful|overjoyed|congratulat\w*|fun|enjoy\w*)\b"),
        "sad": re.compile(r"\b(sad\w*|down|hurt\w*|lonel\w*|griev\w*|grief|disappoint\w*|discourag\w*|drained|"
                          r"heartbr\w*|ashamed|shame\w*|guilt\w*|empt(?:y|iness)|low|depress\w*|miss(?:ing)?|"
                          r"homesick|loss|pain\w*)\b"),
        "angry": re.compile(r"\b(angry|anger|mad|frustrat\w*|fed up|furious|annoy\w*|irritat\w*|resent\w*|"
                            r"unfair|outrag\w*|upset)\b"),
        "surprised": re.compile(r"\b(surpris\w*|wow|amaz\w*|unbelievabl\w*|astonish\w*|shock\w*|wonder\w*|"
                                r"unexpected\w*|can't believe|stun\w*|curio\w*|awe\w*)\b"),
        "fear": re.compile(r"\b(scar\w*|afraid|fear\w*|anx\w*|worr\w*|nervous|overwhelm\w*|stress\w*|panic\w*|"
                           r"terrif\w*)\b"),
    },
    "zh": {
        "happy": re.compile(r"开心|高兴|快乐|喜悦|兴奋|激动|幸福|骄傲|自豪|庆祝|恭喜|欣喜|充实|满足|感动|期待|乐观"),
        "sad": re.compile(r"难过|伤心|悲伤|失落|孤独|孤单|沮丧|委屈|失望|心痛|心碎|内疚|愧疚|自责|思念|想家|空虚|低落|"
                          r"羞愧|惭愧|遗憾|懊恼|痛苦|无助|绝望|受伤"),
        "angry": re.compile(r"生气|愤怒|气愤|恼火|不公平|烦躁|火大|不满|憋屈|窝火|烦人|受不了|不尊重"),
        "surprised": re.compile(r"惊讶|意外|吃惊|震惊|没想到|不可思议|惊喜|好奇|神奇"),
        "fear": re.compile(r"害怕|担心|焦虑|紧张|恐惧|不安|压力|慌|忐忑|尴尬|困扰"),
    },
}
ATTRIBUTE = {  # where a reply gives the user a feeling: "you're ...", "sounds like you", 你一定很...
    "en": re.compile(r"\byou(?:'re| are| feel| must feel| might feel| seem| sound)\b|\bsounds like you\b|\bfeeling\b"),
    "zh": re.compile(r"你|您"),
}
SECOND_PERSON = {"en": re.compile(r"\byou(?:r|rs|'re|'ve|'ll|rself)?\b"), "zh": re.compile(r"你|您")}

# --- creativity --------------------------------------------------------------------------------
IMAGERY = {"en": re.compile(r"\b(like an?|like the|like \w+ing|as if|as though|as \w+ as|seem(?:s|ed)? to|"
                            r"whisper\w*|danc\w*|sigh\w*|breath\w*|glow\w*|shimmer\w*|scent|smell\w*|aroma\w*|"
                            r"taste\w*|echo\w*|rustl\w*|crunch\w*|hush\w*|murmur\w*)\b"),
           "zh": re.compile(r"像|仿佛|好像|如同|宛如|犹如|似的|好似|一般地|[声香味]|沙沙|哗哗|静静|轻轻|缓缓|悄悄")}
OFF_TASK = {  # talking about the task (asking for details, tips on how to write it) or explaining instead
    "en": re.compile(r"\b(please provide|provide (?:me with )?more (?:details|information)|i need more (?:information|"
                     r"details)|would you like me to|i(?:'m| am) (?:a|an) (?:large language model|ai)|i don't have "
                     r"personal (?:opinions|experiences)|as an ai|can you (?:tell|give) me more|when writing|"
                     r"you could write|you can write|your (?:poem|story|paragraph|essay) (?:should|could)|"
                     r"scientists?|researchers?|psycholog\w*|studies (?:show|suggest)|research (?:shows|suggests)|"
                     r"(?:a )?process called|according to)\b"),
    "zh": re.compile(r"可以从(?:几|以下|这几)个方面|写的时候|写作时|建议你(?:写|从)|你可以(?:写|从)|请提供|请告诉我更多|"
                     r"作为(?:一个)?(?:ai|人工智能|语言模型)|我无法|我没有个人|要点[:：]|发言稿|备注[:：]|[一二三四五]、|"
                     r"心理学|研究(?:表明|显示|发现)|科学家|一般来说|专家"),
}
TASK_WORDS_EN = frozenset("""
write writing written poem poems poetry paragraph passage essay article story narrative descriptive description
describe please help finish complete task requirement generate create craft compose short brief analyze analyse
analysis give opinion imagine picture envision visualize think recall capture focus explore exploring highlight
highlighting tell good sentence wrote suggest tips ways best need want know make get experience moment time
scene emotion emotions feel feeling feelings evoke evokes evoked vivid detail details role playing
respond say should ask asks way specific include including
""".split())
TASK_ZH = re.compile(r"请|帮我|完成|写一段|一段|写一篇|一篇|写|叙述性的?|描述性的?|描写性的?|议论性的?|文字|段落|"
                     r"回想一下|回忆|想象一下|想象|你的|你|这需要|分析并给出自己的观点|并给出|主题|以|为|的|了|一下")
FIRST_PERSON_PAST = {"en": re.compile(r"\b(i|we|my|our|me)\b[^.!?]{0,60}\b(\w+ed|was|were|had|felt|went|saw|"
                                      r"came|took|made|found|knew|thought|stood|ran|said|told|got|left|began|"
                                      r"heard|sat|held)\b"),
                     "zh": re.compile(r"我[^。！？]{0,30}(?:了|过|那天|那年|那时|当时|后来|一下子|忽然|突然)")}
STANCE = {"en": re.compile(r"\b(i (?:think|believe|argue|would argue|am convinced)|in my (?:view|opinion)|"
                           r"my (?:view|position|opinion) is|should|must|however|therefore|on the other hand|"
                           r"while|although|because|for example|for instance|in conclusion|ultimately|first|"
                           r"second|finally)\b"),
          "zh": re.compile(r"我认为|我觉得|我的观点|我方|应该|必须|然而|但是|不过|因此|所以|因为|首先|其次|再次|"
                           r"例如|比如|总之|综上|可见|固然|诚然")}
SENSES = {  # sight, sound, smell, touch, taste
    "en": tuple(re.compile(p) for p in (
        r"\b(colou?rs?|bright\w*|dark\w*|glow\w*|shin\w*|gold\w*|silver\w*|red|blue|green|yellow|white|"
        r"black|gr[ae]y|shadow\w*|sparkl\w*|glitter\w*|pale|crimson)\b",
        r"\b(sounds?|hear\w*|whisper\w*|rustl\w*|echo\w*|hum\w*|buzz\w*|crunch\w*|silen\w*|quiet\w*|loud\w*|"
        r"songs?|sing\w*|chirp\w*|crash\w*|roar\w*|hush\w*|murmur\w*)\b",
        r"\b(smell\w*|scent\w*|aroma\w*|fragran\w*|odou?r\w*|perfume\w*|stench)\b",
        r"\b(touch\w*|soft\w*|rough\w*|smooth\w*|warm\w*|cold|cool\w*|damp|wet|crisp\w*|breeze\w*|textur\w*|"
        r"velvet\w*)\b",
        r"\b(tast\w*|sweet\w*|sour|bitter\w*|salt\w*|savou?r\w*|flavou?r\w*)\b")),
    "zh": tuple(re.compile(p) for p in (
        r"[色光亮暗影红黄蓝绿白黑金银]", r"[声听响鸣]|沙沙|哗哗|呜咽|寂静|安静", r"[香闻]|气味|芬芳|腥",
        r"[触摸软硬凉冷热湿暖]|粗糙|光滑|风", r"[甜酸苦咸辣尝]|滋味")),
}
ANALYSIS = {"en": re.compile(r"\b(metaphor\w*|simile\w*|imagery|image\w*|symbol\w*|personif\w*|contrast\w*|"
                             r"tone|rhythm\w*|rhyme\w*|repetition|repeat\w*|alliterat\w*|paradox\w*|irony|ironic|"
                             r"juxtapos\w*|evok\w*|conveys?|suggests?|captures?|implies|meaning|theme\w*|"
                             r"line|phrase|word\w*|structure|sound\w*)\b"),
            "zh": re.compile(r"比喻|意象|拟人|对比|对仗|象征|情感|表达|描绘|营造|衬托|烘托|借景抒情|韵律|节奏|"
                             r"修辞|意境|画面|手法|暗示|寓意|主题|语言|诗人|诗句|抒发|渲染|反衬|炼字|动词|形容词")}
VOICE = {"en": re.compile(r"\b(i|i'm|i'd|i'll|me|my|we|let's|you|your)\b"), "zh": re.compile(r"我|你|您|咱")}
THIRD_PERSON_ROLE = {"en": re.compile(r"\b(?:the|a|an) \w+(?: \w+)? (?:should|would|could|might|will|can) "
                                      r"(?:say|respond|reply|explain|tell|suggest|inform|answer|advise|ask|"
                                      r"acknowledge|offer)\b"),
                     "zh": re.compile(r"(?:他|她|老师|医生|店员|经理|侦探|顾问|顾客|家长)(?:应该|可以|会)(?:说|回答|告诉|解释|建议)|"
                                      r"要点|发言稿|备注")}
CLASSICAL = re.compile(r"[之乎者也矣焉哉兮其而於曰乃亦皆耳夫吾汝尔盖故遂]")
_GENRE_OF_RUBRIC = {"poem": "poem", "modern_poem_writing": "poem", "narrative": "narrative",
                    "argumentative": "argumentative", "descriptive": "descriptive", "appreciation": "appreciation",
                    "modern_poem_appreciation": "appreciation", "classical_poetry_appreciation": "appreciation",
                    "role_play": "role_play", "classical_format_writing": "classical"}
_GENRE_OF_CATEGORY = {"poem": "poem", "modern poem writing": "poem", "narrative": "narrative",
                      "narratives": "narrative", "argumentative": "argumentative", "descriptive": "descriptive",
                      "appreciation": "appreciation", "modern poem appreciation": "appreciation",
                      "achient poetry appreciation": "appreciation", "role playing": "role_play",
                      "role play": "role_play", "achient format writing": "classical"}
_GENRE_CUES = (  # the prompt's own wording, when neither the rubric id nor the category is at hand; first match
    ("poem", re.compile(r"\b(?:write|create|compose|craft|generate) (?:a |an )?(?:\w+ ){0,3}poem|创作一首(?:现代)?诗|"
                        r"写一首(?:现代)?诗|现代诗(?:歌)?创作")),
    ("classical", re.compile(r"文言|古文|骈文|辞赋|[赋铭檄表序]体|仿照.*(?:赋|铭|记|说)|写一篇.*(?:赋|铭|檄|祭文)|对联|律诗|"
                             r"绝句|词牌|曲牌|元曲|小令|散曲")),
    ("argumentative", re.compile(r"\barticle\b|\bopinion\b|\bargu|议论|辩手|辩论")),
    ("descriptive", re.compile(r"\bdescriptive\b|描写性|描述性|扩展成")),
    ("appreciation", re.compile(r"what's good about|what is good about|赏析|鉴赏|好在哪|妙在|这句诗|这首[诗词]|这几句|"
                                r"曾写过")),
    ("role_play", re.compile(r"\brole\b|\bplaying the roles?\b|imagine you are (?:a|an|the)\b|扮演|想象你是|假如你是|"
                             r"如果你是|假设你是|假设您是|你是一[位名个]|你的工作是")),
    ("poem", re.compile(r"\bpoem\b|\bpoetry\b|诗歌|现代诗|一首诗|写.*诗")),
    ("argumentative", re.compile(r"观点")),
    ("descriptive", re.compile(r"\bdescribe\b|描写|描绘")),
    ("narrative", re.compile(r"\bnarrative\b|\bstory\b|叙述|记叙|讲述|故事")),
)

# --- single-round advice -----------------------------------------------------------------------
REFUSE = {"en": re.compile(r"\b(i(?:'m| am) (?:not able|unable) to|i can(?:'t|not) (?:help|give|provide|offer|"
                           r"answer|advise)|i(?:'m| am) sorry,? but|not able to (?:give|provide|offer) advice|"
                           r"i (?:don't|do not) (?:give|provide|offer) advice|i must decline|i won't be able)\b"),
          "zh": re.compile(r"(?:没办法|没法|无法|不能|不方便|不太方便)(?:替你|给你|为你|帮你)?(?:提供|回答|给出|做决定|建议|"
                           r"告诉|帮助|教)|抱歉|恕我|不便回答|不予回答|拒绝")}


# --- shared helpers ----------------------------------------------------------------------------


def _text(fields: Mapping[str, str], key: str) -> str:
    """A field cut at ``MAX_CHARS`` and lower-cased (every English pattern here is lower case): the
    helpers below read only such texts."""
    return fields.get(key, "")[:MAX_CHARS].lower()


def _lang(fields: Mapping[str, str]) -> str:
    """"zh" when the question and reply are mostly Chinese characters."""
    return "zh" if is_zh(fields.get("question", "")[:MAX_CHARS] + fields.get("reply", "")[:MAX_CHARS]) else "en"


@lru_cache(maxsize=256)
def _words(text: str) -> tuple[str, ...]:
    """English words (a plain split: the shared normaliser is too slow to run this often)."""
    return tuple(w.split("'")[0] for w in _EN_WORD.findall(text))


@lru_cache(maxsize=256)
def _n_units(text: str, lang: str) -> int:
    """English words; Mandarin characters plus Latin words."""
    return len(_CJK.findall(text)) + len(_LATIN.findall(text)) if lang == "zh" else len(_words(text))


def _per(pattern: re.Pattern[str], text: str, lang: str, per: float, cap: float = 3.0) -> float:
    """Hits per ``per`` units, capped: a density that does not grow with length."""
    n = max(_n_units(text, lang), 1)
    return round(min(len(pattern.findall(text)) * per / max(n, per / 2), cap), 4)


MIN_PASSAGE = {"en": 60, "zh": 120}  # units (words / characters) a passage needs to carry a density


def _per_passage(pattern: re.Pattern[str], text: str, lang: str, per: float, cap: float = 3.0,
                 weigh: Callable[[str], float] | None = None) -> float:
    """The density of ``_per`` in the reply's densest passage: the highest over the shortest runs
    of whole sentences (lines) from each sentence on that hold at least ``per`` units, or
    ``MIN_PASSAGE``, or the whole reply when it is shorter. A piece is judged by the piece, not by the greetings, offers and remarks around it:
    wrapping it in filler does not thin it out, while a reply too short to hold a passage is read
    whole (so one dense phrase cannot stand for a thin reply). With ``weigh``, only passages that
    hold the sentence it weighs highest (the first of equals) count: where the reply takes up the
    user's message, not the remarks around it."""
    sents = [s for s in _SENTENCES[lang].split(text) if s.strip()]
    anchor = max(range(len(sents)), key=lambda i: (weigh(sents[i]), -i)) if weigh is not None and sents else None
    hits = [len(pattern.findall(s)) for s in sents]
    units = [_n_units(s, lang) for s in sents]
    need = min(sum(units), max(per, MIN_PASSAGE[lang]))
    if need <= 0:
        return 0.0
    best = 0.0
    for i in range(len(sents) if anchor is None else anchor + 1):
        h = u = 0
        for j in range(i, len(sents)):
            h, u = h + hits[j], u + units[j]
            if u >= need and (anchor is None or j >= anchor):
                best = max(best, h * per / max(u, per / 2))
                break  # a longer run from i only adds units
    return round(min(best, cap), 4)




@lru_cache(maxsize=256)
def _terms(text: str, lang: str, drop_task: bool = False) -> tuple[str, ...]:
    """Content terms: English stemmed non-stopwords; Mandarin character bigrams plus Latin words."""
    if lang == "zh":
        return tuple(content_words(TASK_ZH.sub("，", text) if drop_task else text, "zh") + _LATIN.findall(text))
    return tuple(stem(w) for w in _words(text)
                 if len(w) > 1 and w not in STOPWORDS_EN and not (drop_task and w in TASK_WORDS_EN))


_SENTENCES = {"en": re.compile(r"(?<=[.!?])\s+|\n+"), "zh": re.compile(r"(?<=[。！？!?])|\n+")}


def without_echo(reply: str, question: str, lang: str) -> str:
    """The reply without the sentences that mostly restate the question (at least 60 % of their
    content terms are the question's): restating a question is not taking it up."""
    asked = set(_terms(question, lang))
    kept = []
    for sent in _SENTENCES[lang].split(reply):
        terms = _terms(sent, lang)
        if sent.strip() and not (len(terms) >= 3 and sum(t in asked for t in terms) >= 0.6 * len(terms)):
            kept.append(sent)
    return ("" if lang == "zh" else " ").join(kept)


def _uptake(question: str, reply: str, lang: str) -> float:
    """Share of the question's content (beyond the request words) the reply takes up, in its own
    sentences (not in a restatement of the question)."""
    return round(recall(_terms(question, lang, drop_task=True), _terms(without_echo(reply, question, lang), lang)), 4)


def _has(pattern: re.Pattern[str], text: str) -> float:
    return float(bool(pattern.search(text)))


def _variety(text: str, lang: str, window: int = 40) -> float:
    """Moving-average type-token ratio over windows of 40 words / characters, 0-1: how little the
    reply repeats itself, without falling as it grows longer (as a plain type-token ratio does)."""
    units = list(_words(text)) if lang == "en" else _CJK.findall(text)
    if len(units) <= window:
        return round(len(set(units)) / len(units), 4) if units else 0.0
    ratios = [len(set(units[i:i + window])) / window for i in range(0, len(units) - window + 1, 5)]
    return round(sum(ratios) / len(ratios), 4)


def _opening(reply: str, lang: str) -> str:
    """The reply's first sentence (at most 20 words / 40 characters)."""
    if lang == "zh":
        return re.split(r"[。！？!?]", reply, maxsplit=1)[0][:40]
    return " ".join(re.split(r"(?<=[.!?])\s", reply.strip(), maxsplit=1)[0].split()[:20])


def _opening_to(own: str, question: str, lang: str) -> str:
    """The first sentence of the reply's own (``own``: the reply without its restatements of the
    question, ``without_echo``) that meets the user's message: it takes up a term of it, or speaks
    to the user with a feeling or a cue of empathy ("抱抱你", "You must feel ..."). A bare "Hello!"
    before it is not how the reply opens, nor a remark that names a feeling or a cue but neither the
    message nor the user ("好奇心是很可贵的", "Such doubts are normal."). Its first own sentence when
    none does."""
    takes_up = _takes_up(question, lang)
    sents = [s for s in _SENTENCES[lang].split(own) if s.strip()]
    meets = (s for s in sents if takes_up(s) or ((EMPATHY[lang].search(s) or _classes(s, lang))
                                                  and SECOND_PERSON[lang].search(s)))
    return _opening(next(meets, sents[0] if sents else ""), lang)


def _takes_up(key: str, lang: str) -> Callable[[str], float]:
    """How many terms of ``key`` (the user's message, a reference) a sentence takes up."""
    wanted = set(_terms(key, lang))
    return lambda sent: float(len(wanted & set(_terms(sent, lang))))


# --- open reasoning ----------------------------------------------------------------------------


def _denies(text: str, lang: str) -> bool:
    """Says near its start that the question's premise is false (never happened, impossible)."""
    head = text[:150] if lang == "zh" else " ".join(text.split()[:50])
    return bool(DENIAL[lang].search(head))


def _answering(reply: str, key: str, lang: str) -> str:
    """The reply's sentences that take up a term of ``key`` (the reference, else the question):
    where it answers, not the greetings and remarks around the answer."""
    takes_up = _takes_up(key, lang)
    return " ".join(s for s in _SENTENCES[lang].split(reply) if s.strip() and takes_up(s))


@grader("reasoning_open_en", "reasoning_open_zh", version="4")
def reasoning_cues(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    """``answer_recall``: the share of the reference's terms beyond the question (for an analogy,
    its answer) that the reply states with the same polarity (inflections alike: "melt" recalls
    "melts", "will not melt" does not), less the share it states negated or denies, doubled and
    capped at 1 (a full answer in other words rarely repeats more than half of them);
    ``contradicts``: the share it states negated or denies;
    ``premise``: 1 when the reply also rejects a premise the reference rejects, 0 when it does not,
    0.5 when the reference rejects none; ``hedges``: a hedge ("maybe", 大概) in a sentence that
    takes up the reference's terms (a hedge in a remark around the answer does not soften it).
    No length: the criterion asks for a correct answer and sound reasoning, not for a long one."""
    lang, reply = _lang(fields), _text(fields, "reply")
    question, reference = _text(fields, "question"), _text(fields, "reference")
    ref = polar_terms(reference, lang)
    asked = frozenset(t for t, _ in polar_terms(question, lang))
    novel = asked if {t for t, _ in ref} - asked else frozenset()
    recalled, contradicted = polar_recall(ref, polar_terms(reply, lang), novel)
    premise = (1.0 if _denies(reply, lang) else 0.0) if _denies(reference, lang) else 0.5
    return found(None, "", answer_recall=round(min(2.0 * max(recalled - contradicted, 0.0), 1.0), 4),
                 contradicts=round(min(2.0 * contradicted, 1.0), 4), premise=premise,
                 topic=_uptake(question, reply, lang), reasons=_has(REASONS[lang], reply),
                 hedges=_has(HEDGE[lang], _answering(reply, reference or question, lang)))


# --- empathy -----------------------------------------------------------------------------------


def _classes(text: str, lang: str) -> set[str]:
    return {name for name, pat in FEELINGS[lang].items() if pat.search(text)}


def _given(own: str, opening: str, lang: str) -> set[str]:
    """Feeling classes the reply gives the user in its own sentences (``own``: a restated question
    gives none): in its opening, or right after "you feel", "sounds like you're", 你感到."""
    out = _classes(opening, lang)
    for m in list(ATTRIBUTE[lang].finditer(own))[:20]:
        out |= _classes(own[m.end(): m.end() + (10 if lang == "zh" else 40)], lang)
    return out


@grader("emotion_semantic_en", "emotion_semantic_zh", version="7")
def empathy_cues(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    """The feelings the reply should meet are the question's own and, in English only (the zh
    judge is not shown it), the emotion label; ``misreads`` needs one of them to compare with.
    ``empathy`` is a density (cues per 50 words / 80 characters), ``topic`` the share of the
    user's situation the reply takes up: neither grows with length."""
    lang, reply = _lang(fields), _text(fields, "reply")
    question = _text(fields, "question")
    expected = _classes(question, lang)
    label = _text(fields, "emotion").strip() if lang == "en" else ""
    expected |= {c for c in FEELINGS["en"] if label and label.startswith(c[:4])}
    own = without_echo(reply, question, lang)
    opening = _opening_to(own, question, lang)
    given = _given(own, opening, lang)
    return found(None, "", opens_warm=float(bool(EMPATHY[lang].search(opening))),
                 empathy=_per_passage(EMPATHY[lang], own, lang, 50.0 if lang == "en" else 80.0, cap=1.0,
                                      weigh=_takes_up(question, lang)),
                 mirrors=float(bool(given & expected)),
                 misreads=float(bool(expected and given - expected) and not given & expected),
                 dismissive=float(bool(DISMISS[lang].search(own))),
                 you=_per_passage(SECOND_PERSON[lang], reply, lang, 20.0 if lang == "en" else 40.0),
                 topic=_uptake(question, reply, lang))


# --- creativity --------------------------------------------------------------------------------


def genre(fields: Mapping[str, str], meta: Mapping[str, str]) -> str:
    """The creativity category: from ``meta["rubric"]`` (creativity_<category>_<lang>) or the data's
    ``meta["category"]`` when the caller passes them, else from the prompt's wording; "" if unknown."""
    rubric = meta.get("rubric", "")
    known = _GENRE_OF_RUBRIC.get(rubric[len("creativity_"):].rsplit("_", 1)[0], "") if rubric.startswith(
        "creativity_") else ""
    if known:
        return known
    category = meta.get("category", "").strip().lower()
    if category in _GENRE_OF_CATEGORY:
        return _GENRE_OF_CATEGORY[category]
    question = _text(fields, "question")
    return next((g for g, pat in _GENRE_CUES if pat.search(question)), "")


def _lines(reply: str) -> float:
    """A poem's layout, 0-1: short lines (at most 15 words / 90 characters), full at eight."""
    lines = [ln for ln in reply.splitlines() if ln.strip()]
    short = [ln for ln in lines if len(ln.split()) <= 15 and len(ln) <= 90]
    return min(len(short) / 8.0, 1.0) if len(lines) >= 3 else 0.0


def _form(kind: str, text: str, lang: str) -> float:
    """How much the reply has the form of its category, 0-1 (0 where the category is unknown): a
    poem's short lines, and densities (not counts) of a narrative's first-person past, an argument's
    stance words, an appreciation's analysis terms."""
    if kind == "poem":
        return round(_lines(text), 4)
    per = 60.0 if lang == "en" else 120.0  # densities, not counts: a longer piece is no more in form
    if kind == "narrative":
        return round(_per_passage(FIRST_PERSON_PAST[lang], text, lang, per, cap=1.0), 4)
    if kind == "argumentative":
        return round(_per_passage(STANCE[lang], text, lang, per / 3.0, cap=1.0), 4)
    if kind == "descriptive":
        return round(min(sum(bool(p.search(text)) for p in SENSES[lang]) / 4.0, 1.0), 4)
    if kind == "appreciation":
        return round(_per_passage(ANALYSIS[lang], text, lang, per / 3.0, cap=1.0), 4)
    if kind == "role_play":
        return float(bool(VOICE[lang].search(text)) and not THIRD_PERSON_ROLE[lang].search(text))
    if kind == "classical":
        return _per_passage(CLASSICAL, text, "zh", 12.0, cap=1.0)
    return 0.0


@grader("creativity_en", "creativity_zh", version="5")
def creativity_cues(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    """Where the judge sees a reference (the zh appreciation categories), an appreciation's form
    also counts how much of it the reply recalls (doubled, capped at 1). ``topic``: how much of the
    prompt's subject the piece takes up. No length: the criteria ask for vivid, fitting, well-made
    writing, not for a long piece."""
    lang, reply = _lang(fields), _text(fields, "reply")
    kind = genre(fields, meta)
    form = _form(kind, reply, lang)
    reference = _text(fields, "reference")
    if kind == "appreciation" and reference:
        form = (form + min(2.0 * recall(_terms(reference, lang), _terms(reply, lang)), 1.0)) / 2.0
    return found(None, kind, variety=_variety(reply, lang),
                 imagery=round(_per_passage(IMAGERY[lang], reply, lang, 100.0 if lang == "en" else 200.0) / 3.0, 4),
                 form=round(form, 4), off_task=float(bool(OFF_TASK[lang].search(reply))),
                 topic=_uptake(_text(fields, "question"), reply, lang))


# --- single-round advice -----------------------------------------------------------------------


@grader("single_round_en", "single_round_zh", version="3")
def advice_cues(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    """``topic``: how much of the question the reply takes up in its own sentences; ``refuses``:
    declines in its opening. No length or item count (both grow with length): the criterion asks
    for helpful, accurate, relevant advice, which a short reply can give."""
    lang, reply, question = _lang(fields), _text(fields, "reply"), _text(fields, "question")
    head = reply[:80] if lang == "zh" else " ".join(reply.split()[:30])
    return found(None, "", variety=_variety(reply, lang), topic=_uptake(question, reply, lang),
                 refuses=float(bool(REFUSE[lang].search(head))))


# --- code-switched open questions --------------------------------------------------------------


@grader("cs_open_ended_understanding", "cs_open_ended_quality", version="4")
def open_cs_cues(fields: Mapping[str, str], meta: Mapping[str, str]) -> Evidence:
    """Recall of the reference with its polarity (doubled and capped at 1: a full answer rarely
    recalls half of it) and what the reply denies of it. No length; neither the question's uptake
    nor its English terms kept rank these items (an all-Chinese reply loses nothing under the
    criterion). A restatement of the question recalls nothing: the reply is read without it."""
    reply = without_echo(_text(fields, "reply"), _text(fields, "question"), "zh")
    ref, contra = polar_recall(polar_terms(_text(fields, "reference"), "zh"), polar_terms(reply, "zh"))
    return found(None, "", ref_recall=round(min(2.0 * ref, 1.0), 4), contradicts=round(min(2.0 * contra, 1.0), 4))
