#!/usr/bin/env bash
# A GPU session's checks in one call of the lent machine (it starts bare, reaches no network, and is lent for
# minutes): first `python benchmarks/gpu_pack.py pack` here, then on the GPU machine, from the repository root,
# with .gpu carried:  bash benchmarks/gpu_session.sh
# It installs our pins over the machine's older transformers, rebuilds MiniLM, then runs `make test-gpu`'s tests
# and the GPU benchmarks, each under its own time limit so one hang cannot eat the lease. Logs and results go
# to $OUT (the device tool brings that folder back): versions.txt, test-gpu.log, bench.log, results.tar.gz.
set -u
SCRATCH=$(mktemp -d)  # wheels, models and caches of this run: the machine is bare and given back afterwards
OUT=${OUT:-$SCRATCH/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export EXPLORER_MODELS_DIR=$SCRATCH/models EXPLORER_CACHE_DIR=$SCRATCH/cache HF_HOME=$SCRATCH/hf
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SCRATCH/site" \
  .gpu/*.whl || exit 1
export PYTHONPATH=$SCRATCH/site
python3 benchmarks/gpu_pack.py unpack .gpu "$EXPLORER_MODELS_DIR" || exit 1

{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c "import sys, torch, transformers, sentence_transformers as st, tokenizers
print('python', sys.version.split()[0], '| torch', torch.__version__, 'cuda', torch.version.cuda, '| transformers',
      transformers.__version__, '| sentence-transformers', st.__version__, '| tokenizers', tokenizers.__version__)
print('gpu', torch.cuda.get_device_name(0), '| bf16', torch.cuda.is_bf16_supported(), '| cores', __import__('os').cpu_count())"
} > "$OUT/versions.txt" 2>&1
cat "$OUT/versions.txt"

step() {  # step SECONDS NAME COMMAND...: time-limited, logged, never stops the script
  local limit=$1 name=$2; shift 2
  echo "== $name (limit ${limit}s)" | tee -a "$OUT/bench.log"
  local t=$SECONDS
  timeout "$limit" "$@" >> "$OUT/bench.log" 2>&1
  echo "== $name: exit $? after $((SECONDS - t)) s" | tee -a "$OUT/bench.log"
}

STEPS=${STEPS:-tests,fillmask,similarity,generation,lab,compression}
if [[ $STEPS == *tests* ]]; then
  t=$SECONDS
  timeout "${TEST_LIMIT:-150}" python3 -m pytest -q -rs -m gpu tests/gpu -n 4 --dist loadfile > "$OUT/test-gpu.log" 2>&1
  echo "== tests/gpu: exit $? after $((SECONDS - t)) s"; tail -15 "$OUT/test-gpu.log"
fi
[[ $STEPS == *fillmask* ]] && step 45 "fill-mask, 64 prompts, BERT-base" \
  python3 benchmarks/bench_fillmask.py --only many --device cuda --size base --reps 5 --rounds 2
[[ $STEPS == *similarity* ]] && step 45 "similarity, 1,000 sentences, MiniLM" \
  python3 benchmarks/bench_similarity.py --device cuda --n 1000 --batches 32,64,128 --repeats 5
[[ $STEPS == *generation* ]] && step 90 "generation, 1B-class decoder, bfloat16" \
  python3 benchmarks/bench_generation.py --gpt2-random --shape llama-1b --dtype bfloat16 --device cuda \
  --new-tokens 32 --repeats 3
[[ $STEPS == *lab* ]] && step 70 "pretraining lab, the claims' objectives" \
  python3 benchmarks/pretrain_claims.py --device cuda --steps 150 --note "GPU session" \
  --out benchmarks/results/pretraining_claims-cuda.json
[[ $STEPS == *compression* ]] && step 45 "compression, MiniLM, fp16 and bf16" \
  python3 benchmarks/bench_compression.py --model sentence-bert --methods fp16,bf16,prune-50,heads-25 --device cuda
grep -E "^== " "$OUT/bench.log" | grep exit
tar czf "$OUT/results.tar.gz" benchmarks/results
