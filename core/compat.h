/* Compat formulas: published estimators reproduced exactly, with their own
 * inputs (argument names as in the sources), so tests can feed them the
 * upstream unit-test vectors directly. */
#ifndef LLMEM_COMPAT_H
#define LLMEM_COMPAT_H

/* Megatron-LM / Megatron-Bridge arguments (megatron/training/arguments.py names). */
typedef struct {
  double hidden_size, num_attention_heads, kv_channels, num_query_groups;
  int group_query_attention;
  double num_layers, ffn_hidden_size;
  double num_experts; /* 0: dense */
  double moe_ffn_hidden_size, moe_shared_expert_intermediate_size, moe_router_topk, moe_latent_size;
  int moe_shared_expert_gate;
  double mtp_num_layers;
  int (*is_moe_layer)(const void *ctx, int layer); /* the moe_layer_freq pattern */
  const void *pattern_ctx;
  int swiglu, rmsnorm, add_bias_linear, untie_embeddings_and_output_weights;
  int multi_latent_attention;
  double q_lora_rank, kv_lora_rank, qk_head_dim, qk_pos_emb_head_dim, v_head_dim; /* q_lora_rank 0: none */
  double padded_vocab_size;
  double tensor_model_parallel_size, pipeline_model_parallel_size,
      virtual_pipeline_model_parallel_size; /* vpp 0: none */
  double expert_model_parallel_size, expert_tensor_parallel_size, context_parallel_size;
  double world_size, data_parallel_size;
  int use_distributed_optimizer;
  double seq_length, micro_batch_size, num_microbatches;
  double num_layers_in_first_pipeline_stage, num_layers_in_last_pipeline_stage; /* 0: even split */
} megatron_args;

typedef struct {
  double total, active, most_loaded, tp_most, rep_most, exp_most, edp, bytes;
} megatron_weights;

typedef struct {
  double dense_total, routed_total, embedding; /* parameter counts */
  double dense_gpu, routed_gpu, dense_bpp, routed_bpp;
  double dense_bytes, routed_bytes, weights_optimizer_bytes, activation_bytes;
} bridge_estimate;

/* MLM theoretical_memory_usage.py compute_weight_and_optimizer_memory (HEAD d98e8a64) */
megatron_weights megatron_weight_optimizer(const megatron_args *a);
/* MLM compute_activation_memory (SP + selective) and ..._without_sp */
double megatron_activation_sp(const megatron_args *a);
double megatron_activation_without_sp(const megatron_args *a);
/* Megatron-Bridge theoretical_memory_utils.py estimate_training_memory (067f987d) */
bridge_estimate bridge_estimate_memory(const megatron_args *a);

/* DeepSpeed estimate_zero2/zero3_model_states_mem_needs (edaa7221); legacy: docs / pre-2024-06 */
void deepspeed_zero2(double params, double gpus_per_node, double nodes, int cpu_offload, int legacy, double *gpu_bytes,
                     double *cpu_bytes);
void deepspeed_zero3(double params, double largest_layer_params, double gpus_per_node, double nodes, int cpu_offload,
                     int cpu_offload_params, int zero_init, double *gpu_bytes, double *cpu_bytes);

/* ZeRO paper §5, Table 1: model states per device for stage 0..3 */
double zero_paper_model_states(double params, double dp, double k, int stage);

/* Korthikanti et al. Table 2, bytes per layer */
typedef enum { KOR_NONE, KOR_TP, KOR_TP_SP, KOR_TP_SELECTIVE, KOR_TP_SP_SELECTIVE, KOR_FULL } korthikanti_row;
double korthikanti_layer_bytes(double s, double b, double h, double a, double t, korthikanti_row row);

#endif
