#!/usr/bin/env bash
# What a lent GPU is for, as one call that fits its device time (about 8 minutes of the 15; the rest is the
# machine's start): on the device machine, `bash probe/gpu-session.sh $OUT`; it leaves one tar a block in OUT
# (the device tool returns at most 8 files), each with its bundle, summary and traces. Then here, per block,
# `tar -xf <files_at>/traced.tar` and `python3 probe/run_matrix.py --unbundle traced.json`.
#  1. traced: allocator traces (--trace-allocator) of the rows whose reserve llmem has not explained (allocated
#     exact, reserved 4-15 % apart, either way): `zcat <id>.trace.gz | build/rel/llmem_trace_replay -`, then
#     `--diff` against llmem's own trace (probe/README.md "The allocator's every event");
#  2. kernels: GPU time by kernel class (--profile-kernels) of single-GPU rows, each alone on the GPU: the
#     step-time model's parts against measured ones (tests/accuracy.ts prints them once the rows carry kernel_time);
#  3. expandable: four traced rows again with expandable_segments:True (new rows: the simulator's expandable path).
# Ran on 2026-11-28 (H200, 307 s; with two more calls of traced and profiled rows): the traces are in
# tests/measured/traces (ctest trace_replay_recorded replays them), the profiled rows' cases in tests/measured.
# The traced rows' memory is what they measure untraced; their step times carry the recording's cost: keep
# the untraced rows' step times. --plan-only (extra arguments go to run_matrix.py) translates without a GPU.
set -uo pipefail
out=${1:?usage: bash probe/gpu-session.sh OUT_DIR [run_matrix options, e.g. --plan-only]}
shift
cd "$(dirname "$0")/.."
mkdir -p "$out"
export PYTHONUNBUFFERED=1
traced=probe-h200-qwen2.5-0.5b-pure-adamw-s4096-b2,probe-h200-fake-qwen2.5-32b-fsdp2-dp32-full-s4096-b1
traced+=,probe-h200-fake-llama-3.1-8b-fsdp2-dp8-none-s2048-b1,probe-h200-fake-qwen2.5-0.5b-fsdp2-dp8-s2048-b2
traced+=,probe-h200-llama-3.2-1b-ddp1-mixed-s4096-b2,probe-h200-llama-3.1-8b-pure-adamw-full-s8192-b1
traced+=,probe-h200-fake-llama-3.1-70b-fsdp2-dp64-full-s4096-b1,probe-h200-fake-llama-3.1-8b-fsdp2-dp8-rootunits-full-s4096-b2
traced+=,probe-h200-llama-3.2-1b-mixed-adamw-s4096-b2,probe-h200-llama-3.2-1b-mixed-expandable-s4096-b2
traced+=,probe-h200-llama-3.2-3b-pure-chunked-s2048-b4,probe-h200-qwen2.5-0.5b-mixed-eager-s2048-b2
traced+=,probe-h200-llama-3.2-1b-mixed-perop-s4096-b2
profiled=probe-h200-llama-3.2-1b-mixed-adamw-s4096-b2,probe-h200-llama-3.1-8b-mixed-sgd-full-s4096-b1
profiled+=,probe-h200-qwen2.5-7b-pure-adamw-full-s4096-b1,probe-h200-llama-3.2-3b-mixed-full-s8192-b2
profiled+=,probe-h200-qwen2.5-0.5b-mixed-adamw-s2048-b4,probe-h200-llama-3.1-8b-lora16-s2048-b2
profiled+=,probe-h200-llama-3.2-1b-mixed-full-s8192-b4,probe-h200-qwen2.5-7b-lora8-s4096-b2
expandable=probe-h200-fake-llama-3.1-8b-fsdp2-dp8-none-expandable-s2048-b1
expandable+=,probe-h200-qwen2.5-0.5b-pure-adamw-expandable-s4096-b2
expandable+=,probe-h200-llama-3.1-8b-pure-adamw-full-expandable-s8192-b1
expandable+=,probe-h200-fake-qwen2.5-32b-fsdp2-dp32-full-expandable-s4096-b1

# block NAME ONLY [run_matrix options]: run, then pack its bundle, summary and traces as OUT/NAME.tar
# (split in 15 MiB parts if larger) so that a later block cut short cannot lose it.
block() {
  local name=$1 only=$2 dir="$out/$1"
  shift 2
  mkdir -p "$dir"
  python3 probe/run_matrix.py --only "$only" --bundle "$dir/$name.json" --summary "$dir/$name-summary.json" \
    --out "/tmp/llmem-$name" "$@"
  tar -C "$out" -cf "$out/$name.tar" "$name" && rm -rf "$dir"
  if [ "$(stat -c %s "$out/$name.tar")" -gt $((15 * 1024 * 1024)) ]; then
    split -b 15M -d "$out/$name.tar" "$out/$name.tar.part" && rm "$out/$name.tar"
  fi
}
block traced "$traced" --jobs 3 --gpu-gib 128 --budget-seconds 170 --deadline-seconds 220 \
  --trace-dir "$out/traced" "$@"
block kernels "$profiled" --jobs 1 --profile-kernels --budget-seconds 120 --deadline-seconds 160 "$@"
block expandable "$expandable" --jobs 3 --gpu-gib 128 --budget-seconds 60 --deadline-seconds 110 \
  --trace-dir "$out/expandable" "$@"
ls -la "$out"
