#!/usr/bin/env bash
# What a lent GPU is for, as one call that fits its device time (about 8 minutes of the 15; the rest is the
# machine's start): on the device machine, `bash probe/gpu-session.sh $OUT`, then here
# `python3 probe/run_matrix.py --unbundle <files_at>/kernels.json` and the traces under <files_at>/traces.
#  1. allocator traces (--trace-allocator) of the rows whose reserve llmem has not explained (the reserve is
#     allocated exactly but under by 5-15 %): `zcat <id>.trace.gz | build/rel/llmem_trace_replay -`, then
#     `--diff` against llmem's own trace (probe/README.md "The allocator's every event");
#  2. GPU time by kernel class (--profile-kernels) of single-GPU rows, each alone on the GPU: the step-time
#     model's parts against measured ones (tests/accuracy.ts prints them once the rows carry kernel_time).
# The traced rows' memory is what they measure untraced; their step times carry the recording's cost: keep
# the untraced rows' step times. --plan-only (extra arguments go to run_matrix.py) translates without a GPU.
set -uo pipefail
out=${1:?usage: bash probe/gpu-session.sh OUT_DIR [run_matrix options, e.g. --plan-only]}
shift
cd "$(dirname "$0")/.."
mkdir -p "$out"
traced=probe-h200-qwen2.5-0.5b-pure-adamw-s4096-b2,probe-h200-fake-qwen2.5-32b-fsdp2-dp32-full-s4096-b1
traced+=,probe-h200-fake-llama-3.1-8b-fsdp2-dp8-none-s2048-b1,probe-h200-fake-qwen2.5-0.5b-fsdp2-dp8-s2048-b2
traced+=,probe-h200-llama-3.2-1b-ddp1-mixed-s4096-b2,probe-h200-llama-3.1-8b-pure-adamw-full-s8192-b1
profiled=probe-h200-llama-3.2-1b-mixed-adamw-s4096-b2,probe-h200-llama-3.1-8b-mixed-sgd-full-s4096-b1
profiled+=,probe-h200-qwen2.5-7b-pure-adamw-full-s4096-b1,probe-h200-llama-3.2-3b-mixed-full-s8192-b2
python3 probe/run_matrix.py --only "$traced" --jobs 3 --gpu-gib 128 --budget-seconds 200 --deadline-seconds 250 \
  --trace-dir "$out/traces" --bundle "$out/traced.json" --summary "$out/traced-summary.json" --out /tmp/llmem-traced "$@"
python3 probe/run_matrix.py --only "$profiled" --jobs 1 --profile-kernels --budget-seconds 180 --deadline-seconds 230 \
  --bundle "$out/kernels.json" --summary "$out/kernels-summary.json" --out /tmp/llmem-kernels "$@"
