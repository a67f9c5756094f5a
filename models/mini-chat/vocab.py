"""Learns the mini-chat tokenizer: a SentencePiece-style ("llama") vocabulary llama.cpp loads.

Layout: <unk>, <s>, </s>, the chat template's <|im_start|> and <|im_end|> (control tokens; <|im_end|>
ends a turn and is the model's end-of-sequence), the 256 byte tokens <0x00>..<0xFF> (byte
fallback: any text tokenizes), "▁" (a space) and the printable ASCII characters, then pieces learned
by byte-pair merging over the rendered training text. llama.cpp's SPM tokenizer merges the adjacent
pair whose joined text is the highest-scoring token, so each learned piece scores by the order it
was learned (earlier merges first), which reproduces the merges. Digits never merge (one token per
digit: arithmetic reads digit by digit), and a space is always its own token: pieces never hold a
"▁", so a word is the same tokens after a space, a quote or a newline, and copying a word from the
prompt into a JSON value or a tool argument is copying tokens as they are (with "▁Ada" and "Ada"
two different pieces, the model trained in session 18 never learned to copy words).

    python3 models/mini-chat/vocab.py --text .train/render.txt --size 2048 --out .train/vocab.json
"""

import argparse
import collections
import json
import re

SPECIAL = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]
TYPES = {"normal": 1, "unknown": 2, "control": 3, "byte": 6}
CHUNK = re.compile(r"[A-Za-z]+|[^A-Za-z0-9▁\s]+|▁|[0-9]|\s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--text", required=True)
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    text = open(args.text, encoding="utf-8").read()
    for s in SPECIAL:
        text = text.replace(s, "\n")
    words = collections.Counter(CHUNK.findall(text.replace(" ", "▁")))

    tokens = list(SPECIAL)
    types = [TYPES["unknown"], TYPES["control"], TYPES["control"], TYPES["control"], TYPES["control"]]
    for b in range(256):
        tokens.append(f"<0x{b:02X}>")
        types.append(TYPES["byte"])
    singles = ["▁"] + [chr(c) for c in range(0x21, 0x7F)]
    scores = [0.0] * len(tokens) + [-1e6 - i for i in range(len(singles))]
    tokens += singles
    types += [TYPES["normal"]] * len(singles)
    known = set(tokens)

    # Byte-pair merges over the chunk counts: each chunk is a tuple of symbols.
    split = {tuple(w): n for w, n in words.items() if len(w) > 1 and not w.isspace()}
    merges = 0
    while len(tokens) < args.size:
        pairs = collections.Counter()
        for symbols, n in split.items():
            for a, b in zip(symbols, symbols[1:]):
                pairs[a, b] += n
        best = None
        for (a, b), n in pairs.most_common():
            if (a + b) not in known:
                best = (a, b)
                break
        if best is None:
            break
        joined = best[0] + best[1]
        tokens.append(joined)
        types.append(TYPES["normal"])
        scores.append(-float(merges))
        known.add(joined)
        merges += 1
        nxt = {}
        for symbols, n in split.items():
            if best[0] not in symbols:
                nxt[symbols] = n
                continue
            out, i = [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and symbols[i] == best[0] and symbols[i + 1] == best[1]:
                    out.append(joined)
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            nxt[tuple(out)] = nxt.get(tuple(out), 0) + n
        split = {s: n for s, n in nxt.items() if len(s) > 1}
    json.dump({"tokens": tokens, "scores": scores, "types": types}, open(args.out, "w"), ensure_ascii=False)
    print(f"{len(tokens)} tokens ({merges} merges) in {args.out}")


if __name__ == "__main__":
    main()
