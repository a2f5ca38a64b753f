#!/usr/bin/env python3
"""Writes data/long/doc00.txt .. doc19.txt: 20 long documents (3,000+ words
each) for the chunking tests, made here because no download is possible.

They mix what breaks naive windowing: prose with sentences and paragraphs,
long words that the WordPiece vocabulary splits into "##" pieces, source
code, Markdown lists, numbers with decimal points, and non-Latin scripts
(Chinese and Japanese without spaces, Russian, Greek, Arabic, Hindi, Korean)
plus emoji. Deterministic (fixed seed): run it again and the files are the
same.  python3 tools/make_long_documents.py
"""
import pathlib
import random

OUT = pathlib.Path(__file__).resolve().parent.parent / "data" / "long"
WORDS_PER_DOC = 3200

ENGLISH = ("the of and to in is that for it as was with be by on not he this are or his from "
           "at which but have an they you were her all she there would their we him been has when "
           "who will more no if out so said what up its about into than them can only other new "
           "some could time these two may then do first any my now such like our over man me even "
           "most made after also did many before must through back years where much your way well "
           "down should because each just those people how too little state good very make world "
           "still own see men work long get here between both life being under never day same "
           "another know while last might us great old year off come since against go came right "
           "used take three").split()
LONG_WORDS = ("internationalization tokenization counterrevolutionaries electroencephalography "
              "incomprehensibilities photosynthesizing uncharacteristically transformer "
              "embeddings attention backpropagation hyperparameterization microarchitecture "
              "deinstitutionalization overgeneralization pseudopseudohypoparathyroidism "
              "thermodynamically quasicrystalline antidisestablishmentarianism "
              "neurotransmitters spectrophotometry Zyzzogeton Kwyjibo flibbertigibbet").split()
CHINESE = "注意力机制是现代神经网络的核心组成部分它允许模型在处理序列时关注最相关的信息我们的系统把长文档切分成重叠的窗口每个窗口得到一个向量"
JAPANESE = "長い文書は重なり合う窓に分割されますそれぞれの窓はベクトルを持ちます検索の結果は文脈の中で示されます"
RUSSIAN = ("внимание является основой современных нейронных сетей длинные документы разбиваются "
           "на перекрывающиеся окна каждое окно получает свой вектор").split()
GREEK = "η προσοχή είναι ο πυρήνας των σύγχρονων νευρωνικών δικτύων και των μοντέλων γλώσσας".split()
ARABIC = "الانتباه هو جوهر الشبكات العصبية الحديثة والوثائق الطويلة تقسم إلى نوافذ متداخلة".split()
HINDI = "ध्यान आधुनिक तंत्रिका नेटवर्क का मूल है लंबे दस्तावेज़ ओवरलैपिंग खिड़कियों में विभाजित होते हैं".split()
KOREAN = "주의 메커니즘은 현대 신경망의 핵심입니다 긴 문서는 겹치는 창으로 나뉩니다".split()
EMOJI = ["🙂", "🚀", "📄", "✨", "👩‍💻"]


def sentence(rng, words, lo=6, hi=22):
    n = rng.randint(lo, hi)
    ws = [rng.choice(LONG_WORDS) if rng.random() < 0.12 else rng.choice(words) for _ in range(n)]
    if rng.random() < 0.15:
        ws.insert(rng.randrange(len(ws)), f"{rng.randint(0, 999)}.{rng.randint(0, 99):02d}")
    if rng.random() < 0.1:
        ws.insert(rng.randrange(len(ws)), rng.choice(EMOJI))
    ws[0] = ws[0].capitalize()
    return " ".join(ws) + rng.choice([".", ".", ".", "!", "?", ";"])


def prose(rng, words, n_words):
    paras, count = [], 0
    while count < n_words:
        para = [sentence(rng, words) for _ in range(rng.randint(2, 7))]
        count += sum(len(s.split()) for s in para)
        paras.append(" ".join(para))
    return "\n\n".join(paras)


def code_block(rng):
    name = rng.choice(["plan_windows", "embed_chunks", "tokenize_segment", "mean_of_rows"])
    lines = [f"int64_t {name}(const std::vector<TokenSpan>& tokens, int64_t stride) {{",
             "  int64_t best = -1;  // the latest cut of the highest score",
             "  for (int64_t t = limit; t > begin && t >= limit - stride; --t) {",
             "    if (cut(t) > best_cut) best = t, best_cut = cut(t);",
             "  }",
             f"  return best > begin ? best : limit;  // {rng.choice(LONG_WORDS)}",
             "}",
             "",
             f"def {name}_py(xs: list[float]) -> float:",
             "    total = sum(x * x for x in xs)",
             "    return total ** 0.5 if total > 0 else 0.0"]
    return "\n".join(lines)


def markdown_list(rng, words):
    items = []
    for i in range(rng.randint(4, 12)):
        marker = rng.choice(["-", "*", f"{i + 1}."])
        items.append(f"{marker} {sentence(rng, words, 3, 10)}")
    return "\n".join(items)


def cjk(rng, text, n_chars):
    out = []
    while len("".join(out)) < n_chars:
        start = rng.randrange(len(text) - 10)
        out.append(text[start:start + rng.randint(8, 30)] + "。")
    return "".join(out)


def document(i):
    rng = random.Random(1000 + i)
    kind = i % 5
    parts, words = [], 0
    while words < WORDS_PER_DOC:
        choice = rng.random()
        if kind == 0 or choice < 0.4:
            block = prose(rng, ENGLISH, rng.randint(150, 400))
        elif kind == 1 and choice < 0.8:
            block = code_block(rng)
        elif kind == 2 and choice < 0.8:
            block = markdown_list(rng, ENGLISH)
        elif kind == 3:
            script = rng.choice([RUSSIAN, GREEK, ARABIC, HINDI, KOREAN])
            block = prose(rng, script, rng.randint(100, 300))
        elif kind == 4:
            block = cjk(rng, rng.choice([CHINESE, JAPANESE]), rng.randint(200, 600))
        else:
            block = prose(rng, ENGLISH, rng.randint(100, 300))
        parts.append(block)
        # CJK has no spaces: count its characters as words.
        words += len(block.split()) if kind != 4 else len(block) // 2
    return "\n\n".join(parts) + "\n"


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for i in range(20):
        (OUT / f"doc{i:02d}.txt").write_text(document(i), encoding="utf-8")


if __name__ == "__main__":
    main()
