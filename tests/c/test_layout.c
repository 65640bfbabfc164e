/* Pipeline layout: even, uneven and interleaved stages; embedding and head placement. */
#include "check.h"
#include "internal.h"

static llmem_input keep;
static plan plan_for(const char *keys) {
  llmem_defaults(&keep);
  set_keys(&keep, keys);
  plan pl;
  int field;
  const char *detail;
  CHECK(plan_build(&keep, &pl, &field, &detail) == LLMEM_OK, "plan %s", keys);
  return pl;
}

int main(void) {
  plan pl = plan_for("model.layers=8 parallel.engine=megatron parallel.gpus=4 parallel.pp=4 parallel.pp_first_stage_layers=1 parallel.pp_last_stage_layers=3");
  int first, n;
  n = layout_stage_layers(&pl, 0, 0, &first);
  CHECK(n == 1 && first == 0, "uneven stage 0: %d layers from %d", n, first);
  n = layout_stage_layers(&pl, 1, 0, &first);
  CHECK(n == 2 && first == 1, "uneven stage 1: %d from %d", n, first);
  n = layout_stage_layers(&pl, 3, 0, &first);
  CHECK(n == 3 && first == 5, "uneven stage 3: %d from %d", n, first);

  /* interleaved: chunk j of stage r is model chunk j*p + r */
  pl = plan_for("model.layers=8 parallel.engine=megatron parallel.gpus=2 parallel.pp=2 parallel.vpp=2 parallel.pp_schedule=interleaved training.grad_accum=2");
  n = layout_stage_layers(&pl, 1, 1, &first);
  CHECK(n == 2 && first == 6, "vpp stage 1 chunk 1: %d from %d", n, first);
  n = layout_stage_layers(&pl, 0, 1, &first);
  CHECK(n == 2 && first == 4, "vpp stage 0 chunk 1: %d from %d", n, first);

  /* embedding on the first stage, head on the last; tied embeddings keep a copy on the last stage */
  pl = plan_for("model.layers=4 model.hidden=64 model.heads=4 model.ffn_hidden=128 model.vocab=1000 model.tied_embeddings=true parallel.engine=megatron parallel.gpus=2 parallel.pp=2");
  stage_layout s0, s1;
  layout_stage(&pl, 0, &s0);
  layout_stage(&pl, 1, &s1);
  CHECK(s0.has_embedding && !s0.has_head && s0.embedding_count == 1000 * 64, "stage 0 embedding");
  CHECK(s1.has_head && s1.head_count == 1000 * 64 && s1.final_norm_count == 64, "stage 1 tied copy + final norm");
  pl = plan_for("model.layers=4 model.hidden=64 model.heads=4 model.ffn_hidden=128 model.vocab=1000 model.tied_embeddings=true parallel.engine=single parallel.gpus=1");
  layout_stage(&pl, 0, &s0);
  CHECK(s0.head_count == 0 && s0.embedding_count == 64000, "tied, one stage: counted once");
  /* padded vocabulary: multiple of vocab_multiple * tp */
  pl = plan_for("model.vocab=50257 model.vocab_multiple=128 parallel.engine=megatron parallel.tp=2 parallel.gpus=2");
  CHECK(pl.vocab_padded == 50432, "padded vocab %g", pl.vocab_padded);
  return check_report("layout");
}
