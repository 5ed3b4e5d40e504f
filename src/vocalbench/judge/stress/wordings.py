"""The stress suite's wordings, in English and Mandarin, and their fixed split into two pools.

Every sentence a transformation adds to a reply comes from a pool below (this project's own words,
varied in register: chatty, formal, terse; and in shape: the restated text first, last or in the
middle, statements, questions, fragments). Each pool is split **by wording** into a ``design``
half and a ``check`` half: the wordings sorted by the SHA-256 of ``SPLIT_SEED`` and the wording,
the first half (rounded up) is ``design``. Graders, rules and fits may be built and tuned against
the design wordings only; ``judge-check --stress`` validates on the check wordings, which nothing
in the judge may be tuned on. A placeholder (``{q}`` the question, ``{body}`` the reference's
statement, ``{terms}`` its content words) is filled in by the transformation.
"""

from __future__ import annotations

import hashlib
from functools import cache

SPLIT_SEED = "vocalbench-stress-wordings-1"
POOLS = ("design", "check")

# -- padding: filler that adds nothing ------------------------------------------------------------
PADDING: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "greeting": (
            "Hi there, and thanks for getting in touch!", "Hello!", "Good question.",
            "Thank you for your message.", "Okay, here goes.", "Hey! Nice to hear from you.",
            "Greetings, and thank you for reaching out.", "Right, thanks for bringing this up.",
            "Hi! Glad you asked.", "Good day to you.", "Well, hello again!", "Thanks, that's a fair thing to ask.",
        ),
        "restate": (
            "So, to make sure I have it right, you are asking: {q}",
            "You asked: {q}",
            "Let me repeat your message first. {q}",
            "{q} That is what you want to know, if I understood you correctly.",
            "Your message, word for word, was: \"{q}\"",
            "To restate the request for the record: {q}",
            "Okay, so the question on the table is this one. {q}",
            "Here is what you said, just so we are on the same page: {q}",
            "Recap of the question: {q}",
            "If I heard you right, it goes like this: {q}",
        ),
        "generic": (
            "It is always worth taking a moment to think things over.",
            "Everyone's situation is a little different.",
            "There are many ways of looking at something like this.",
            "There is often more than one way to phrase a question.",
            "Taking things one step at a time is usually fine.",
            "A little patience often goes a long way.",
            "Of course, more could always be said on the subject.",
            "An open mind makes most questions easier.",
            "Double-checking important details now and then is sensible.",
            "Lots of people have wondered about much the same thing.",
            "Being careful is rarely a mistake.",
            "Learning a bit more about a topic is almost always worthwhile.",
            "Honestly, these things can be a bit tricky sometimes.",
            "It never hurts to sleep on it.",
            "Context matters a great deal in questions of this kind.",
            "Opinions on matters like this tend to differ.",
            "Good information is worth its weight in gold.",
            "Keep your own circumstances in mind as you go.",
            "As with most things, it depends a little on the details.",
            "Life has a way of surprising us, doesn't it?",
            "Curiosity is a wonderful thing.",
            "Try not to rush it.",
            "It is perfectly normal to have questions like this.",
            "One should always weigh matters with due consideration.",
            "Reasonable people may see this differently.",
            "Anyway, it's good that you're thinking about it.",
            "Everybody learns at their own pace.",
            "Small steps add up over time.",
            "There's no harm in asking.",
            "It's worth keeping a note of things like this.",
            "Sometimes the simplest view is the clearest.",
            "Timing can matter as well.",
            "Practice, as they say, makes perfect.",
            "Kind of an interesting topic, really.",
            "It may be useful to revisit this later.",
            "Plenty has been written on related subjects.",
        ),
        "closing": (
            "I hope this helps, and feel free to ask if anything else comes up!",
            "Let me know if you'd like me to go over any part again.",
            "Have a wonderful day!",
            "All the best.",
            "That's all from me for now.",
            "Should you require further assistance, please do not hesitate to ask.",
            "Cheers, and good luck!",
            "Take care, and talk soon.",
            "Happy to chat more anytime.",
            "Thanks again for your question.",
            "Hope that's useful. Bye for now!",
            "Kind regards.",
        ),
    },
    "zh": {
        "greeting": (
            "你好，谢谢你的留言！", "您好！", "好问题。", "感谢您的来信。", "好的，那我们开始吧。", "嗨！很高兴收到你的消息。",
            "您好，感谢您的垂询。", "嗯，谢谢你提起这个。", "哈喽！", "你好呀，又见面了！", "收到。", "谢谢，这个问得挺好。",
        ),
        "restate": (
            "为了确认我理解得没错，你问的是：{q}",
            "你的问题是：{q}",
            "我先把你的话重复一遍。{q}",
            "{q}如果我没理解错，这就是你想知道的。",
            "你原话是这样说的：“{q}”",
            "复述一下您的请求：{q}",
            "好，现在摆在我们面前的问题是这个。{q}",
            "你说的是这个，先对一下：{q}",
            "问题回顾：{q}",
            "我听到的是：{q}",
        ),
        "generic": (
            "遇到这样的事情，先停下来想一想总是值得的。",
            "每个人的情况都不太一样。",
            "看待这类问题的角度有很多种。",
            "同一个问题，常常有不止一种问法。",
            "一步一步来就好。",
            "很多时候，多一点耐心会有很大的帮助。",
            "当然，关于这个话题还有很多可以说的。",
            "保持开放的心态，很多事会容易一些。",
            "重要的细节不妨时不时核对一下。",
            "其实很多人都有过差不多的疑问。",
            "认真细致一点总是没错的。",
            "多了解一些相关知识，总归有好处。",
            "说实话，这类事情有时候确实有点复杂。",
            "不着急的话，可以先放一放再说。",
            "这类问题，具体情况往往很关键。",
            "对这种事，大家的看法常常不一样。",
            "可靠的信息是很宝贵的。",
            "别忘了结合自己的实际情况。",
            "和大多数事情一样，这要看具体细节。",
            "生活总会给人一些意外，不是吗？",
            "好奇心是很可贵的。",
            "别太赶。",
            "有这样的疑问是很正常的。",
            "凡事均宜审慎权衡。",
            "不同的人对此可能有不同的理解。",
            "总之，你愿意想这个问题就很好。",
            "每个人学东西的节奏都不一样。",
            "积少成多，慢慢就好了。",
            "多问问总没有坏处。",
            "这类事情可以记下来，方便以后看。",
            "有时候，最简单的角度反而最清楚。",
            "时机有时候也很重要。",
            "俗话说，熟能生巧。",
            "这个话题其实还挺有意思的。",
            "以后也可以再回头看看。",
            "相关的话题已经有不少人写过了。",
        ),
        "closing": (
            "希望对你有帮助，还有问题随时问我！",
            "如果哪里需要我再讲一遍，尽管告诉我。",
            "祝你今天愉快！",
            "祝好。",
            "我就先说到这里。",
            "如需进一步协助，敬请随时联系。",
            "加油，祝你好运！",
            "保重，回头聊。",
            "随时欢迎再来聊。",
            "再次感谢你的提问。",
            "希望有用，拜拜！",
            "此致。",
        ),
    },
}

# -- parroting: a statement of the reference denied, and a lead naming its content words -----------
PARROTING: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "deny": (
            "Sorry to say, {body} is just not the case.",
            "Many people assume that {body}; they are mistaken.",
            "Nope. The idea that {body} doesn't hold up.",
            "One might think that {body}. That would be incorrect.",
            "It is a common misconception that {body}.",
            "Does it follow that {body}? No, it does not.",
            "I'd push back on the claim that {body}.",
            "That {body} is exactly what does not happen here.",
            "You may have heard that {body}, but that's a myth.",
            "Contrary to appearances, we cannot say that {body}.",
        ),
        "lead": (
            "This comes down to {terms}.",
            "The key words here are {terms}.",
            "Let's consider {terms}.",
            "Think about {terms} for a second.",
            "So we have {terms} to work with.",
            "In short: {terms}.",
            "The relevant factors are {terms}.",
            "Right, {terms}.",
        ),
    },
    "zh": {
        "deny": (
            "{body}，这个说法站不住脚。",
            "很多人以为{body}，其实他们想错了。",
            "{body}？并非如此。",
            "有人可能觉得{body}，但这是不正确的。",
            "{body}，这是一个常见的误解。",
            "能不能说{body}呢？不能。",
            "我不同意“{body}”这种说法。",
            "恰恰相反，{body}这种情况并没有发生。",
            "你可能听说过{body}，但那只是传言。",
            "尽管看起来如此，我们不能认为{body}。",
        ),
        "lead": (
            "这个问题涉及{terms}这几个方面。",
            "关键词是{terms}。",
            "我们来看看{terms}。",
            "先想一想{terms}。",
            "手头的线索有{terms}。",
            "简单说：{terms}。",
            "相关的因素包括{terms}。",
            "嗯，{terms}。",
        ),
    },
}

# -- tone flip: an opening and a closing that clash with the user's feeling -----------------------
TONE: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "hard": (  # for a hard feeling: a cheerful brush-off
            "Ha, honestly that sounds kind of funny to me!", "Oh come on, that's hardly worth a second thought!",
            "Meh, people deal with far worse every day.", "Lol, is that all?",
            "One fails to see why this should warrant any distress.", "Cheer up, it's really not a big deal!",
            "Well, you'll laugh about this next week.", "Seriously? That's what's bugging you?",
            "Relax, nobody else is worried about it.", "Wow, what a fuss over nothing.",
        ),
        "glad": (  # for a glad one: a gloomy put-down
            "Hmm, I wouldn't get too carried away about that.", "Honestly, I don't see why that's such a big thing.",
            "That kind of luck rarely lasts, so don't count on it.", "Meh. Okay.",
            "One should not overstate the significance of such an event.", "Don't get your hopes up, though.",
            "Sure, but it'll probably go wrong sooner or later.", "Big deal, lots of people manage that.",
            "I'd hold off celebrating if I were you.", "Well, that won't change much, will it?",
        ),
        "closing": (
            "Anyway, enough about that.", "So, moving on.", "Anyway, it's not that interesting.",
            "Whatever, it'll sort itself out.", "That concludes the matter.", "Next topic, please.",
            "Not much more to say, really.", "Okay, bored now.", "Let's drop it.", "Fine, that's that.",
        ),
    },
    "zh": {
        "hard": (
            "哈哈，说实话我觉得这事挺好笑的！", "嗨，这有什么好在意的！", "这算什么，比你惨的人多了去了。", "就这？",
            "此事似乎不足以令人困扰。", "开心点嘛，多大点事！", "过两天你自己都会笑出来的。", "不是吧，就为这个烦？",
            "放轻松，别人根本没当回事。", "哇，小题大做了吧。",
        ),
        "glad": (
            "嗯，我劝你还是别高兴得太早。", "说实话，我不明白这有什么值得激动的。", "这种好运一般不长久，别太当回事。", "哦，行吧。",
            "此事的意义不宜过分夸大。", "不过也别抱太大希望。", "是吗，不过估计迟早要出问题。", "这有啥，很多人都做得到。",
            "换我的话，先别急着庆祝。", "这也改变不了什么吧。",
        ),
        "closing": (
            "好了，不说这个了。", "行吧，换个话题。", "反正这事也没什么意思。", "随便吧，总会过去的。", "此事到此为止。",
            "下一个话题吧。", "也没什么好多说的。", "好了，有点无聊了。", "算了，不提了。", "就这样吧。",
        ),
    },
}

# -- echo: the question restated with praise or a promise, and no answer --------------------------
ECHO: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "praise": (
            "What a great question! You're asking: {q}",
            "Ooh, I love this one. {q}",
            "{q} Now that is a really thoughtful thing to ask.",
            "You want to know: {q} Excellent question, truly.",
            "Such an interesting request: {q}",
            "Thank you for this wonderful question, namely: {q}",
            "\"{q}\" Brilliant, I'm impressed you thought of that.",
            "This is an excellent and well-considered query: {q}",
            "Great one. {q}",
            "Honestly, one of the best questions I've had today: {q}",
            "So you're wondering: {q} Very perceptive of you!",
            "Love it. You asked: {q}",
        ),
        "promise": (
            "I'll get back to you with a full answer very soon.",
            "Let me put together a proper answer for you.",
            "I'll walk you through it step by step in a moment.",
            "Give me a second and I'll sort it out for you.",
            "A complete response will follow shortly.",
            "I'll definitely cover that for you.",
            "Stay tuned, the details are coming up next.",
            "I'm going to look into it carefully and report back.",
            "Answer coming right up!",
            "I promise I'll explain all of it.",
            "You'll have everything you need from me shortly.",
            "Let me think it through and then I'll tell you.",
        ),
    },
    "zh": {
        "praise": (
            "问得太好了！你问的是：{q}",
            "哇，我很喜欢这个问题。{q}",
            "{q}这个问题真的很有想法。",
            "你想知道：{q}真是个好问题。",
            "这个请求很有意思：{q}",
            "感谢你提出这么好的问题，也就是：{q}",
            "“{q}”太棒了，你能想到这个真厉害。",
            "这是一个非常出色、考虑周全的问题：{q}",
            "好问题。{q}",
            "说真的，这是我今天听到最好的问题之一：{q}",
            "原来你在想：{q}你观察得真仔细！",
            "喜欢。你问：{q}",
        ),
        "promise": (
            "我很快会给你一个完整的回答。",
            "让我好好整理一个答案给你。",
            "等一下我一步一步讲给你听。",
            "稍等，我马上帮你搞定。",
            "完整的答复稍后奉上。",
            "这个我一定会帮你讲清楚。",
            "别走开，具体内容马上就来。",
            "我会仔细研究一下再告诉你。",
            "答案马上来！",
            "我保证会把这些都解释清楚。",
            "你需要的东西我很快就会给你。",
            "我想一想，然后告诉你。",
        ),
    },
}

# -- drift: what leads from the reply's own first sentence into another question's reply ----------
DRIFT: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "lead": (
            "Anyway, here's something else.", "By the way, on another note:", "That reminds me.",
            "Speaking of which, there is this.", "Moving on.", "Let me also mention the following.", "Oh, and another thing.",
            "In a related vein, consider this.", "Switching gears a little:", "Also worth saying:",
            "Now, something different.", "Which brings me to this.",
        ),
    },
    "zh": {
        "lead": (
            "对了，说点别的。", "顺便说一下：", "这让我想起一件事。", "说到这个，再补充一点。", "接下来。", "另外还要提一下下面这点。",
            "哦，还有一件事。", "与此相关，再看看这个。", "换个话题：", "也值得一说的是：", "好，现在说点不一样的。", "这就说到下面这个了。",
        ),
    },
}

WORDINGS: dict[str, dict[str, dict[str, tuple[str, ...]]]] = {
    "padding": PADDING, "parroting": PARROTING, "tone_flip": TONE, "echo": ECHO, "drift": DRIFT}


def _rank(wording: str) -> str:
    return hashlib.sha256(f"{SPLIT_SEED}:{wording}".encode()).hexdigest()


@cache
def pool(transformation: str, lang: str, part: str, which: str) -> tuple[str, ...]:
    """The ``which`` (design | check) half of one pool: ``transformation``'s ``part`` in ``lang``."""
    if which not in POOLS:
        raise ValueError(f"unknown wording pool {which!r} (expected design or check)")
    full = WORDINGS[transformation][lang][part]
    ranked = sorted(full, key=_rank)
    half = (len(ranked) + 1) // 2
    return tuple(ranked[:half] if which == "design" else ranked[half:])
