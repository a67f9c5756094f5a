"""Scores `verify` jobs on the conformance kit's model (NODE_PROTOCOL.md §9 "Verification", §13
"The kit model") with nothing but numpy: reads the GGUF, runs the llama forward pass teacher-forced
over prompt + completion, and gives each completion token's log-probability and whether it was in
the top k; given the job's sampling settings (v0.2), also each position's processed distribution
(§9 "Sampling"): the token's log-probability there, the entropy and its variance, the top-k mass,
the edge gap, and the prompt and completion detokenized. A second implementation beside the
reference's node-llama-cpp, so the kit's vectors are shown to follow from the documents, not from
one runtime. Debian: python3-numpy."""
import hashlib
import struct

import numpy as np

PENALTY_WINDOW_TOKENS = 256  # the penalties look back over this many completion tokens (§9 "Sampling")
MAX_EDGE_GAP = 1e9  # a banned token's edge gap (infinite) on the wire
# GGUF token types (tokenizer.ggml.token_type) and how each detokenizes.
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, BYTE = 1, 2, 3, 4, 6
SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


def read_gguf(path):
    """GGUF v3: header, metadata, tensor infos, then aligned f32 data (all the kit model has)."""
    data = open(path, "rb").read()
    pos = 0

    def take(fmt):
        nonlocal pos
        value = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return value[0]

    def string():
        nonlocal pos
        n = take("Q")
        pos += n
        return data[pos - n:pos].decode()

    def value(kind):
        if kind == 8:
            return string()
        if kind == 9:
            item, n = take("I"), take("Q")
            return [value(item) for _ in range(n)]
        return take(SCALARS[kind])

    if data[:4] != b"GGUF":
        raise ValueError("not a GGUF file")
    pos = 4
    take("I")
    tensors, entries = take("Q"), take("Q")
    meta = {}
    for _ in range(entries):
        key = string()
        meta[key] = value(take("I"))
    infos = []
    for _ in range(tensors):
        name, dims = string(), [take("Q") for _ in range(take("I"))]
        kind, offset = take("I"), take("Q")
        if kind != 0:
            raise ValueError(f"{name}: only f32 tensors are read here")
        infos.append((name, dims, offset))
    align = meta.get("general.alignment", 32)
    start = (pos + align - 1) // align * align
    weights = {}
    for name, dims, offset in infos:
        count = int(np.prod(dims))
        flat = np.frombuffer(data, "<f4", count, start + offset).astype(np.float64)
        # ggml: dims[0] is the inner (input) dimension: a matrix is dims[1] rows of dims[0].
        weights[name] = flat.reshape(dims[::-1]) if len(dims) > 1 else flat
    return meta, weights, hashlib.sha256(data).hexdigest()


class KitVerifier:
    def __init__(self, path):
        self.meta, self.w, self.sha256 = read_gguf(path)
        m = self.meta
        self.layers = m["llama.block_count"]
        self.heads = m["llama.attention.head_count"]
        self.kv_heads = m["llama.attention.head_count_kv"]
        self.eps = m["llama.attention.layer_norm_rms_epsilon"]
        self.base = m["llama.rope.freq_base"]
        self.vocabulary = len(m["tokenizer.ggml.tokens"])
        self.context = m["llama.context_length"]

    def rms(self, x, weight):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + self.eps) * weight

    def rope(self, x):  # llama's "normal" rotation: adjacent pairs (x0, x1), (x2, x3), …
        t, _, d = x.shape
        angles = np.arange(t)[:, None] * self.base ** (-np.arange(0, d, 2) / d)
        cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]
        even, odd = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = even * cos - odd * sin
        out[..., 1::2] = even * sin + odd * cos
        return out

    def logits(self, tokens):
        """Next-token logits after every position of `tokens` (one teacher-forced pass)."""
        w, n = self.w, len(tokens)
        x = w["token_embd.weight"][tokens]
        d = x.shape[1] // self.heads
        mask = np.triu(np.full((n, n), -np.inf), 1)
        for i in range(self.layers):
            b = f"blk.{i}."
            h = self.rms(x, w[b + "attn_norm.weight"])
            q = self.rope((h @ w[b + "attn_q.weight"].T).reshape(n, self.heads, d))
            k = self.rope((h @ w[b + "attn_k.weight"].T).reshape(n, self.kv_heads, d))
            v = (h @ w[b + "attn_v.weight"].T).reshape(n, self.kv_heads, d)
            group = self.heads // self.kv_heads
            k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
            scores = np.einsum("thd,shd->hts", q, k) / np.sqrt(d) + mask
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            attention = scores / scores.sum(-1, keepdims=True)
            x = x + np.einsum("hts,shd->thd", attention, v).reshape(n, -1) @ w[b + "attn_output.weight"].T
            h = self.rms(x, w[b + "ffn_norm.weight"])
            gate = h @ w[b + "ffn_gate.weight"].T
            x = x + (gate / (1 + np.exp(-gate)) * (h @ w[b + "ffn_up.weight"].T)) @ w[b + "ffn_down.weight"].T
        return self.rms(x, w["output_norm.weight"]) @ w["output.weight"].T

    def verify(self, prompt, completion, top_k, sampling=None):
        """A verification's fields (§9): per completion token its log-probability (4 decimals) and a
        '1'/'0' in-top-k flag; with `sampling` (v0.2) the processed distribution's fields too, and
        the detokenized prompt and completion."""
        logits = self.logits(list(prompt) + list(completion))[len(prompt) - 1:-1]
        top = logits.max(-1, keepdims=True)
        logprobs = logits - top - np.log(np.exp(logits - top).sum(-1, keepdims=True))
        chosen = logprobs[np.arange(len(completion)), completion]
        higher = (logprobs > chosen[:, None]).sum(-1)
        out = {"logprobs": [round4(x) for x in chosen],
               "in_top_k": "".join("1" if r < top_k else "0" for r in higher)}
        if sampling is None:
            return out
        rows = [sampled_position(logits[i], completion[i], completion[:i], sampling, top_k)
                for i in range(len(completion))]
        out["sampled_logprobs"] = [None if r[0] is None else round4(r[0]) for r in rows]
        out["entropy"] = [round4(r[1]) for r in rows]
        out["entropy_var"] = [round4(r[2]) for r in rows]
        out["top_k_mass"] = [round4(r[3]) for r in rows]
        out["edge_gaps"] = [round4(min(r[4], MAX_EDGE_GAP)) for r in rows]
        if self.meta.get("tokenizer.ggml.model") == "llama":  # the only tokenizer detokenized here
            out["prompt_text"] = self.detokenize(prompt, special=True)
            out["completion_text"] = self.continuation(completion, prompt)
        return out

    def detokenize(self, tokens, special):
        """llama.cpp's llama_detokenize for a SentencePiece ("llama") vocabulary: each token's piece
        (▁ as a space, a byte token as its byte, control and unknown tokens as their text only when
        `special`), the first piece without its leading space when the vocabulary adds a space
        prefix, then UTF-8 with each invalid sequence as U+FFFD."""
        m = self.meta
        texts, types = m["tokenizer.ggml.tokens"], m["tokenizer.ggml.token_type"]
        strip = m.get("tokenizer.ggml.add_space_prefix", True)
        out = b""
        for t in tokens:
            kind, text = types[t], texts[t]
            if kind in (UNKNOWN, CONTROL):
                piece = text.encode() if special else b""
            elif kind == USER_DEFINED:
                piece = text.encode()
            elif kind == NORMAL:
                piece = text.replace("\u2581", " ").encode()
            elif kind == BYTE:
                piece = bytes([int(text[3:5], 16)])
            else:
                piece = b""
            if strip and piece.startswith(b" "):
                piece = piece[1:]
            strip = False  # only the text's first token, even when it writes nothing
            out += piece
        return out.decode("utf-8", "replace")

    def continuation(self, tokens, before):
        """`tokens` detokenized (no special tokens) as the text that follows `before`, as
        node-llama-cpp's detokenize(tokens, false, before) does: after the last three tokens of
        `before`, so the first piece keeps its leading space."""
        context = list(before)[-3:]
        head = self.detokenize(context, special=False)
        if head == "":
            return self.detokenize(tokens, special=False)
        text = self.detokenize(context + list(tokens), special=False)
        return text[len(head):] if text.startswith(head) else self.detokenize(tokens, special=False)


def round4(x):
    """4 decimals, as the verification fields travel (and −0 as 0)."""
    return round(float(x), 4) + 0.0


def sampled_position(logits, chosen, previous, sampling, top_k):
    """The processed distribution at one position (§9 "Sampling"; @gpumesh/protocol
    sampledPosition): logit bias, penalties over the previous completion tokens, then the kept
    tokens (greedy, or top-k, top-p, min-p on the temperature-1 logits), then softmax(l / T) over
    them. Returns (ln p of `chosen` or None when not kept, entropy, variance of −ln p, the mass of
    the `top_k` most likely, edge gap)."""
    l = np.array(logits, dtype=np.float64)
    for key, bias in (sampling.get("logitBias") or {}).items():
        t = int(key)
        if 0 <= t < len(l):
            l[t] = -np.inf if bias <= -100 else l[t] + bias
    presence, frequency = sampling.get("presencePenalty", 0), sampling.get("frequencyPenalty", 0)
    window = list(previous)[-PENALTY_WINDOW_TOKENS:]
    if (presence or frequency) and window:
        ids, counts = np.unique(window, return_counts=True)
        l[ids] -= frequency * counts + presence
    kept = kept_tokens(l, sampling)
    is_kept = chosen in kept and l[chosen] > -np.inf
    edge = 0.0 if is_kept else float(l[kept].min() - l[chosen])
    temperature = sampling["temperature"]
    if temperature <= 0:
        return (0.0 if is_kept else None), 0.0, 0.0, 1.0, edge
    x = l[kept] / temperature
    x = x[x > -np.inf]
    top = x.max()
    log_z = np.log(np.exp(x - top).sum())
    lp = x - top - log_z
    p = np.exp(lp)
    entropy = float(-(p * lp).sum())
    variance = max(0.0, float((p * lp * lp).sum()) - entropy * entropy)
    mass = min(1.0, float(np.sort(p)[::-1][:top_k].sum()))
    sampled = float(l[chosen] / temperature - top - log_z) if is_kept else None
    return sampled, entropy, variance, mass, edge


def kept_tokens(l, sampling):
    """The token ids the sampler keeps: every unbanned one when nothing truncates, else ranked from
    the most likely (the lower id first on a tie) and cut by greedy, top-k, top-p (the fewest whose
    temperature-1 probabilities among those top-k kept sum to at least top_p), min-p."""
    greedy = sampling["temperature"] <= 0
    top_k, top_p, min_p = sampling.get("topK") or 0, sampling.get("topP", 1), sampling.get("minP") or 0
    ids = np.flatnonzero(l > -np.inf)
    if len(ids) == 0:  # every token banned
        return np.array([0])
    if not (greedy or top_k > 0 or top_p < 1 or min_p > 0):
        return ids
    order = ids[np.lexsort((ids, -l[ids]))]
    if greedy:
        return order[:1]
    kept = len(order) if top_k <= 0 else min(len(order), top_k)
    top = l[order[0]]
    if top_p < 1:
        w = np.exp(l[order[:kept]] - top)
        reached = np.flatnonzero(np.cumsum(w / w.sum()) >= top_p)
        if len(reached):
            kept = int(reached[0]) + 1
    if min_p > 0:
        floor, i = top + np.log(min_p), 1
        while i < kept and l[order[i]] >= floor:
            i += 1
        kept = i
    return order[:kept]
