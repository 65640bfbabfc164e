"""Multi-rank layouts on one GPU (pure; no torch): the plan for running rank 0 of an N-rank
FSDP2 / HSDP / TP(+SP) job through PyTorch's fake process group, or the refusals.

The fake process group (torch/testing/_internal/distributed/fake_pg.py, backend "fake") returns
from every collective without moving data, but every buffer the framework allocates for one
(FSDP2's all-gather outputs and reduce-scatter inputs, DTensor redistributions) is allocated, so
rank 0's memory is what it would be on the cluster, minus NCCL's own buffers. The readings are
labelled "fake process group" everywhere; step times of these rows are compute-only.
"""
from __future__ import annotations

FAKE_PG_LABEL = "fake process group"


def plan_layout(m, tr, par, caps, no, applied, notes):
    """{"world", "dp_replicate", "dp_shard", "tp", "sp", ...} for gpus > 1, None for one GPU."""
    gpus, tp = par["gpus"], par["tp"]
    for k, what in (("pp", "pipeline"), ("vpp", "virtual-pipeline"), ("cp", "context"),
                    ("ep", "expert"), ("etp", "expert-tensor")):
        if par[k] != 1:
            no("parallel." + k, "%s parallelism (%s=%s) is not run by the probe (it runs FSDP2, HSDP and "
               "TP with sequence parallel; %s=1)" % (what, k, par[k], k))
    if gpus == 1:
        if tp != 1:
            no("parallel.tp", "tp=%d needs parallel.gpus to be a multiple of it" % tp)
        return None
    if not caps.get("fake_pg"):
        no("parallel.gpus", "%d ranks need torch's fake process group (torch.testing._internal.distributed."
           "fake_pg), which this torch (%s) lacks" % (gpus, caps.get("torch")))
    if par["engine"] != "fsdp2":
        no("parallel.engine", "%s over %d ranks: the fake-process-group path runs FSDP2 (fully_shard) "
           "only (set engine fsdp2, or gpus 1)" % (par["engine"], gpus))
    elif not caps.get("fully_shard"):
        no("parallel.engine", "fsdp2 needs torch.distributed.fsdp.fully_shard (torch >= 2.6)")
    if gpus % tp:
        no("parallel.tp", "tp=%d does not divide gpus=%d" % (tp, gpus))
        return None
    dp = gpus // tp
    strategy = par["fsdp_strategy"]
    shard, replicate = dp, 1
    if strategy == "hybrid_shard":
        size = par["fsdp_shard_size"] or min(par["gpus_per_node"], dp)
        if dp % size:
            no("parallel.fsdp_shard_size", "%d does not divide the %d data-parallel ranks" % (size, dp))
            return None
        shard, replicate = size, dp // size
    elif strategy != "full_shard":
        no("parallel.fsdp_strategy", "%s is not run by the probe's FSDP2 path (full_shard or "
           "hybrid_shard)" % strategy)
    sp = bool(par["sequence_parallel"]) and tp > 1
    if tp > 1:
        _check_tp_model(m, tr, tp, caps, no)
    if tr["loss"] == "loss_parallel" and tp == 1:
        notes.append("training.loss loss_parallel without TP is the standard cross-entropy")
    layout = {"world": gpus, "dp_replicate": replicate, "dp_shard": shard, "tp": tp, "sp": sp,
              "reshard_after_forward": bool(par["reshard_after_forward"]),
              "shard_root_modules": bool(par["shard_root_modules"]),
              "loss_parallel": tr["loss"] == "loss_parallel" and tp > 1}
    mesh = " x ".join("%s %d" % kv for kv in (("replicate", replicate), ("shard", shard), ("tp", tp)) if kv[1] > 1)
    applied.append("%s: rank 0 of %d ranks (FakeStore, backend 'fake'; mesh %s); collectives move no data "
                   "but allocate every buffer they need; NCCL's own buffers are absent; step time is "
                   "compute-only" % (FAKE_PG_LABEL, gpus, mesh or "1"))
    applied.append("FSDP2: fully_shard per decoder layer%s, then the root (reshard_after_forward=%s; %s)" % (
        ", the embedding and the output projection" if layout["shard_root_modules"] else "",
        layout["reshard_after_forward"], "HSDP: replicate %d x shard %d" % (replicate, shard)
        if replicate > 1 else "shard over %d ranks" % shard))
    if tp > 1:
        applied.append("TP %d: parallelize_module as torchtitan's Llama plan (q/k/v/gate/up colwise, o/down "
                       "rowwise, embedding rowwise, output colwise%s)%s" % (
                           tp, ", sequence parallel norms" if sp else "",
                           "; loss_parallel() over vocabulary-sharded logits" if layout["loss_parallel"] else
                           "; logits gathered to every rank"))
    return layout


def _check_tp_model(m, tr, tp, caps, no):
    if not caps.get("tensor_parallel"):
        no("parallel.tp", "needs torch.distributed.tensor.parallel.parallelize_module")
    if m["heads"] % tp or m["kv_heads"] % tp:
        no("parallel.tp", "tp=%d must divide heads (%d) and kv_heads (%d)" % (tp, m["heads"], m["kv_heads"]))
    if m["ffn_hidden"] % tp:
        no("parallel.tp", "tp=%d must divide ffn_hidden (%d)" % (tp, m["ffn_hidden"]))
    if m["vocab"] % tp:
        no("parallel.tp", "tp=%d must divide the vocabulary (%d)" % (tp, m["vocab"]))
    if m["tied_embeddings"]:
        no("model.tied_embeddings", "TP of a tied embedding and output projection is not built by the probe")
    if (m["position"] != "rope" or m["norms_per_layer"] != 2 or m["qk_norm"] != "none" or m["head"] != "lm"
            or m["type_vocab"] or m["embedding_norm"] or m["attn_sinks"] or m["bias"]):
        no("parallel.tp", "the probe's TP plan covers Llama-style decoders (RoPE, pre-norm, no qk-norm, no "
           "biases but q/k/v, LM head)")
    if tr["attention"] == "eager":
        no("training.attention", "eager attention under TP is not built by the probe (flash or sdpa_math)")
