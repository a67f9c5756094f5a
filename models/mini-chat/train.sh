#!/usr/bin/env bash
# Trains gpumesh/mini-chat from a clean checkout: data → vocabulary → tokens → PyTorch training →
# GGUF files (F16, Q8_0, Q4_0) → evaluation. `npm run train-model`; README.md beside this file.
# Needs Debian's PyTorch and a fast BLAS: apt-get install python3-torch libopenblas0-pthread.
# Environment: WORK (scratch folder, default .train/mini-chat), OUT (where the GGUF files go,
# default models/mini-chat), SEED (default 1), NAME (default gpumesh-mini-chat), TRAIN_ARGS (more
# train.py flags for every stage, e.g. "--width 128 --layers 2" for a smaller model).
set -euo pipefail
cd "$(dirname "$0")/../.."
WORK=${WORK:-.train/mini-chat}
OUT=${OUT:-models/mini-chat}
SEED=${SEED:-1}
NAME=${NAME:-gpumesh-mini-chat}
PY=/usr/bin/python3 # Debian's python3, which has python3-torch
TSX=(node --conditions=gpumesh-source --import tsx)
HERE=models/mini-chat

"$PY" -c 'import torch' 2>/dev/null || {
  echo "PyTorch is missing: apt-get install -y python3-torch libopenblas0-pthread" >&2
  exit 1
}
mkdir -p "$WORK" "$OUT"
began=$(date +%s)
say() { echo "[$(($(date +%s) - began)) s] $*"; }

say "1/6 conversations (seed $SEED; 10 % copy tasks, the slow-to-learn tasks weighted up) and the held-out set"
"$PY" "$HERE/data.py" --out "$WORK" --train 70000 --test 600 --seed "$SEED" --copy-share 0.1 --emphasis
say "2/6 rendered as the daemon renders them"
"${TSX[@]}" "$HERE/render.ts" text --data "$WORK/train.jsonl" --out "$WORK/render.txt"
say "3/6 vocabulary, then tokens"
"$PY" "$HERE/vocab.py" --text "$WORK/render.txt" --size 768 --out "$WORK/vocab.json"
"${TSX[@]}" "$HERE/render.ts" tokens --data "$WORK/train.jsonl" --vocab "$WORK/vocab.json" --out "$WORK/train"
say "4/6 training (models/mini-chat/README.md)"
# One BLAS thread: on two cores, OpenBLAS's own threads beside anything else running slow it down.
# shellcheck disable=SC2086 # TRAIN_ARGS is a list of flags
OPENBLAS_NUM_THREADS=1 "$PY" "$HERE/train.py" --data "$WORK/train" --out "$WORK/weights" --seed "$SEED" \
  --steps 6000 --batch 8 --warmup 100 --lr 2e-3 --prompt-weight 1.0 --checkpoints 1500,3000,4500 ${TRAIN_ARGS:-}
say "5/6 GGUF files"
"${TSX[@]}" "$HERE/export.ts" --weights "$WORK/weights" --vocab "$WORK/vocab.json" --out "$OUT" --name "$NAME" |
  tee "$WORK/files.jsonl"
"${TSX[@]}" "$HERE/parity.ts" --gguf "$OUT/$NAME-F16.gguf" --weights "$WORK/weights"
say "6/6 evaluation on the held-out conversations"
for quant in F16 Q8_0 Q4_0; do
  "${TSX[@]}" "$HERE/eval.ts" --model "$OUT/$NAME-$quant.gguf" --data "$WORK/test.jsonl" >"$WORK/eval-$quant.json"
  say "$quant: $(node -e 'const e=require(process.argv[1]);console.log(["exact","endOfTurn","jsonValid","toolCalls"].map(k=>`${k} ${e[k]?.share}`).join(", "),"· tokens/s",e.tokensPerSecond)' "$PWD/$WORK/eval-$quant.json")"
done
say "done: $OUT/$NAME-{F16,Q8_0,Q4_0}.gguf (sha256 in $WORK/files.jsonl; pin them in coordinator/src/catalog/models.json)"
