/* The stage walk that accounts for repeated passes without walking them
 * gives what walking every pass of every micro-batch gives, bit for bit:
 * the peak, its place and parts, reserved and device bytes, for every stage
 * of random configs under every schedule. And the schedule's order is
 * Megatron's (the reference lists below walk it pass by pass). */
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "check.h"
#include "sim.h"

/* The pass order, listed one by one (schedules.py; gpipe: all forwards, then all backwards). */
static int reference_order(const plan *pl, int stage, sched_op *ops) {
  int p = (int)pl->in->pp, v = (int)pl->in->vpp, m = (int)pl->grad_accum, n = 0;
  if (plan_paired_chunks(pl)) { /* V, DualPipe: the order is checked against the tables in check_v_schedules */
    schedule sc;
    schedule_init(&sc, pl, stage);
    for (int i = 0; i < sc.op_count; i++) ops[n++] = schedule_op(&sc, i);
    return n;
  }
  if (p == 1) {
    for (int i = 0; i < m; i++) ops[n++] = (sched_op){0, i, 0, 0}, ops[n++] = (sched_op){1, i, 0, 0};
    return n;
  }
  if (pl->in->pp_schedule == LLMEM_PP_GPIPE) {
    for (int i = 0; i < m; i++) ops[n++] = (sched_op){0, i, 0, 0};
    for (int i = 0; i < m; i++) ops[n++] = (sched_op){1, i, 0, 0};
    return n;
  }
  if (pl->in->pp_schedule != LLMEM_PP_INTERLEAVED) v = 1;
  int g = v == 1 ? 1 : (int)pl->vpp_group;
  /* get_schedule_table: groups of g micro-batches (the last: from its start to m), each through every chunk */
  static int table_mb[1 << 16], table_chunk[1 << 16];
  int t = 0;
  if (v == 1)
    for (int i = 0; i < m; i++) table_mb[t] = i, table_chunk[t++] = 0;
  else
    for (int lo = 0; lo < m; lo += g) {
      int hi = lo + g >= m ? m : lo + g;
      for (int c = 0; c < v; c++)
        for (int i = lo; i < hi; i++) table_mb[t] = i, table_chunk[t++] = c;
      if (hi == m) break;
    }
  int total = m * v, warm = v == 1 ? p - stage - 1 : 2 * (p - stage - 1) + (v - 1) * g, f = 0, b = 0;
  if (warm > total) warm = total;
#define FWD(k) \
  (sched_op) { 0, table_mb[k], table_chunk[k], 0 }
#define BWD(k) \
  (sched_op) { 1, table_mb[k], v - 1 - table_chunk[k], 0 }
  for (; f < warm; f++) ops[n++] = FWD(f);
  while (f < total) ops[n++] = FWD(f), f++, ops[n++] = BWD(b), b++;
  while (b < total) ops[n++] = BWD(b), b++;
#undef FWD
#undef BWD
  return n;
}

static void check_order(int pp, int vpp, int m, int kind, int group) {
  static sched_op want[1 << 16];
  llmem_input in; /* the keys the schedule reads; the rest zero, as the plan's */
  memset(&in, 0, sizeof in);
  in.pp = pp, in.vpp = vpp, in.pp_schedule = kind;
  plan pl;
  memset(&pl, 0, sizeof pl);
  pl.in = &in;
  pl.grad_accum = m, pl.vpp_group = group;
  for (int s = 0; s < pp; s++) {
    int n = reference_order(&pl, s, want);
    schedule sc;
    schedule_init(&sc, &pl, s);
    CHECK(sc.op_count == n, "pp %d vpp %d m %d stage %d: %d passes, want %d", pp, vpp, m, s, sc.op_count, n);
    int bad = 0;
    for (int i = 0; i < n; i++) {
      sched_op o = schedule_op(&sc, i);
      bad += o.backward != want[i].backward || o.mb != want[i].mb || o.chunk != want[i].chunk;
    }
    /* runs tile the order, each copy the same passes by kind and chunk */
    int i = 0;
    while (i < n && !bad) {
      int length, reps;
      schedule_run(&sc, i, &length, &reps);
      if (length < 1 || reps < 1 || i + length * reps > n) {
        bad++;
        break;
      }
      for (int k = 1; k < reps; k++)
        for (int j = 0; j < length; j++) {
          sched_op a = want[i + j], b = want[i + k * length + j];
          bad += a.backward != b.backward || a.chunk != b.chunk || a.split != b.split;
        }
      i += length * reps;
    }
    CHECK(!bad && i == n, "schedule %d pp %d vpp %d m %d stage %d: order and runs", kind, pp, vpp, m, s);
    /* each chunk's first forward and first backward among the forwards (backwards) */
    int seen[2][LLMEM_MAX_VPP] = {{0}}, count[2] = {0, 0};
    for (int k = 0; k < n && sc.kind != SCHED_V; k++) {
      sched_op o = want[k];
      if (!seen[o.backward][o.chunk]++)
        CHECK(schedule_first_virtual(&sc, o.backward, o.chunk) == count[o.backward],
              "pp %d vpp %d m %d stage %d: chunk %d's first %s is pass %d, not %d", pp, vpp, m, s, o.chunk,
              o.backward ? "backward" : "forward", count[o.backward], schedule_first_virtual(&sc, o.backward, o.chunk));
      count[o.backward]++;
    }
  }
}

/* The V schedules for p = 4 ranks, m = 8 micro-batches, written out by hand
 * from the sources' loops: pass, chunk, micro-batch (F forward, B whole
 * backward, I backward for the inputs, W backward for the weights).
 * ZB-V: pytorch/pytorch torch/distributed/pipelining/schedules.py @1fd7abc
 * ScheduleZBVZeroBubble (warmup_n1 F0, warmup_n2 F1F0, warmup_n3 F1I1W1,
 * stable F0I0W0F1I1W1 then I0W0F1I1W1, cooldown_n1 I0I1, cooldown_n2 I0W0,
 * the W1s, the W0s). DualPipeV: deepseek-ai/DualPipe dualpipe/dualpipev.py
 * @3da1bbe DualPipeV.step steps 1-8, its W passes FIFO over the rank. */
static const char *zbv_p4_m8[4] = {
    "F0:0 F0:1 F0:2 F0:3 F0:4 F0:5 F0:6 "
    "F1:0 I1:0 W1:0 F1:1 I1:1 W1:1 F1:2 I1:2 W1:2 F1:3 I1:3 W1:3 "
    "F0:7 I0:0 W0:0 F1:4 I1:4 W1:4 "
    "I0:1 W0:1 F1:5 I1:5 W1:5 I0:2 W0:2 F1:6 I1:6 W1:6 I0:3 W0:3 F1:7 I1:7 W1:7 "
    "I0:4 W0:4 I0:5 W0:5 I0:6 W0:6 I0:7 W0:7",
    "F0:0 F0:1 F0:2 F0:3 F0:4 F1:0 F0:5 "
    "F1:1 I1:0 W1:0 F1:2 I1:1 W1:1 F1:3 I1:2 W1:2 "
    "F0:6 I0:0 W0:0 F1:4 I1:3 W1:3 F0:7 I0:1 W0:1 F1:5 I1:4 W1:4 "
    "I0:2 W0:2 F1:6 I1:5 W1:5 I0:3 W0:3 F1:7 I1:6 W1:6 "
    "I0:4 I1:7 I0:5 W0:4 I0:6 W0:5 I0:7 W0:6 W1:7 W0:7",
    "F0:0 F0:1 F0:2 F1:0 F0:3 F1:1 F0:4 "
    "F1:2 I1:0 W1:0 F1:3 I1:1 W1:1 "
    "F0:5 I0:0 W0:0 F1:4 I1:2 W1:2 F0:6 I0:1 W0:1 F1:5 I1:3 W1:3 F0:7 I0:2 W0:2 F1:6 I1:4 W1:4 "
    "I0:3 W0:3 F1:7 I1:5 W1:5 "
    "I0:4 I1:6 I0:5 I1:7 I0:6 W0:4 I0:7 W0:5 W1:6 W1:7 W0:6 W0:7",
    "F0:0 F1:0 F0:1 F1:1 F0:2 F1:2 F0:3 "
    "F1:3 I1:0 W1:0 "
    "F0:4 I0:0 W0:0 F1:4 I1:1 W1:1 F0:5 I0:1 W0:1 F1:5 I1:2 W1:2 "
    "F0:6 I0:2 W0:2 F1:6 I1:3 W1:3 F0:7 I0:3 W0:3 F1:7 I1:4 W1:4 "
    "I0:4 I1:5 I0:5 I1:6 I0:6 I1:7 I0:7 W0:4 W1:5 W1:6 W1:7 W0:5 W0:6 W0:7",
};
static const char *dualpipev_p4_m8[4] = {
    "F0:0 F0:1 F0:2 F0:3 F0:4 F0:5 "                /* step 1 */
    "F0:6 F1:0 "                                    /* step 2 */
    "I1:0 W1:0 F1:1 I1:1 W1:1 F1:2 I1:2 W1:2 F1:3 " /* step 3 */
    "F0:7 B1:3 F1:4 B0:0 "                          /* step 4 */
    "B1:4 F1:5 B0:1 B1:5 F1:6 B0:2 B1:6 F1:7 B0:3 " /* step 5 */
    "B1:7 I0:4 "                                    /* step 6 */
    "W0:4 I0:5 W0:5 I0:6 W0:6 I0:7 "                /* step 7 */
    "W0:7",                                         /* step 8 */
    "F0:0 F0:1 F0:2 F0:3 "
    "F0:4 F1:0 F0:5 F1:1 "
    "I1:0 W1:0 F1:2 I1:1 W1:1 F1:3 "
    "F0:6 B1:2 F1:4 B0:0 F0:7 B1:3 F1:5 B0:1 "
    "B1:4 F1:6 B0:2 B1:5 F1:7 B0:3 "
    "B1:6 B0:4 I1:7 I0:5 "
    "W1:7 I0:6 W0:5 I0:7 "
    "W0:6 W0:7",
    "F0:0 F0:1 "
    "F0:2 F1:0 F0:3 F1:1 F0:4 F1:2 "
    "I1:0 W1:0 F1:3 "
    "F0:5 B1:1 F1:4 B0:0 F0:6 B1:2 F1:5 B0:1 F0:7 B1:3 F1:6 B0:2 "
    "B1:4 F1:7 B0:3 "
    "B1:5 B0:4 B1:6 I0:5 I1:7 I0:6 "
    "W0:5 I0:7 "
    "W1:7 W0:6 W0:7",
    "F0:0 F1:0 F0:1 F1:1 F0:2 F1:2 F0:3 F1:3 "
    "F0:4 B1:0 F1:4 B0:0 F0:5 B1:1 F1:5 B0:1 F0:6 B1:2 F1:6 B0:2 F0:7 B1:3 F1:7 B0:3 "
    "B1:4 B0:4 B1:5 B0:5 I1:6 I0:6 I1:7 I0:7 "
    "W1:6 W0:6 W1:7 W0:7",
};

/* DualPipe for p = 4 ranks and m = 20 micro-batches (the source's example,
 * examples/example_dualpipe.py num_chunks = 20), 10 each way: deepseek-ai/DualPipe
 * dualpipe/dualpipe.py @3da1bbe DualPipe.step steps 1-8 with num_half_ranks
 * = 2, half_rank h = min(r, 3 - r) (h = 0: ranks 0 and 3; h = 1: ranks 1
 * and 2), half_num_chunks = 10; chunk 0 is the step's phase 0 (model stage
 * h: ranks 0, 1 the forward direction's stage r, ranks 2, 3 the reverse
 * direction's stage 3 - r after phase ^= is_in_second_half), chunk 1 phase 1
 * (model stage 3 - h); micro-batch k of chunk 1 is the other direction's
 * k-th. Step 6 splits from i = step_6 // 2 (h = 0: the B0; h = 1: both), the
 * W passes (_weight_chunk: WeightGradStore.pop) first-in first-out. */
#define DUALPIPE_H0                                              \
  "F0:0 F0:1 "      /* step 1 */                                 \
  "F0:2 F1:0 "      /* step 2 */                                 \
  "I1:0 W1:0 F1:1 " /* step 3 */                                 \
  "F0:3 B1:1 F1:2 B0:0 F0:4 B1:2 F1:3 B0:1 F0:5 B1:3 F1:4 B0:2 " \
  "F0:6 B1:4 F1:5 B0:3 F0:7 B1:5 F1:6 B0:4 F0:8 B1:6 F1:7 B0:5 " \
  "F0:9 B1:7 F1:8 B0:6 " /* step 4 */                            \
  "B1:8 F1:9 B0:7 "      /* step 5 */                            \
  "B1:9 I0:8 "           /* step 6 */                            \
  "W0:8 I0:9 "           /* step 7 */                            \
  "W0:9"                 /* step 8 */
#define DUALPIPE_H1                                              \
  "F0:0 F1:0 F0:1 F1:1 " /* step 2 */                            \
  "F0:2 B1:0 F1:2 B0:0 F0:3 B1:1 F1:3 B0:1 F0:4 B1:2 F1:4 B0:2 " \
  "F0:5 B1:3 F1:5 B0:3 F0:6 B1:4 F1:6 B0:4 F0:7 B1:5 F1:7 B0:5 " \
  "F0:8 B1:6 F1:8 B0:6 F0:9 B1:7 F1:9 B0:7 " /* step 4 */        \
  "B1:8 B0:8 I1:9 I0:9 "                     /* step 6 */        \
  "W1:9 W0:9"                                /* step 8 */
static const char *dualpipe_p4_m20[4] = {DUALPIPE_H0, DUALPIPE_H1, DUALPIPE_H1, DUALPIPE_H0};

static void check_v_table(int kind, int p, int m, const char *const *table) {
  llmem_input in;
  memset(&in, 0, sizeof in);
  in.pp = p, in.vpp = 2, in.pp_schedule = kind;
  plan pl;
  memset(&pl, 0, sizeof pl);
  pl.in = &in;
  pl.grad_accum = m;
  for (int r = 0; r < p; r++) {
    schedule sc;
    schedule_init(&sc, &pl, r);
    int i = 0, bad = -1;
    for (const char *c = table[r]; *c;) {
      while (*c == ' ') c++;
      if (!*c) break;
      char pass = c[0];
      int chunk = c[1] - '0', mb = atoi(c + 3);
      while (*c && *c != ' ') c++;
      sched_op o = i < sc.op_count ? schedule_op(&sc, i) : (sched_op){-1, -1, -1, -1};
      int split = pass == 'I' ? SPLIT_I : pass == 'W' ? SPLIT_W : 0;
      if (bad < 0 && (o.backward != (pass != 'F') || o.split != split || o.chunk != chunk || o.mb != mb)) bad = i;
      i++;
    }
    CHECK(bad < 0 && i == sc.op_count, "V schedule %d rank %d: pass %d differs from the table (%d passes, want %d)",
          kind, r, bad, sc.op_count, i);
  }
}

/* Every forward's micro-batch leaves once (whole B or W), each I before its W;
 * the most micro-batch chunks live on a rank at once. */
static int v_peak_in_flight(int kind, int p, int m, int r) {
  llmem_input in;
  memset(&in, 0, sizeof in);
  in.pp = p, in.vpp = 2, in.pp_schedule = kind;
  plan pl;
  memset(&pl, 0, sizeof pl);
  pl.in = &in;
  pl.grad_accum = m;
  schedule sc;
  schedule_init(&sc, &pl, r);
  static signed char state[2][4096]; /* 0 none, 1 forward, 2 I done, 3 gone */
  memset(state, 0, sizeof state);
  int live = 0, peak = 0, bad = 0;
  if (kind == LLMEM_PP_DUALPIPE) m /= 2; /* each direction's micro-batches through one chunk */
  for (int i = 0; i < sc.op_count; i++) {
    sched_op o = schedule_op(&sc, i);
    if (o.mb < 0 || o.mb >= m || o.chunk < 0 || o.chunk > 1) return -1;
    signed char *st = &state[o.chunk][o.mb];
    if (!o.backward) bad += *st != 0, *st = 1;
    else if (o.split == SPLIT_I) bad += *st != 1, *st = 2;
    else if (o.split == SPLIT_W) bad += *st != 2, *st = 3;
    else bad += *st != 1, *st = 3;
    live += sched_live_change(o);
    if (live > peak) peak = live;
  }
  for (int c = 0; c < 2; c++)
    for (int k = 0; k < m; k++) bad += state[c][k] != 3;
  return bad ? -1 : peak;
}

static void check_v_schedules(void) {
  check_v_table(LLMEM_PP_ZB_V, 4, 8, zbv_p4_m8);
  check_v_table(LLMEM_PP_DUALPIPE_V, 4, 8, dualpipev_p4_m8);
  check_v_table(LLMEM_PP_DUALPIPE, 4, 20, dualpipe_p4_m20);
  /* DualPipe: PP + 1 micro-batches of one stage (L/p layers) live on every
   * rank (the DualPipe README's table), for every even m >= 2p (the assert) */
  for (int p = 2; p <= 8; p += 2)
    for (int m = 2 * p; m <= 6 * p; m += 2)
      for (int r = 0; r < p; r++) {
        int dp = v_peak_in_flight(LLMEM_PP_DUALPIPE, p, m, r);
        CHECK(dp == p + 1, "dualpipe p %d m %d rank %d: %d stage micro-batches live, want %d", p, m, r, dp, p + 1);
      }
  for (int p = 2; p <= 8; p++)
    for (int m = 2 * p - 1; m <= 6 * p; m++)
      for (int r = 0; r < p; r++) {
        /* ZB-V: 2p chunk micro-batches, 1F1B's first rank (p stage micro-batches;
         * zbv.py max_mem = f_mem * n_stage * 2) on every rank */
        int zbv = v_peak_in_flight(LLMEM_PP_ZB_V, p, m, r);
        CHECK(zbv == 2 * p, "zb_v p %d m %d rank %d: %d chunk micro-batches live, want %d", p, m, r, zbv, 2 * p);
        /* DualPipeV: PP + 1 with PP = 2p stages (the DualPipe README's table) */
        if (m < 2 * p) continue;
        int dpv = v_peak_in_flight(LLMEM_PP_DUALPIPE_V, p, m, r);
        CHECK(dpv == 2 * p + 1, "dualpipe_v p %d m %d rank %d: %d live, want %d", p, m, r, dpv, 2 * p + 1);
      }
  /* the runs tile the order */
  for (int p = 2; p <= 6; p++)
    for (int m = 2 * p; m <= 5 * p; m++) {
      check_order(p, 2, m, LLMEM_PP_ZB_V, p);
      check_order(p, 2, m, LLMEM_PP_DUALPIPE_V, p);
    }
  for (int p = 2; p <= 8; p += 2)
    for (int m = 2 * p; m <= 6 * p; m += 2) check_order(p, 2, m, LLMEM_PP_DUALPIPE, p);
}

static unsigned long long rng = 88172645463325252ull;
static int pick(int n) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (int)(rng % (unsigned long long)n);
}
#define PICK(list) list[pick((int)(sizeof list / sizeof list[0]))]

/* A random config: a small model so that every pass can be walked. */
static void random_config(llmem_input *in, char *keys, size_t size) {
  static const char *engines[] = {"megatron", "fsdp2", "fsdp1", "deepspeed", "ddp", "megatron_deepspeed"};
  static const char *schedules[] = {"gpipe", "1f1b", "interleaved", "zero_bubble"};
  static const char *recompute[] = {"none", "selective", "full", "per_op"};
  static const char *ft[] = {"full", "full", "lora", "qlora"};
  static const char *fsdp[] = {"full_shard", "shard_grad_op", "hybrid_shard", "no_shard"};
  static const char *tf[] = {"true", "false"};
  static const int pps[] = {1, 2, 3, 4, 8};
  static const int layers[] = {4, 8, 12, 16, 24};
  static const int accum[] = {1, 2, 3, 4, 8, 16, 24, 64};
  int pp = PICK(pps), vpp = 1 + pick(3), dp = 1 + pick(2), m = PICK(accum);
  const char *sched = PICK(schedules);
  if (strcmp(sched, "interleaved") == 0) m = pp * (1 + pick(6));
  else vpp = 1;
  snprintf(keys, size,
           "model.layers=%d model.hidden=512 model.heads=8 model.kv_heads=%d model.ffn_hidden=1536 model.vocab=32000 "
           "model.moe=%s model.moe.experts=8 model.moe.top_k=2 model.moe.expert_ffn_hidden=512 model.moe.layer_freq=%d "
           "training.seq_len=%d training.grad_accum=%d training.recompute=%s training.activation_offload=%s "
           "training.optimizer_in_backward=%s training.finetune.method=%s parallel.engine=%s parallel.zero_stage=%d "
           "parallel.fsdp_strategy=%s parallel.reshard_after_forward=%s parallel.pp=%d parallel.vpp=%d "
           "parallel.pp_schedule=%s parallel.gpus=%d parallel.shard_root_modules=%s",
           PICK(layers) * (vpp > 1 ? vpp : 1), 1 << pick(4), PICK(tf), 1 + pick(2), 256 << pick(4), m, PICK(recompute),
           PICK(tf), pick(4) ? "false" : "true", PICK(ft), PICK(engines), pick(4), PICK(fsdp), PICK(tf), pp, vpp, sched,
           pp * dp, PICK(tf));
  llmem_defaults(in);
  set_keys(in, keys);
}

/* A random config under a V schedule or DualPipe: two chunks per rank, at
 * least 2p micro-batches (DualPipe: an even p and an even count). */
static void random_v_config(llmem_input *in, char *keys, size_t size) {
  random_config(in, keys, size);
  static const int pps[] = {2, 3, 4};
  static const char *kinds[] = {"zb_v", "dualpipe_v", "dualpipe"};
  const char *kind = PICK(kinds);
  int p = PICK(pps), m = 2 * p + pick(3 * p);
  if (strcmp(kind, "dualpipe") == 0) p = 2 + 2 * pick(2), m = 2 * p + 2 * pick(2 * p);
  size_t len = strlen(keys);
  snprintf(keys + len, size - len,
           " model.layers=%d training.grad_accum=%d parallel.pp=%d parallel.vpp=2 parallel.pp_schedule=%s "
           "parallel.gpus=%d",
           2 * p * (1 + pick(3)), m, p, kind, p * (1 + pick(2)));
  llmem_defaults(in);
  set_keys(in, keys);
}

/* Host bytes of offloaded activations, pass by pass: the most over the pass boundaries. */
static double host_pass_by_pass(const plan *pl, const stage_layout *st, const rank_states *rs, int stage) {
  static sched_op ops[1 << 16];
  static stage_walk W;
  walk_init(&W, pl, st, rs, stage);
  int n = reference_order(pl, stage, ops);
  double host = 0, top = 0;
  for (int i = 0; i < n; i++) {
    if (ops[i].split == SPLIT_W) continue; /* the I brings them back */
    host += (ops[i].backward ? -1 : 1) * walk_offloaded_bytes(&W, ops[i].chunk);
    if (host > top) top = host;
  }
  return top;
}

/* Stage s of a plan: its layout and its rank's states. */
static void stage_of(const plan *pl, int s, stage_layout *st, rank_states *rs) {
  layout_stage(pl, s, st);
  states_for_stage(pl, st, rs);
}

static int same_rank(const llmem_rank_result *a, const llmem_rank_result *b) {
  if (a->peak_allocated_bytes != b->peak_allocated_bytes || a->peak_reserved_bytes != b->peak_reserved_bytes ||
      a->device_used_bytes != b->device_used_bytes || a->persistent_bytes != b->persistent_bytes ||
      a->peak_phase != b->peak_phase || a->peak_micro_batch != b->peak_micro_batch || a->peak_layer != b->peak_layer)
    return 0;
  for (int c = 0; c < LLMEM_CAT_COUNT; c++)
    if (a->breakdown_bytes[c] != b->breakdown_bytes[c]) return 0;
  return 1;
}

/* Deep pipelines past STAGE_WALK_MAX_CHUNKS (estimate.c): a middle stage not
 * walked reports a lower stage's numbers as its bound; each must hold for the
 * stage walked on its own, and the most loaded stage and the highest
 * allocated must be the walked ones'. Returns the stages copied. */
static int check_bounded_stages(void) {
  static const char *engines[] = {"megatron", "fsdp2", "deepspeed", "megatron_deepspeed"};
  static const char *recompute[] = {"none", "selective", "full"};
  static const char *tf[] = {"true", "false"};
  static llmem_result out;
  int copied = 0, strict = 0, lazy_short = 0;
  char keys[768];
  for (int t = 0; t < 60; t++) {
    /* only interleaving passes it: pp is at most 512 */
    int pp = pick(2) ? 64 : 128, vpp = pp == 64 ? 17 : 9, m = pp * (1 + pick(6));
    const char *engine = PICK(engines);
    int seq = pick(2) ? 32 : 256; /* short: a chunk's gradients outweigh a micro-batch's activations */
    snprintf(keys, sizeof keys,
             "model.layers=%d model.hidden=256 model.heads=4 model.ffn_hidden=512 model.vocab=1000 model.moe=%s "
             "model.moe.experts=4 model.moe.top_k=2 model.moe.expert_ffn_hidden=256 model.moe.dense_layers=%d "
             "model.moe.layer_freq=%d "
             "training.seq_len=%d training.grad_accum=%d training.recompute=%s parallel.engine=%s "
             "parallel.zero_stage=%d parallel.pp=%d parallel.vpp=%d parallel.pp_schedule=interleaved parallel.gpus=%d",
             pp * vpp * (1 + pick(2)), PICK(tf), pick(3) * vpp, 1 + pick(3), seq, m, PICK(recompute), engine,
             strstr(engine, "deepspeed") ? pick(2) : 0, pp, vpp, pp);
    llmem_input in;
    llmem_defaults(&in);
    set_keys(&in, keys);
    CHECK(llmem_estimate(&in, &out) == LLMEM_OK, "%s: %s", out.error_message, keys);
    plan pl;
    int field;
    const char *detail;
    plan_build(&in, &pl, &field, &detail);
    pl.simulate_allocator = 0; /* a copied stage's reserve is the formula's */
    double top_allocated = 0;
    for (int s = 0; s < (int)pl.in->pp; s++) {
      const llmem_rank_result *r = &out.ranks[s];
      if (!r->peak_bound) {
        if (r->peak_allocated_bytes > top_allocated) top_allocated = r->peak_allocated_bytes;
        continue;
      }
      stage_layout st;
      rank_states rs;
      llmem_rank_result own = {0};
      own.stage = s;
      stage_of(&pl, s, &st, &rs);
      simulate_stage(&pl, &st, &rs, &own, 0);
      copied++;
      strict += own.peak_allocated_bytes < r->peak_allocated_bytes;
      lazy_short += seq == 32 && strcmp(engine, "fsdp2") == 0;
      CHECK(r->bound_stage < s && !out.ranks[r->bound_stage].peak_bound, "stage %d bound by %d: %s", s, r->bound_stage,
            keys);
      CHECK(own.peak_allocated_bytes <= r->peak_allocated_bytes && own.device_used_bytes <= r->device_used_bytes &&
                st.params_count == r->params_count && st.layer_count == r->layers_count,
            "stage %d holds %.17g (device %.17g), its bound from stage %d %.17g (%.17g): %s", s,
            own.peak_allocated_bytes, own.device_used_bytes, r->bound_stage, r->peak_allocated_bytes,
            r->device_used_bytes, keys);
      CHECK(own.device_used_bytes <= out.per_gpu.device_used_bytes, "stage %d above the most loaded: %s", s, keys);
    }
    CHECK(out.peak_allocated_bytes == top_allocated && !out.ranks[out.per_gpu.stage].peak_bound,
          "the highest allocated and the most loaded stage are walked: %s", keys);
  }
  CHECK(copied > 600 && strict > 500 && lazy_short > 50,
        "stages copied as bounds: %d (%d strictly above, %d FSDP2 on short sequences)", copied, strict, lazy_short);
  return copied;
}

/* Fractional bytes (gradients sharded over 3 or 7 ranks, split over the layers): such passes are walked,
 * not applied from summaries, so the stage is the walk's own bit for bit, and an estimate gives the same
 * bits as its readings without a timeline (the layout search's kept layouts equal their estimates). */
/* Every stage of the config the keys give walks to the same numbers with summaries and runs as layer by
 * layer; the stages with fractional gradient bytes. */
static int stages_walk_alike(const char *keys) {
  llmem_input in;
  llmem_defaults(&in);
  set_keys(&in, keys);
  plan pl;
  int field, fractional = 0;
  const char *detail;
  CHECK(plan_build(&in, &pl, &field, &detail) == LLMEM_OK, "fractional bytes: %s", keys);
  pl.simulate_allocator = 0;
  for (int s = 0; s < (int)pl.in->pp; s++) {
    stage_layout st;
    rank_states rs;
    stage_of(&pl, s, &st, &rs);
    llmem_rank_result fast = {0}, full = {0};
    simulate_stage_walk(&pl, &st, &rs, &fast, 0, 0, 0);
    simulate_stage_walk(&pl, &st, &rs, &full, 0, 1, 0);
    fractional += rs.gradients != floor(rs.gradients);
    CHECK(same_rank(&fast, &full), "stage %d: summaries and runs %.17g at %d/%d, the walk %.17g at %d/%d: %s", s,
          fast.peak_allocated_bytes, fast.peak_phase, fast.peak_layer, full.peak_allocated_bytes, full.peak_phase,
          full.peak_layer, keys);
  }
  return fractional;
}

static void check_fractional_bytes(void) {
  static const char *engines[] = {"fsdp2", "deepspeed", "fsdp1"};
  static const int zero[] = {0, 2, 0}; /* ZeRO-2: gradients sharded */
  int fractional = 0;
  char keys[512];
  for (int t = 0; t < 24; t++) {
    int e = pick(3), pp = e == 0 ? 1 + pick(4) : 1, dp = pick(2) ? 3 : 7, m = 4 + pick(12); /* FSDP2 pipelines */
    snprintf(keys, sizeof keys,
             "model.layers=%d model.hidden=520 model.heads=8 model.ffn_hidden=1001 model.vocab=32001 model.moe=%s "
             "model.moe.experts=6 model.moe.top_k=2 model.moe.expert_ffn_hidden=512 training.grad_accum=%d "
             "training.recompute=%s parallel.engine=%s parallel.zero_stage=%d parallel.pp=%d parallel.gpus=%d",
             4 * pp * (1 + pick(3)), pick(2) ? "true" : "false", m, pick(2) ? "full" : "none", engines[e], zero[e], pp,
             pp * dp);
    fractional += stages_walk_alike(keys);
  }
  CHECK(fractional > 10, "stages with fractional gradient bytes: %d", fractional);
  /* deep chunks whose sums round: runs of alike layers (an MoE layer every few) are added in one go where
   * every value stays in its binade (pass_summary.c rounding_repeats), bit for bit the walk */
  static const char *schedules[] = {"1f1b", "zero_bubble", "zb_v", "dualpipe_v", "interleaved"};
  long runs = pass_layer_runs();
  for (int t = 0; t < 16; t++) {
    int pp = 2 + 2 * pick(2), k = pick(5), vpp = k >= 2 ? 2 : 1, dp = pick(2) ? 3 : 7;
    snprintf(keys, sizeof keys,
             "model.layers=%d model.hidden=520 model.heads=8 model.ffn_hidden=1001 model.vocab=32001 model.moe=true "
             "model.moe.experts=6 model.moe.top_k=2 model.moe.expert_ffn_hidden=512 model.moe.layer_freq=%d "
             "model.moe.dense_layers=%d training.grad_accum=%d training.recompute=%s training.activation_offload=%s "
             "parallel.engine=fsdp2 parallel.pp=%d parallel.vpp=%d parallel.pp_schedule=%s parallel.gpus=%d",
             40 * pp * vpp * (1 + pick(2)), 1 + pick(3), pick(3), 4 * pp, pick(2) ? "full" : "none",
             pick(3) ? "false" : "true", pp, vpp, schedules[k], pp * dp);
    stages_walk_alike(keys);
  }
  CHECK(pass_layer_runs() - runs > 100, "runs of alike layers in deep fractional chunks: %ld",
        pass_layer_runs() - runs);
  /* a layout the planner fuzzer kept (QLoRA over 12 ranks): its estimate walks with the timeline, its readings
   * without, and they gave different last bits while fractional passes came from summaries */
  llmem_input in;
  llmem_defaults(&in);
  set_keys(&in,
           "model.layers=2 model.hidden=64 model.heads=16 model.kv_heads=8 model.ffn_hidden=256 model.vocab=97 "
           "model.tied_embeddings=true model.bias=true model.qkv_bias=true model.attn_sinks=true "
           "model.max_positions=512 training.micro_batch=4 training.grad_accum=2 training.fp8_linear=true "
           "training.master_weights=false training.optimizer_impl=foreach training.loss=compiled "
           "training.finetune.method=qlora training.finetune.lora_rank=4 training.finetune.lora_targets=q,up,down "
           "training.finetune.adapter_dtype=fp8 training.finetune.double_quant=false parallel.gpus=12 "
           "parallel.gpus_per_node=4 parallel.sequence_parallel=false parallel.pp_schedule=gpipe "
           "parallel.reshard_after_forward=false parallel.shard_root_modules=true hardware.memory_gib=0.28 "
           "runtime.cuda_context_mib=0 runtime.cublas_workspace_mib=0 runtime.allocator_reserve=0 "
           "runtime.expandable_segments=true runtime.torch_compile=true");
  static llmem_result out;
  llmem_readings r;
  CHECK(llmem_estimate(&in, &out) == LLMEM_OK && llmem_estimate_readings(&in, &r) == LLMEM_OK &&
            out.per_gpu.device_used_bytes == r.device_used_bytes &&
            out.per_gpu.device_used_bytes != floor(out.per_gpu.device_used_bytes),
        "fractional bytes: estimate %.17g, readings %.17g", out.per_gpu.device_used_bytes, r.device_used_bytes);
}

int main(void) {
  /* the grain of a double: the largest power of two it is a multiple of */
  CHECK(grain_of(1) == 0 && grain_of(2) == 1 && grain_of(3) == 0 && grain_of(-12) == 2, "grain of whole numbers");
  CHECK(grain_of(0.5) == -1 && grain_of(1.5) == -1 && grain_of(0.1) < -50, "grain of fractions");
  CHECK(grain_of(34.0 * 4096 * 4096) == 25 && grain_of(0x1p-1074) == -1074, "grain of large and subnormal values");
  CHECK(grain_of(INFINITY) < -1000 && grain_of(0) > 1000, "grain of infinity and zero");
  check_v_schedules();
  int kinds[] = {LLMEM_PP_GPIPE, LLMEM_PP_1F1B, LLMEM_PP_ZERO_BUBBLE};
  for (int k = 0; k < 3; k++)
    for (int pp = 1; pp <= 6; pp++)
      for (int m = 1; m <= 20; m++) check_order(pp, 1, m, kinds[k], pp);
  for (int pp = 2; pp <= 6; pp++)
    for (int vpp = 2; vpp <= 4; vpp++) {
      for (int m = pp; m <= 8 * pp; m += pp) check_order(pp, vpp, m, LLMEM_PP_INTERLEAVED, pp);
      /* groups larger than pp: m need not be a multiple of pp (Megatron's
       * microbatch_group_size_per_vp_stage; the last group at least pp) */
      for (int g = pp + 1; g <= 3 * pp; g++)
        for (int m = g; m <= 4 * g; m++)
          if (m % g == 0 || m % g >= pp) check_order(pp, vpp, m, LLMEM_PP_INTERLEAVED, g);
    }

  int valid = 0, stages = 0, skipping = 0, allocator_compared = 0, allocator_gave_up = 0, partial_above_bound = 0;
  double worst_gap = 0;
  char keys[1024];
  int v_valid = 0, dp_valid = 0;
  for (int t = 0; t < 4000 && valid < 825; t++) {
    llmem_input in;
    /* after the 600, V schedules (zb_v, dualpipe_v) and DualPipe */
    if (valid < 600) random_config(&in, keys, sizeof keys);
    else random_v_config(&in, keys, sizeof keys);
    plan pl;
    int field;
    const char *detail;
    if (plan_build(&in, &pl, &field, &detail) != LLMEM_OK || pl.in->formula != LLMEM_FORMULA_LLMEM) continue;
    valid++;
    v_valid += plan_v_shape(&pl), dp_valid += plan_dualpipe(&pl);
    for (int s = 0; s < (int)pl.in->pp; s++) {
      stage_layout st;
      rank_states rs;
      stage_of(&pl, s, &st, &rs);
      llmem_rank_result fast = {0}, full = {0};
      fast.stage = full.stage = s;
      walk_check check = {0};
      llmem_rank_result blocks = fast, every_copy = fast;
      simulate_stage_walk(&pl, &st, &rs, &blocks, 0, 0, 0); /* with the simulated allocator */
      simulate_stage_walk(&pl, &st, &rs, &every_copy, 0, WALK_EVERY_BLOCKS, 0);
      /* cycles of cache layouts passed over (simulate.c walk_every_copy): the allocator's figures as if fed
       * every copy, bit for bit */
      if (blocks.reserved_simulated && every_copy.reserved_simulated) {
        allocator_compared++;
        CHECK(blocks.peak_reserved_bytes == every_copy.peak_reserved_bytes &&
                  blocks.fragmentation_bytes == every_copy.fragmentation_bytes &&
                  blocks.largest_free_block_bytes == every_copy.largest_free_block_bytes,
              "stage %d: reserved %.17g, fed every copy %.17g: %s", s, blocks.peak_reserved_bytes,
              every_copy.peak_reserved_bytes, keys);
      }
      /* an allocator that gives up partway (a small budget): the walk goes on without it, to the same peak */
      llmem_rank_result gave_up = fast;
      pl.allocator_max_work = 3000;
      simulate_stage_walk(&pl, &st, &rs, &gave_up, 0, 0, 0);
      pl.allocator_max_work = ALLOCATOR_MAX_WORK;
      allocator_gave_up += !gave_up.reserved_simulated;
      /* what it had reserved before giving up is reserved in the step too (above the bound, it is the figure) */
      if (!gave_up.reserved_simulated && alloc_get_stats()->gave_up) {
        double reached = alloc_get_stats()->peak_reserved_bytes;
        partial_above_bound += gave_up.peak_reserved_bytes == reached;
        CHECK(gave_up.peak_reserved_bytes >= reached, "stage %d: reserved %.17g below the %.17g reached: %s", s,
              gave_up.peak_reserved_bytes, reached, keys);
      }
      CHECK(gave_up.peak_allocated_bytes == blocks.peak_allocated_bytes &&
                (gave_up.reserved_simulated || gave_up.peak_reserved_bytes <= gave_up.device_used_bytes),
            "stage %d: the allocator giving up peaks at %.17g, fed all at %.17g: %s", s, gave_up.peak_allocated_bytes,
            blocks.peak_allocated_bytes, keys);
      pl.simulate_allocator = 0;
      simulate_stage_walk(&pl, &st, &rs, &fast, 0, 0, 0);
      simulate_stage_walk(&pl, &st, &rs, &full, 0, 1, &check);
      pl.simulate_allocator = 1;
      CHECK(blocks.peak_allocated_bytes == fast.peak_allocated_bytes && blocks.peak_phase == fast.peak_phase &&
                blocks.peak_layer == fast.peak_layer,
            "stage %d: the allocator's walk peaks at %.17g, the walk at %.17g: %s", s, blocks.peak_allocated_bytes,
            fast.peak_allocated_bytes, keys);
      CHECK(blocks.peak_reserved_bytes >= blocks.peak_allocated_bytes, "stage %d: reserved below allocated: %s", s,
            keys);
      stages++;
      skipping += pl.grad_accum > 3;
      if (check.max_boundary_error > worst_gap) worst_gap = check.max_boundary_error;
      CHECK(check.max_boundary_error < 1e-12, "stage %d: rebuilt state off by %g (relative): %s", s,
            check.max_boundary_error, keys);
      if (pl.in->activation_offload != 0)
        CHECK_NEAR(simulate_offloaded_host_bytes(&pl, &st, &rs, s), host_pass_by_pass(&pl, &st, &rs, s), 1e-12, keys);
      CHECK(same_rank(&fast, &full), "stage %d: fast %.17g at %d/%d/%d, full walk %.17g at %d/%d/%d: %s", s,
            fast.peak_allocated_bytes, fast.peak_phase, fast.peak_micro_batch, fast.peak_layer,
            full.peak_allocated_bytes, full.peak_phase, full.peak_micro_batch, full.peak_layer, keys);
    }
  }
  CHECK(allocator_gave_up > 500 && partial_above_bound > 10,
        "stages whose allocator gave up partway: %d (of which reserved what it had reached: %d)", allocator_gave_up,
        partial_above_bound);
  CHECK(allocator_compared > 1000 && walk_cycles_skipped() > 200,
        "stages whose allocator was compared with every copy fed: %d (runs with cycles passed over: %ld)",
        allocator_compared, walk_cycles_skipped());
  CHECK(valid >= 775 && v_valid >= 100 && dp_valid >= 50, "random valid configs: %d (%d V, %d DualPipe)", valid,
        v_valid, dp_valid);
  /* the fast walks above took passes from their summaries (pass_summary.c) and still equal the full walk */
  CHECK(pass_summaries_used() > 1000, "passes applied from summaries: %ld", pass_summaries_used());
  /* and those summaries added runs of alike layers in one go (passes.c step_repeat) */
  CHECK(pass_layer_runs() > 1000, "runs of alike layers: %ld", pass_layer_runs());
  int copied = check_bounded_stages();
  check_fractional_bytes();
  /* a timeline merged past TIMELINE_COARSE_STRIDE takes passes from their summaries: the same peak, on the chart */
  {
    llmem_input in;
    llmem_defaults(&in);
    set_keys(&in,
             "model.layers=37800 model.hidden=2048 model.ffn_hidden=4096 training.grad_accum=8216 "
             "training.recompute=full parallel.engine=megatron parallel.pp=8 parallel.vpp=63 "
             "parallel.pp_schedule=interleaved parallel.gpus=8");
    plan pl;
    int field;
    const char *detail;
    CHECK(plan_build(&in, &pl, &field, &detail) == LLMEM_OK, "coarse timeline config");
    pl.simulate_allocator = 0;
    stage_layout st;
    rank_states rs;
    stage_of(&pl, 0, &st, &rs);
    static llmem_event events[LLMEM_MAX_EVENTS];
    timeline_sink sink = {events, LLMEM_MAX_EVENTS, 0, 1, 0};
    llmem_rank_result shown = {0}, plain = {0};
    long before = pass_summaries_used();
    simulate_stage(&pl, &st, &rs, &plain, 0);
    long plain_used = pass_summaries_used() - before;
    before = pass_summaries_used();
    simulate_stage(&pl, &st, &rs, &shown, &sink);
    double top = 0;
    for (int e = 0; e < sink.count; e++) top = events[e].total_bytes > top ? events[e].total_bytes : top;
    long shown_used = pass_summaries_used() - before; /* most passes once the timeline is coarse */
    CHECK(sink.stride >= TIMELINE_COARSE_STRIDE && 2 * shown_used > plain_used && top == plain.peak_allocated_bytes &&
              same_rank(&shown, &plain),
          "coarse timeline: stride %d, %ld passes from summaries (%ld without a timeline), highest point %.17g, peak "
          "%.17g",
          sink.stride, shown_used, plain_used, top, plain.peak_allocated_bytes);
  }
  /* readings are the estimate's own stages: a middle stage walked without the allocator here too (the
   * core fuzzer found a pipeline whose middle stage's simulated reserve beat stage 0's in the readings) */
  {
    static llmem_result out;
    llmem_input in;
    llmem_defaults(&in);
    set_keys(&in,
             "model.layers=24 model.kv_heads=1 model.head_dim=128 model.ffn_hidden=4096 model.vocab=97 "
             "model.head=classification model.bias=true model.qkv_bias=true model.qk_norm=head "
             "model.position=learned model.max_positions=100000 training.micro_batch=8 training.seq_len=16384 "
             "training.grad_accum=12 training.dtype=fp16 training.grad_dtype=fp16 training.optimizer=lion "
             "training.optimizer_dtype=bf16 training.optimizer_impl=for_loop training.recompute=selective "
             "training.recompute_modules=core_attn,layernorm,moe_act training.dropout=0.1 "
             "training.attention=eager training.loss=fused training.loss_chunks=3 parallel.gpus=64 "
             "parallel.tp=4 parallel.pp=4 parallel.vpp=2 parallel.pp_schedule=interleaved "
             "parallel.fsdp_strategy=shard_grad_op parallel.shard_root_modules=true hardware.memory_gib=4 "
             "runtime.cuda_context_mib=0 runtime.cublas_workspace_mib=0 runtime.nccl_buffer_mib=0 "
             "runtime.expandable_segments=true runtime.torch_compile=true");
    llmem_readings r;
    CHECK(llmem_estimate(&in, &out) == LLMEM_OK && llmem_estimate_readings(&in, &r) == LLMEM_OK &&
              r.device_used_bytes == out.per_gpu.device_used_bytes &&
              r.peak_allocated_bytes == out.peak_allocated_bytes,
          "readings: device %.17g allocated %.17g, estimate %.17g %.17g", r.device_used_bytes, r.peak_allocated_bytes,
          out.per_gpu.device_used_bytes, out.peak_allocated_bytes);
  }
  printf(
      "walk: %d configs, %d stages (%d with skipped copies), largest rebuilt-state gap %.3g, %ld passes from "
      "summaries; %d deep-pipeline stages reported as a lower stage's bound, each checked; %d allocator walks "
      "equal to every copy fed (%ld runs with cycles passed over)\n",
      valid, stages, skipping, worst_gap, pass_summaries_used(), copied, allocator_compared, walk_cycles_skipped());
  return check_report("walk");
}
