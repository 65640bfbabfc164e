/* Training-stack profiles (docs/memory-model.md §14): which mechanisms a
 * framework at a version uses, as the automatic values of nullable keys.
 * One row per (framework, months, key): the first row that matches wins,
 * then the generic row; an explicit key always wins over both. */
#include <math.h>

#include "internal.h"

#define YM(year, month) ((year)*12 + (month)-1)
#define KEY(member) LLMEM_FIELD_##member

/* WHEN_TRL_RL: an RL algorithm run by TRL's trainers: the HF Trainer stack itself (TRL, ms-swift's trainers on
 * TRL's) and axolotl (TRL's DPO / GRPO trainers); not the stacks that merely inherit its model code (OpenRLHF on
 * DeepSpeed upcasts its logits; LLaMA-Factory's DPO takes log_softmax of fp32 logits itself) */
/* WHEN_DDP_FINDS_UNUSED: the HF Trainer's own choice of DDP's find_unused_parameters: a model that is not a
 * PreTrainedModel (a PEFT model: adapters) or one without gradient checkpointing (recompute none) */
enum {
  WHEN_ALWAYS,
  WHEN_COMPILE,
  WHEN_FULL,
  WHEN_ADAPTERS,
  WHEN_TP,
  WHEN_FSDP1,
  WHEN_FSDP2,
  WHEN_TRL_RL,
  WHEN_DDP_FINDS_UNUSED
};

typedef struct {
  int framework;   /* LLMEM_FW_* */
  int from_month;  /* first month the row holds, 0: from the start */
  int until_month; /* first month it no longer holds, 0: still holds */
  int field;       /* index in the field table */
  double value;
  int when; /* only with torch.compile, full fine-tuning, adapters, TP, FSDP1 or FSDP2 */
  int term; /* the "why this number" term the value shapes */
  const char *source;
} profile_row;

#define T_OPT LLMEM_TERM_TEMPORARIES
#define T_LOSS LLMEM_TERM_LOGITS
#define T_ACT LLMEM_TERM_ACTIVATIONS
#define T_WTRANS LLMEM_TERM_WEIGHTS_TRANSIENT
#define T_WEIGHTS LLMEM_TERM_WEIGHTS
#define T_COMM LLMEM_TERM_COMM
#define T_GRADS LLMEM_TERM_GRADIENTS

/* the source texts: in the wasm build, wasm/profile-sources.json by row (profiles.def's header) */
#ifdef LLMEM_PROFILE_TEXT_IN_JS
#define SRC(text) 0
#else
#define SRC(text) text
#endif

static const profile_row rows[] = {
#include "profiles.def"
};
#define ROW_COUNT (int)(sizeof(rows) / sizeof(rows[0]))

/* Stacks that run another's code for what they do not set themselves:
 * axolotl and LLaMA-Factory build on the HF Trainer, NeMo 2 on Megatron Core;
 * accelerate and DeepSpeed users train transformers models. LLaMA-Factory's
 * Megatron runs (USE_MCA=1 mcore_adapter, USE_MEGATRON_BRIDGE=1) train with
 * Megatron Core's loop, optimizer and loss: Megatron's rows. */
static int parent_of(int framework, const llmem_input *in) {
  if (framework == LLMEM_FW_LLAMAFACTORY && in->engine == LLMEM_ENGINE_MEGATRON) return LLMEM_FW_MEGATRON;
  switch (framework) {
    case LLMEM_FW_AXOLOTL:
    case LLMEM_FW_LLAMAFACTORY:
    case LLMEM_FW_ACCELERATE:
    case LLMEM_FW_DEEPSPEED: return LLMEM_FW_HF_TRAINER;
    case LLMEM_FW_NEMO: return LLMEM_FW_MEGATRON;
    default: return LLMEM_FW_GENERIC;
  }
}

static int condition_holds(int when, const llmem_input *in) {
  switch (when) {
    case WHEN_COMPILE: return in->torch_compile != 0;
    case WHEN_FULL: return in->ft_method == LLMEM_FT_FULL;
    case WHEN_ADAPTERS: return in->ft_method != LLMEM_FT_FULL;
    case WHEN_TP: return in->tp > 1;
    case WHEN_FSDP1: return in->engine == LLMEM_ENGINE_FSDP1;
    case WHEN_FSDP2: return in->engine == LLMEM_ENGINE_FSDP2;
    case WHEN_TRL_RL:
      return in->rl_algorithm != LLMEM_RL_NONE &&
             (in->framework == LLMEM_FW_HF_TRAINER || in->framework == LLMEM_FW_AXOLOTL);
    case WHEN_DDP_FINDS_UNUSED: return in->ft_method != LLMEM_FT_FULL || in->recompute == LLMEM_RECOMPUTE_NONE;
    default: return 1;
  }
}

static int row_holds(const profile_row *r, int framework, const llmem_input *in, int field) {
  if (r->field != field || r->framework != framework || !condition_holds(r->when, in)) return 0;
  double month = in->framework_month;
  if (isnan(month)) return r->until_month == 0; /* no version: the current code */
  return (r->from_month == 0 || month >= r->from_month) && (r->until_month == 0 || month < r->until_month);
}

static const profile_row *profile_row_for(const llmem_input *in, int field) {
  for (int fw = (int)in->framework;; fw = parent_of(fw, in)) {
    for (int i = 0; i < ROW_COUNT; i++)
      if (row_holds(&rows[i], fw, in, field)) return &rows[i];
    if (fw == LLMEM_FW_GENERIC) return 0;
  }
}

int llmem_profile_row(const llmem_input *in, int field) {
  if (!in || field < 0 || field >= LLMEM_FIELD_COUNT || !isnan(input_value(in, field))) return -1;
  const profile_row *r = profile_row_for(in, field);
  return r ? (int)(r - rows) : -1;
}

double llmem_profile_value(const llmem_input *in, int field, int *term, const char **source) {
  if (term) *term = -1;
  if (source) *source = 0;
  if (!in || field < 0 || field >= LLMEM_FIELD_COUNT || !isnan(input_value(in, field))) return NAN;
  const profile_row *r = profile_row_for(in, field);
  if (!r) return NAN;
  if (term) *term = r->term;
  if (source) *source = r->source;
  return r->value;
}

double profiled(const llmem_input *in, int field) {
  double v = input_value(in, field);
  return isnan(v) ? llmem_profile_value(in, field, 0, 0) : v;
}
