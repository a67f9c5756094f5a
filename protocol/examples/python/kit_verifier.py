"""Scores `verify` jobs on the conformance kit's model (NODE_PROTOCOL.md §9 "Verification", §13
"The kit model") with nothing but numpy: reads the GGUF, runs the llama forward pass teacher-forced
over prompt + completion, and gives each completion token's log-probability and whether it was in
the top k. A second implementation beside the reference's node-llama-cpp, so the kit's vectors are
shown to follow from the documents, not from one runtime. Debian: python3-numpy."""
import hashlib
import struct

import numpy as np

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

    def verify(self, prompt, completion, top_k):
        """Per completion token: its log-probability (4 decimals) and a '1'/'0' in-top-k flag."""
        logits = self.logits(list(prompt) + list(completion))[len(prompt) - 1:-1]
        top = logits.max(-1, keepdims=True)
        logprobs = logits - top - np.log(np.exp(logits - top).sum(-1, keepdims=True))
        chosen = logprobs[np.arange(len(completion)), completion]
        higher = (logprobs > chosen[:, None]).sum(-1)
        return [round(float(x), 4) for x in chosen], "".join("1" if r < top_k else "0" for r in higher)
