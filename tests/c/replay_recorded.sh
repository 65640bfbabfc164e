#!/bin/sh
# Every allocator trace the probe recorded on a GPU (tests/measured/traces), replayed through the simulated
# allocator: given the run's own requests and frees, its peak reserve must be the recorded one within 0.1 %
# (an allocator rule the simulator lacks shows here; what llmem's modelled requests miss shows in accuracy).
# usage: replay_recorded.sh <llmem_trace_replay> <traces dir>
set -u
replay=$1 dir=$2 failed=0 n=0
for t in "$dir"/*.trace.gz; do
  n=$((n + 1))
  line=$(gzip -dc "$t" | "$replay" - | grep '^  peak reserved')
  # "  peak reserved  <recorded> GiB  <simulated> GiB  <+x.x> %"
  ok=$(printf '%s\n' "$line" | awk '$4 == "GiB" && $3 > 0 { d = $5 / $3 - 1; print (d <= 0.001 && d >= -0.001) ? 1 : 0; exit } END { if (NR == 0) print 0 }')
  [ "$ok" = 1 ] || { failed=$((failed + 1)); echo "FAIL $(basename "$t"): ${line:-no peak line}"; }
done
[ "$n" -gt 0 ] || { echo "no traces in $dir"; exit 1; }
echo "recorded traces: $((n - failed)) of $n replay to their peak reserve within 0.1 %"
[ "$failed" = 0 ]
