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

say "1/6 conversations: stage 1 (seed $SEED), stage 2 (12 % copy tasks), stage 3 (half copy tasks)"
"$PY" "$HERE/data.py" --out "$WORK" --train 60000 --test 600 --seed "$SEED"
for stage in 2 3; do
  mkdir -p "$WORK/stage$stage"
  share=$([ "$stage" = 2 ] && echo 0.12 || echo 0.5)
  count=$([ "$stage" = 2 ] && echo 40000 || echo 16000)
  "$PY" "$HERE/data.py" --out "$WORK/stage$stage" --train "$count" --test 10 --seed "$((SEED + stage - 1))" \
    --copy-share "$share" --exclude "$WORK/test.jsonl"
done
say "2/6 rendered as the daemon renders them"
"${TSX[@]}" "$HERE/render.ts" text --data "$WORK/train.jsonl" --out "$WORK/render.txt"
say "3/6 vocabulary, then tokens"
"$PY" "$HERE/vocab.py" --text "$WORK/render.txt" --size 2048 --out "$WORK/vocab.json"
"${TSX[@]}" "$HERE/render.ts" tokens --data "$WORK/train.jsonl" --vocab "$WORK/vocab.json" --out "$WORK/train"
for stage in 2 3; do
  cp "$WORK/vocab.json" "$WORK/stage$stage/vocab.json"
  "${TSX[@]}" "$HERE/render.ts" tokens --data "$WORK/stage$stage/train.jsonl" --vocab "$WORK/vocab.json" \
    --out "$WORK/stage$stage/train"
done
say "4/6 training in three stages (models/mini-chat/README.md)"
# shellcheck disable=SC2086 # TRAIN_ARGS is a list of flags
"$PY" "$HERE/train.py" --data "$WORK/train" --out "$WORK/stage1" --seed "$SEED" --steps 800 --stop-after 400 \
  --checkpoints 200 ${TRAIN_ARGS:-}
# shellcheck disable=SC2086
"$PY" "$HERE/train.py" --data "$WORK/stage2/train" --out "$WORK/stage2/weights" --seed "$((SEED + 1))" \
  --init "$WORK/stage1" --steps 400 --stop-after 200 --lr 2e-3 --warmup 20 --prompt-weight 1.0 ${TRAIN_ARGS:-}
# shellcheck disable=SC2086
"$PY" "$HERE/train.py" --data "$WORK/stage3/train" --out "$WORK/weights" --seed "$((SEED + 2))" \
  --init "$WORK/stage2/weights" --steps 180 --lr 2e-3 --warmup 10 --prompt-weight 1.0 --checkpoints 90 ${TRAIN_ARGS:-}
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
