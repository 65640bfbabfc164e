/* The result structs' layout for scripts/gen-boundary.mjs: the byte offsets of their members and their
 * sizes, as JSON. Built as its own small wasm module (CMakeLists.txt llmem_layout) with the core's
 * headers and compiler, so the numbers are the core's; the generator writes them into wasm/generated.ts
 * (LAYOUT) and the page's core carries none of this text. The core checks the pair at load
 * (wasm/layout.h layout_sizes_check). */
#include <stddef.h>

#include "layout.h"
#include "llmem.h"
#include "result_text.h"

static char layout_text[8192];

int llmem_layout_check(void) { return layout_sizes_check(); }

static size_t put(size_t n, const char *s) { return text_append(layout_text, n, sizeof layout_text, s); }
static size_t put_num(size_t n, const char *key, size_t v) {
  n = put(n, "\"");
  n = put(n, key);
  n = put(n, "\":");
  n = text_append_int(layout_text, n, sizeof layout_text, (double)v);
  return put(n, ",");
}

/* {"result":{...offsets...},"rank":{...},"event":{...}} */
const char *llmem_result_layout(void) {
  size_t n = 0;
#define R(m) n = put_num(n, #m, offsetof(llmem_result, m))
#define K(m) n = put_num(n, #m, offsetof(llmem_rank_result, m))
#define E(m) n = put_num(n, #m, offsetof(llmem_event, m))
#define T(m) n = put_num(n, #m, offsetof(llmem_term, m))
#define F(m) n = put_num(n, #m, offsetof(llmem_rl_phase, m))
#define D(m) n = put_num(n, #m, offsetof(llmem_readings, m))
#define P(m) n = put_num(n, #m, offsetof(llmem_sweep_point, m))
#define S(m) n = put_num(n, #m, offsetof(llmem_search_result, m))
#define L(m) n = put_num(n, #m, offsetof(llmem_layout, m))
#define G(m) n = put_num(n, #m, offsetof(llmem_suggest_result, m))
#define H(m) n = put_num(n, #m, offsetof(llmem_suggestion, m))
#define O(m) n = put_num(n, #m, offsetof(llmem_search_options, m))
#define U(m) n = put_num(n, #m, offsetof(llmem_suggest_options, m))
  n = put(n, "{\"result\":{");
  R(status);
  R(error_field);
  R(error_path);
  R(error_message);
  R(per_gpu);
  R(peak_allocated_bytes);
  R(peak_allocated_stage);
  R(peak_at);
  R(rank_count);
  R(ranks);
  R(params_total);
  R(params_active);
  R(params_trainable);
  R(params_per_gpu);
  R(host_cpu_bytes);
  R(host_nvme_bytes);
  R(fits);
  R(utilization);
  R(capacity_bytes);
  R(warning_count);
  R(warnings);
  R(event_count);
  R(event_stride);
  R(events);
  R(term_count);
  R(terms);
  R(rl_phase_count);
  R(rl_phases);
  R(rl_kv_cache_bytes);
  R(rl_kv_cache_tokens);
  R(rl_engine_bytes);
  n = put_num(n, "size", sizeof(llmem_result));
  n = put(n, "\"end\":0},\"rank\":{");
  K(peak_allocated_bytes);
  K(peak_reserved_bytes);
  K(device_used_bytes);
  K(breakdown_bytes);
  K(persistent_bytes);
  K(fragmentation_bytes);
  K(largest_free_block_bytes);
  K(reserved_simulated);
  K(params_count);
  K(layers_count);
  K(mixer_layers_count);
  K(moe_layers_count);
  K(peak_phase);
  K(peak_micro_batch);
  K(peak_layer);
  K(stage);
  K(peak_bound);
  K(bound_stage);
  n = put_num(n, "size", sizeof(llmem_rank_result));
  n = put(n, "\"end\":0},\"event\":{");
  E(total_bytes);
  E(category_bytes);
  E(reserved_bytes);
  E(phase);
  E(micro_batch);
  E(layer);
  E(skipped_ops);
  n = put_num(n, "size", sizeof(llmem_event));
  n = put(n, "\"end\":0},\"rl_phase\":{");
  F(phase);
  F(peak_allocated_bytes);
  F(device_used_bytes);
  F(breakdown_bytes);
  F(model_bytes);
  n = put_num(n, "size", sizeof(llmem_rl_phase));
  n = put(n, "\"end\":0},\"term\":{");
  T(id);
  T(category);
  T(value_bytes);
  T(inputs);
  n = put_num(n, "size", sizeof(llmem_term));
  n = put(n, "\"end\":0},\"readings\":{");
  D(status);
  D(peak_allocated_bytes);
  D(peak_reserved_bytes);
  D(device_used_bytes);
  D(capacity_bytes);
  D(fits);
  n = put_num(n, "size", sizeof(llmem_readings));
  n = put(n, "\"end\":0},\"sweep_point\":{");
  P(value);
  P(readings);
  n = put_num(n, "size", sizeof(llmem_sweep_point));
  n = put(n, "\"end\":0},\"search\":{");
  S(status);
  S(error_field);
  S(candidates);
  S(valid);
  S(fitting);
  S(count);
  S(empty_reason);
  S(empty_field);
  S(global_batch);
  S(rejected);
  S(layouts);
  n = put_num(n, "status_count", LLMEM_STATUS_COUNT);
  n = put(n, "\"end\":0},\"layout\":{");
  L(dp);
  L(tp);
  L(pp);
  L(vpp);
  L(cp);
  L(ep);
  L(micro_batch);
  L(grad_accum);
  L(rollout_tp);
  L(engine);
  L(recompute);
  L(zero_stage);
  L(fsdp_strategy);
  L(distributed_optimizer);
  L(sequence_parallel);
  L(pp_schedule);
  L(offload_optimizer);
  L(offload_params);
  L(optimizer_dtype);
  L(device_used_bytes);
  L(step_seconds);
  L(tokens_per_second_per_gpu);
  L(pareto);
  n = put_num(n, "size", sizeof(llmem_layout));
  n = put(n, "\"end\":0},\"suggest\":{");
  G(status);
  G(error_field);
  G(base_fits);
  G(base_device_used_bytes);
  G(capacity_bytes);
  G(base_step_seconds);
  G(candidates);
  G(fewest_gpus);
  G(fewest_index);
  G(count);
  G(suggestions);
  n = put(n, "\"end\":0},\"suggestion\":{");
  H(values);
  H(fields);
  H(change_count);
  H(kind);
  H(peak_allocated_bytes);
  H(peak_reserved_bytes);
  H(device_used_bytes);
  H(host_cpu_bytes);
  H(host_cpu_bytes_per_node);
  H(host_nvme_bytes);
  H(step_seconds);
  H(time_ratio);
  H(gpus);
  n = put_num(n, "size", sizeof(llmem_suggestion));
  n = put(n, "\"end\":0},\"search_options\":{");
  O(gpus);
  O(global_batch);
  O(free_fraction);
  O(max_micro_batch);
  O(vary_sharding);
  O(vary_recompute);
  O(vary_offload);
  O(vary_optimizer_dtype);
  O(vary_engine);
  O(tp_across_nodes);
  n = put(n, "\"end\":0},\"suggest_options\":{");
  U(free_fraction);
  U(max_gpus);
  n = put(n, "\"end\":0}}");
#undef R
#undef K
#undef E
#undef T
#undef F
#undef D
#undef P
#undef S
#undef L
#undef G
#undef H
#undef O
#undef U
  return layout_text;
}
