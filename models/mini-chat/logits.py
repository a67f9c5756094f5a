"""Next-token log-probabilities of trained weights under PyTorch, for each position of a token list:
the reference that parity.ts holds llama.cpp's forward pass of the exported GGUF to.

    python3 models/mini-chat/logits.py --weights .train/weights --vocab-size 2048 --ids 1,3,50,...
prints a JSON array: per position, [[token, logprob], ...] of the 8 most likely tokens.
"""

import argparse
import json
import sys

import torch

sys.path.insert(0, __import__("os").path.dirname(__file__))
from train import Model, load_weights  # noqa: E402


def load(path, vocab_size):
    meta = json.load(open(path + ".json"))
    s = meta["shape"]
    model = Model(vocab_size, s["width"], s["layers"], s["heads"], s["kvHeads"], s["feedForward"], 4096, s["ropeFreqBase"])
    load_weights(model, path)
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", required=True)
    ap.add_argument("--vocab-size", type=int, required=True)
    ap.add_argument("--ids", required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    model = load(args.weights, args.vocab_size)
    ids = torch.tensor([[int(i) for i in args.ids.split(",")]])
    with torch.no_grad():
        logprobs = model(ids)[0].log_softmax(-1)
    out = []
    for row in logprobs:
        top = row.topk(8)
        out.append([[int(i), float(v)] for v, i in zip(top.values, top.indices)])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
