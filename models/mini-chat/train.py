"""Trains the mini-chat model: a llama-architecture decoder (RMSNorm, rotary position embeddings on
adjacent pairs as llama.cpp's "normal" rope, SwiGLU feed-forward, tied input/output embeddings)
with PyTorch on the CPU, seeded.

Input: <data>.tokens (uint16) and <data>.mask (1 where the loss counts fully: answers and their end
of turn) from render.ts. Windows of --seq tokens start at a random conversation's BOS and run on
through the conversations after it. The loss is cross-entropy on every next token, weighted 1 on
answer tokens and --prompt-weight on the rest.

Output: <out>.bin, the float32 weights in GGUF tensor order, and <out>.json, their names and dims
in GGML order (a PyTorch [out, in] matrix is GGML [in, out], the same bytes), the shape and the
run's figures; with --checkpoints, the same for the weights after those steps.

    python3 models/mini-chat/train.py --data .train/train --out .train/weights --steps 1500
"""

import argparse
import json
import math
import os
import random
import struct
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(head_dim, length, base):
    inv = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(length).float(), inv)
    return angles.cos(), angles.sin()


def rope(x, cos, sin):
    # x: [batch, heads, time, head_dim]; rotate adjacent pairs (x0, x1), (x2, x3), ...
    x0, x1 = x[..., 0::2], x[..., 1::2]
    c, s = cos[: x.shape[2]], sin[: x.shape[2]]
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).flatten(-2)


class Block(nn.Module):
    def __init__(self, width, heads, kv_heads, ff):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, width // heads
        self.attn_norm = RMSNorm(width)
        self.q = nn.Linear(width, width, bias=False)
        self.k = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.v = nn.Linear(width, kv_heads * self.head_dim, bias=False)
        self.o = nn.Linear(width, width, bias=False)
        self.ffn_norm = RMSNorm(width)
        self.gate = nn.Linear(width, ff, bias=False)
        self.up = nn.Linear(width, ff, bias=False)
        self.down = nn.Linear(ff, width, bias=False)

    def forward(self, x, cos, sin, causal):
        b, t, _ = x.shape
        h = self.attn_norm(x)
        q = self.q(h).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        if self.kv_heads != self.heads:
            k = k.repeat_interleave(self.heads // self.kv_heads, dim=1)
            v = v.repeat_interleave(self.heads // self.kv_heads, dim=1)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.head_dim) + causal[:t, :t]
        a = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, -1)
        x = x + self.o(a)
        h = self.ffn_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Model(nn.Module):
    def __init__(self, vocab, width, layers, heads, kv_heads, ff, seq, rope_base):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.blocks = nn.ModuleList(Block(width, heads, kv_heads, ff) for _ in range(layers))
        self.norm = RMSNorm(width)
        cos, sin = rope_tables(width // heads, seq, rope_base)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        self.register_buffer("causal", torch.full((seq, seq), float("-inf")).triu(1), persistent=False)
        nn.init.normal_(self.embed.weight, std=0.02)
        for block in self.blocks:
            for lin in (block.q, block.k, block.v, block.gate, block.up):
                nn.init.normal_(lin.weight, std=0.02)
            for lin in (block.o, block.down):
                nn.init.normal_(lin.weight, std=0.02 / math.sqrt(2 * layers))

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x, self.cos, self.sin, self.causal)
        return self.norm(x) @ self.embed.weight.T


def gguf_tensors(model, layers):
    """(name, tensor) in GGUF order; output.weight is the tied embedding."""
    out = [("token_embd.weight", model.embed.weight)]
    for i, b in enumerate(model.blocks):
        out += [
            (f"blk.{i}.attn_norm.weight", b.attn_norm.weight),
            (f"blk.{i}.attn_q.weight", b.q.weight),
            (f"blk.{i}.attn_k.weight", b.k.weight),
            (f"blk.{i}.attn_v.weight", b.v.weight),
            (f"blk.{i}.attn_output.weight", b.o.weight),
            (f"blk.{i}.ffn_norm.weight", b.ffn_norm.weight),
            (f"blk.{i}.ffn_gate.weight", b.gate.weight),
            (f"blk.{i}.ffn_up.weight", b.up.weight),
            (f"blk.{i}.ffn_down.weight", b.down.weight),
        ]
    out += [("output_norm.weight", model.norm.weight), ("output.weight", model.embed.weight)]
    return out


def save(model, args, path, info):
    tensors = []
    with open(path + ".bin", "wb") as f:
        for name, t in gguf_tensors(model, args.layers):
            data = t.detach().float().contiguous()
            dims = list(reversed(data.shape))
            f.write(data.numpy().astype("<f4").tobytes())
            tensors.append({"name": name, "dims": dims})
    shape = {
        "layers": args.layers,
        "width": args.width,
        "heads": args.heads,
        "kvHeads": args.kv_heads,
        "feedForward": args.ff,
        "contextLength": args.context,
        "ropeFreqBase": args.rope_base,
    }
    json.dump({"shape": shape, "tensors": tensors, **info}, open(path + ".json", "w"), indent=1)


def load_weights(model, path):
    """Loads <path>.bin as written by save(), in GGUF tensor order (output.weight is tied)."""
    import numpy as np

    meta = json.load(open(path + ".json"))
    data = np.fromfile(path + ".bin", dtype="<f4")
    at = 0
    with torch.no_grad():
        for (name, t), info in zip(gguf_tensors(model, len(model.blocks)), meta["tensors"]):
            assert name == info["name"], (name, info["name"])
            n = t.numel()
            t.copy_(torch.from_numpy(data[at : at + n].copy()).view(t.shape))
            at += n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--ff", type=int, default=704)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--steps", type=int, default=800)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=60)
    ap.add_argument("--prompt-weight", type=float, default=0.2)
    ap.add_argument("--context", type=int, default=8192)
    ap.add_argument("--rope-base", type=float, default=10000.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--checkpoints", default="", help="steps after which to save, comma-separated")
    ap.add_argument("--init", default="", help="start from these weights (<path>.bin/.json) instead of random ones")
    ap.add_argument("--stop-after", type=int, default=0, help="end after this step (the schedule still spans --steps)")
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    random.seed(args.seed)
    torch.set_num_threads(args.threads)
    tokens = torch.frombuffer(bytearray(open(args.data + ".tokens", "rb").read()), dtype=torch.int16).long() & 0xFFFF
    mask = torch.frombuffer(bytearray(open(args.data + ".mask", "rb").read()), dtype=torch.uint8).float()
    vocab_size = json.load(open(os.path.join(os.path.dirname(args.data), "vocab.json")))["tokens"].__len__()
    bos = 1
    starts = (tokens == bos).nonzero().flatten()
    starts = starts[starts < len(tokens) - args.seq - 1]
    weight = mask * (1 - args.prompt_weight) + args.prompt_weight

    model = Model(vocab_size, args.width, args.layers, args.heads, args.kv_heads, args.ff, args.seq, args.rope_base)
    if args.init:
        load_weights(model, args.init)
    params = sum(p.numel() for p in model.parameters())
    decay = [p for n, p in model.named_parameters() if p.dim() == 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr,
        betas=(0.9, 0.95),
    )
    saves = {int(s) for s in args.checkpoints.split(",") if s}
    print(f"{params} parameters, {len(tokens)} tokens, {len(starts)} windows of {args.seq}", flush=True)
    began = time.time()
    generator = torch.Generator().manual_seed(args.seed)
    losses = []
    last = args.stop_after or args.steps
    for step in range(1, last + 1):
        lr = args.lr * min(1.0, step / args.warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / args.steps)))
        for g in opt.param_groups:
            g["lr"] = lr
        at = starts[torch.randint(len(starts), (args.batch,), generator=generator)]
        rows = at[:, None] + torch.arange(args.seq + 1)[None, :]
        x, y, w = tokens[rows[:, :-1]], tokens[rows[:, 1:]], weight[rows[:, 1:]]
        logits = model(x)
        loss_each = F.cross_entropy(logits.reshape(-1, vocab_size), y.reshape(-1), reduction="none")
        loss = (loss_each * w.reshape(-1)).sum() / w.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        answer = (loss_each * mask[rows[:, 1:]].reshape(-1)).sum() / mask[rows[:, 1:]].sum().clamp(min=1)
        losses.append(answer.item())
        if step % 20 == 0 or step == 1:
            elapsed = time.time() - began
            recent = sum(losses[-20:]) / len(losses[-20:])
            print(
                f"step {step}/{args.steps} loss {loss.item():.3f} answer-loss {recent:.3f} lr {lr:.2e} "
                f"{elapsed:.0f}s ({args.batch * args.seq * step / elapsed:.0f} tokens/s)",
                flush=True,
            )
        if step in saves:
            save(model, args, f"{args.out}-step{step}", {"step": step, "answerLoss": sum(losses[-20:]) / 20})
    elapsed = time.time() - began
    save(
        model,
        args,
        args.out,
        {
            "step": last,
            "answerLoss": sum(losses[-50:]) / len(losses[-50:]),
            "parameters": params,
            "seconds": round(elapsed),
            "tokensSeen": last * args.batch * args.seq,
            "seed": args.seed,
        },
    )
    print(f"trained {params} parameters in {elapsed:.0f}s; weights in {args.out}.bin", flush=True)


if __name__ == "__main__":
    main()
