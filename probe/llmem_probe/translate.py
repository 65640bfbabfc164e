"""Translation: config -> plan (pure; no torch), or Refusal listing everything one GPU cannot reproduce."""
from __future__ import annotations

import importlib.util
import os

from .capabilities import detect_capabilities
from .layout import plan_layout
from .config import (PROBE_VERSION, REPO_ROOT, Refusal, check_values, effective_config,
                     unreviewed_settings)

LORA_MODULES = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj",
                "gate": "gate_proj", "up": "up_proj", "down": "down_proj"}


# --------------------------------------------------------------------------
# Parameter counts without torch (llmem's rules, frontend/config/catalog/check_params.py)
# --------------------------------------------------------------------------

def count_params_analytic(m):
    """Parameter count by llmem's rules (HF-exact; tied tensors once): the
    catalog's own checker, frontend/config/catalog/check_params.py."""
    m = dict(m)
    if not (m.get("moe") or {}).get("experts"):
        m["moe"] = None  # the defaults' MoE group with no experts: a dense model
    if not (m.get("mla") or {}).get("kv_lora_rank"):
        m["mla"] = None
    return _catalog_checker().count(m)[0]


def _catalog_checker():
    path = os.path.join(REPO_ROOT, "frontend", "config", "catalog", "check_params.py")
    spec = importlib.util.spec_from_file_location("llmem_check_params", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def lora_params_analytic(m, rank, targets):
    """PEFT LoRA A (r x in) + B (out x r) per adapted linear, every layer."""
    h, a, g, d, f = m["hidden"], m["heads"], m["kv_heads"], m["head_dim"], m["ffn_hidden"]
    gated = m["mlp"] == "gated"
    dims = {"q": (h, a * d), "k": (h, g * d), "v": (h, g * d), "o": (a * d, h),
            "gate": (h, f), "up": (h, f), "down": (f, h)}
    per_layer = 0
    for t in targets:
        if t == "gate" and not gated:
            continue
        i, o = dims[t]
        per_layer += rank * (i + o)
    return m["layers"] * per_layer


# --------------------------------------------------------------------------
# Translation: config -> plan (pure; no torch)
# --------------------------------------------------------------------------

HF_MODEL_TYPES = ("llama", "qwen2", "qwen3", "gpt2")


def hf_model_mapping(m, dropout):
    """transformers AutoConfig.for_model(model_type, **kwargs) for this model, or a reason."""
    common_ok = (m["head"] == "lm" and m["type_vocab"] == 0 and not m["embedding_norm"]
                 and m["final_norm"] and not m["lm_head_bias"] and not m["attn_sinks"])
    if not common_ok:
        return None, "the head / embedding keys have no transformers decoder equivalent"
    if m["mlp"] == "gated" and m["norm"] == "rmsnorm" and m["position"] == "rope" and m["norms_per_layer"] == 2:
        kw = dict(vocab_size=m["vocab"], hidden_size=m["hidden"], intermediate_size=m["ffn_hidden"],
                  num_hidden_layers=m["layers"], num_attention_heads=m["heads"],
                  num_key_value_heads=m["kv_heads"], max_position_embeddings=m["max_positions"],
                  tie_word_embeddings=m["tied_embeddings"], hidden_act="silu", use_cache=False,
                  attention_dropout=dropout)
        if m["qk_norm"] == "head" and not m["bias"] and not m["qkv_bias"]:
            return ("qwen3", dict(kw, head_dim=m["head_dim"])), None
        if m["qk_norm"] != "none":
            return None, "model.qk_norm %s has no transformers llama/qwen equivalent" % m["qk_norm"]
        if m["qkv_bias"] and not m["bias"]:
            if m["head_dim"] * m["heads"] != m["hidden"]:
                return None, "qwen2 derives head_dim from hidden / heads"
            return ("qwen2", kw), None
        return ("llama", dict(kw, head_dim=m["head_dim"], attention_bias=m["bias"], mlp_bias=m["bias"])), None
    if (m["mlp"] == "plain" and m["norm"] == "layernorm" and m["position"] == "learned" and m["bias"]
            and m["kv_heads"] == m["heads"] and m["head_dim"] * m["heads"] == m["hidden"]
            and m["tied_embeddings"] and m["norms_per_layer"] == 2 and m["qk_norm"] == "none"):
        return ("gpt2", dict(vocab_size=m["vocab"], n_embd=m["hidden"], n_layer=m["layers"],
                             n_head=m["heads"], n_inner=m["ffn_hidden"], n_positions=m["max_positions"],
                             resid_pdrop=dropout, embd_pdrop=dropout, attn_pdrop=dropout,
                             use_cache=False)), None
    return None, "no transformers model type (llama, qwen2, qwen3, gpt2) matches these model keys"


def alloc_conf_of(rt):
    """The caching allocator's settings as PYTORCH_CUDA_ALLOC_CONF (c10/cuda/CUDAAllocatorConfig.cpp keys)."""
    parts = []
    if rt["expandable_segments"]:
        parts.append("expandable_segments:True")
    if rt["max_split_size_mib"] is not None:
        parts.append("max_split_size_mb:%d" % int(rt["max_split_size_mib"]))
    if rt["gc_threshold"]:
        parts.append("garbage_collection_threshold:%g" % rt["gc_threshold"])
    return ",".join(parts)


def translate(config, caps=None, catalog=None, catalog_path=None, impl="reference"):
    """The plan for `config`, or Refusal listing everything that cannot be reproduced."""
    caps = detect_capabilities() if caps is None else caps
    eff = effective_config(config, catalog, catalog_path)
    check_values(eff)
    m, tr, par, rt = eff["model"], eff["training"], eff["parallel"], eff["runtime"]
    ft = tr["finetune"]
    refuse, applied, notes = unreviewed_settings(eff), [], []

    def no(path, message):
        refuse.append((path, "%s: %s" % (path, message)))

    if impl not in ("reference", "hf"):
        no("impl", "--impl must be reference or hf")

    # ---- the micro-batches per step, as the core resolves them (core/plan.c resolve_batch; one GPU: dp 1) ----
    if tr["global_batch"] is not None:
        derived = tr["global_batch"] // tr["micro_batch"]
        if tr["global_batch"] % tr["micro_batch"] or (tr["grad_accum"] not in (None, derived)):
            no("training.global_batch", "%d samples do not split into micro_batch %d x grad_accum %s on one GPU" % (
                tr["global_batch"], tr["micro_batch"], tr["grad_accum"]))
        tr["grad_accum"] = derived
    elif tr["grad_accum"] is None:
        tr["grad_accum"] = 1

    # ---- plain PyTorch: llmem's generic stack ----
    if rt["framework"] != "generic":
        no("runtime.framework", "%s: the probe runs its own plain-PyTorch loop, not %s's code (measure with "
           "generic and set the mechanisms you want explicitly)" % (rt["framework"], rt["framework"]))
    if m["parallel_block"]:
        no("model.parallel_block", "the probe's decoder runs attention then MLP, not in parallel")
    kv_repeated = tr["attention"] != "flash" or not caps.get("enable_gqa")
    if tr["repeat_kv"] is not None and bool(tr["repeat_kv"]) != kv_repeated and m["kv_heads"] < m["heads"]:
        no("training.repeat_kv", "this torch and attention kernel %s the K/V heads" % (
            "repeat" if kv_repeated else "do not repeat"))

    # ---- one GPU, or rank 0 of a multi-rank layout through the fake process group ----
    layout = plan_layout(m, tr, par, caps, no, applied, notes)
    engine = par["engine"]
    if layout is None and engine not in ("single", "ddp"):
        no("parallel.engine", "%s is not reproduced by the probe on one GPU (engine 'single', or 'ddp' "
           "with one rank; fsdp2 with parallel.gpus > 1 runs through the fake process group)" % engine)
    if par["zero_stage"] != 0:
        no("parallel.zero_stage", "ZeRO stage %d needs DeepSpeed (not run by the probe)" % par["zero_stage"])
    if par["distributed_optimizer"]:
        no("parallel.distributed_optimizer", "Megatron's distributed optimizer is not run by the probe")
    for k in ("offload_optimizer", "offload_params"):
        if par[k] != "none":
            no("parallel." + k, "%s offload needs DeepSpeed/FSDP offload (not run by the probe)" % par[k])
    if par["fp8_all_gather"]:
        no("parallel.fp8_all_gather", "fp8 all-gather needs FSDP2 + float8 (not run by the probe)")
    if engine == "ddp" and par["gpus"] == 1:
        applied.append("engine ddp: DistributedDataParallel over a world of one rank "
                       "(gradient_as_bucket_view=%s, find_unused_parameters=%s, bucket_cap_mb=%s)"
                       % (bool(par["grad_as_bucket_view"]), bool(par["ddp_find_unused_parameters"]),
                          "25 (default)" if par["ddp_bucket_cap_mib"] is None else par["ddp_bucket_cap_mib"]))
    elif engine == "single":
        applied.append("engine single: no wrapper")

    # ---- architecture ----
    moe = m.get("moe")
    if isinstance(moe, dict) and (moe.get("experts") or 0) >= 1:
        no("model.moe", "mixture-of-experts layers (%d experts) are not in the probe's reference "
           "decoder" % moe["experts"])
    mla = m.get("mla")
    if isinstance(mla, dict) and any((mla.get(k) or 0) >= 1 for k in
                                     ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                                      "qk_rope_head_dim", "v_head_dim")):
        no("model.mla", "multi-latent attention is not in the probe's reference decoder")
    if m["mtp_layers"]:
        no("model.mtp_layers", "multi-token-prediction layers are not in the probe's reference decoder")
    if m["heads"] % m["kv_heads"]:
        no("model.kv_heads", "heads (%d) must be a multiple of kv_heads (%d)" % (m["heads"], m["kv_heads"]))
    if m["vocab_multiple"] > 1 and m["vocab"] % m["vocab_multiple"]:
        no("model.vocab_multiple", "vocabulary padding (Megatron) is not built by the probe; the "
           "embedding has model.vocab rows (set vocab_multiple to 1)")
    if m["norms_per_layer"] not in (1, 2, 4):
        no("model.norms_per_layer", "%d norms per layer: the reference decoder builds 1 (parallel "
           "block), 2 (pre-norm) or 4 (Gemma sandwich)" % m["norms_per_layer"])
    if m["position"] == "rope" and m["head_dim"] % 2:
        no("model.head_dim", "RoPE needs an even head_dim (got %d)" % m["head_dim"])
    if m["position"] == "learned" and tr["seq_len"] > m["max_positions"]:
        no("training.seq_len", "%d exceeds model.max_positions %d of the learned position table"
           % (tr["seq_len"], m["max_positions"]))
    if m["head"] == "classification" and m["num_labels"] < 1:
        no("model.num_labels", "must be >= 1")

    # ---- precision ----
    dtype = tr["dtype"]
    method = ft["method"]
    lora = method in ("lora", "qlora")
    prec = {"param_dtype": None, "autocast_dtype": None, "grad_dtype": None, "state_dtype": None,
            "base_dtype": None, "grad_scaler": False}
    if dtype == "fp8" or tr["fp8_linear"]:
        no("training.fp8_linear" if tr["fp8_linear"] and dtype != "fp8" else "training.dtype",
           "fp8 compute needs Transformer Engine / torchao float8 (not run by the probe)")
    elif not lora:
        if dtype == "fp32":
            prec.update(param_dtype="fp32", grad_dtype="fp32", state_dtype="fp32")
            applied.append("precision: fp32 parameters, no autocast")
            if tr["grad_dtype"] != "fp32":
                notes.append("training.grad_dtype %s has no effect with fp32 parameters (llmem also uses "
                             "the parameter dtype)" % tr["grad_dtype"])
        elif tr["master_weights"] and layout is not None:
            # FSDP2's MixedPrecisionPolicy, as torchtitan (parallelize.py apply_fsdp): fp32 sharded parameters,
            # gathered in the compute dtype, gradients reduced in grad_dtype; no autocast
            prec.update(param_dtype="fp32", grad_dtype="fp32", state_dtype="fp32")
            layout["mp"] = {"param_dtype": dtype, "reduce_dtype": tr["grad_dtype"]}
            applied.append("precision: fp32 sharded parameters (the master weights); FSDP2 MixedPrecisionPolicy"
                           "(param_dtype=%s, reduce_dtype=%s), no autocast" % (dtype, tr["grad_dtype"]))
            if dtype == "fp16":
                no("training.dtype", "fp16 under FSDP2 needs a sharded GradScaler (not run by the probe)")
        elif tr["master_weights"]:
            prec.update(param_dtype="fp32", autocast_dtype=dtype, grad_dtype="fp32", state_dtype="fp32",
                        grad_scaler=dtype == "fp16")
            applied.append("precision: fp32 parameters (the master weights) + torch.autocast(%s)%s"
                           % (dtype, " + GradScaler" if dtype == "fp16" else ""))
            if tr["grad_dtype"] != "fp32":
                no("training.grad_dtype", "%s gradients with master_weights: torch.autocast keeps "
                   "gradients in the fp32 parameter dtype (set grad_dtype to fp32)" % tr["grad_dtype"])
        else:
            prec.update(param_dtype=dtype, grad_dtype=dtype, state_dtype=dtype)
            applied.append("precision: pure %s parameters, gradients and optimizer states, no autocast" % dtype)
            if tr["grad_dtype"] != dtype:
                notes.append("training.grad_dtype %s: gradients take the %s parameter dtype (llmem "
                             "ignores grad_dtype without master weights too)" % (tr["grad_dtype"], dtype))
    else:
        if layout is not None:
            no("training.finetune.method", "%s over several ranks is not run by the probe (gpus 1)" % method)
        base = ft["base_dtype"] or dtype
        adapter = ft["adapter_dtype"]
        if base == "fp8" or adapter == "fp8":
            no("training.finetune.base_dtype" if base == "fp8" else "training.finetune.adapter_dtype",
               "fp8 weights are not run by the probe")
        else:
            auto = dtype if dtype in ("bf16", "fp16") else None
            prec.update(param_dtype=adapter, base_dtype=base, autocast_dtype=auto, grad_dtype=adapter,
                        state_dtype=adapter, grad_scaler=auto == "fp16" and adapter == "fp32")
            if adapter != "fp32" and tr["master_weights"] and dtype != "fp32":
                no("training.master_weights", "an fp32 master copy of %s adapters is not reproduced "
                   "(set finetune.adapter_dtype to fp32, or master_weights to false)" % adapter)
            applied.append("precision: frozen base in %s%s, %s adapters%s"
                           % (base, " (quantised: %s)" % ft["quant"] if method == "qlora" else "",
                              adapter, ", torch.autocast(%s)" % auto if auto else ""))

    # ---- optimizer ----
    opt_name, impl_k = tr["optimizer"], tr["optimizer_impl"]
    opt = {"name": opt_name, "class": None, "kwargs": {}, "in_backward": bool(tr["optimizer_in_backward"]),
           "paged": bool(tr["paged_optimizer"]),
           # PyTorch < 2.0's zero_grad() zeroed the gradients in place (training.zero_grad_in_place)
           "set_to_none": not tr["zero_grad_in_place"]}
    bnb = caps.get("bitsandbytes")
    state_dtype = prec["state_dtype"]
    if opt_name == "muon":
        no("training.optimizer", "muon: the probe has no Muon + AdamW parameter split")
    elif opt_name in ("adamw_8bit", "lion") or opt["paged"]:
        paged = opt["paged"]
        cls = {("adamw_8bit", False): "AdamW8bit", ("adamw_8bit", True): "PagedAdamW8bit",
               ("lion", False): "Lion", ("lion", True): "PagedLion",
               ("adamw", True): "PagedAdamW", ("adam", True): "PagedAdam"}.get((opt_name, paged))
        if cls is None:
            no("training.paged_optimizer", "bitsandbytes has no paged %s" % opt_name)
        elif not bnb:
            no("training.optimizer" if not paged or opt_name in ("adamw_8bit", "lion") else "training.paged_optimizer",
               "%s needs bitsandbytes (bitsandbytes.optim.%s), which is not installed" % (
                   opt_name + (" (paged)" if paged else ""), cls))
        else:
            opt["class"] = "bitsandbytes.optim." + cls
            if opt_name != "adamw_8bit" and tr["optimizer_dtype"] != "fp32":
                no("training.optimizer_dtype", "bitsandbytes 32-bit optimizers keep fp32 states (set fp32)")
            if opt["in_backward"]:
                no("training.optimizer_in_backward", "not combined with bitsandbytes optimizers by the probe")
            notes.append("training.optimizer_impl %s does not apply to bitsandbytes optimizers" % impl_k)
    else:
        cls = {"adamw": "AdamW", "adam": "Adam", "sgd": "SGD", "sgd_momentum": "SGD",
               "adafactor": "Adafactor"}[opt_name]
        opt["class"] = "torch.optim." + cls
        if opt_name == "sgd_momentum":
            opt["kwargs"]["momentum"] = 0.9
        if opt_name == "adafactor" and not caps.get("adafactor"):
            no("training.optimizer", "adafactor needs torch.optim.Adafactor (torch >= 2.5; this torch is %s)"
               % caps.get("torch"))
        if impl_k == "fused":
            if opt_name == "adafactor":
                no("training.optimizer_impl", "torch.optim.Adafactor has no fused implementation "
                   "(use foreach or for_loop)")
            elif opt_name in ("adamw", "adam") and not caps.get("fused_adam"):
                no("training.optimizer_impl", "fused %s needs torch >= 2.0" % cls)
            elif opt_name.startswith("sgd") and not caps.get("fused_sgd"):
                no("training.optimizer_impl", "fused SGD is not in this torch (%s)" % caps.get("torch"))
            else:
                opt["kwargs"]["fused"] = True
        elif impl_k == "foreach":
            opt["kwargs"]["foreach"] = True
        else:
            opt["kwargs"]["foreach"] = False
        if opt_name == "sgd":
            if state_dtype and tr["optimizer_dtype"] != state_dtype:
                notes.append("training.optimizer_dtype has no effect: plain SGD keeps no state")
        elif state_dtype and tr["optimizer_dtype"] != state_dtype:
            no("training.optimizer_dtype", "%s states with %s %s: torch optimizers keep their states in "
               "the parameter dtype (set optimizer_dtype to %s)" % (
                   tr["optimizer_dtype"], state_dtype, "adapters" if lora else "parameters", state_dtype))
    if opt["in_backward"]:
        if tr["grad_accum"] > 1:
            no("training.optimizer_in_backward", "stepping in the backward cannot accumulate gradients "
               "over grad_accum=%d micro-batches" % tr["grad_accum"])
        if prec["grad_scaler"]:
            no("training.optimizer_in_backward", "not combined with fp16 GradScaler by the probe")
        if not caps.get("post_accumulate_grad_hook"):
            no("training.optimizer_in_backward", "needs Tensor.register_post_accumulate_grad_hook (torch >= 2.1)")
        if not opt["set_to_none"]:
            no("training.zero_grad_in_place", "stepping in the backward frees each gradient in its hook")
    if opt["class"]:
        applied.append("optimizer: %s(%s)%s" % (
            opt["class"], ", ".join("%s=%s" % kv for kv in sorted(opt["kwargs"].items())),
            " stepped per parameter in the backward (post-accumulate-grad hooks)" if opt["in_backward"] else
            "; zero_grad(set_to_none=%s) after step" % opt["set_to_none"]))

    # ---- recompute ----
    L = m["layers"]
    rc = tr["recompute"]
    rec = {"mode": rc, "layers": [], "modules": []}
    if tr["recompute_layers"] is not None and rc != "full":
        no("training.recompute_layers", "only applies with recompute 'full'")
    if rc == "full":
        k = L if tr["recompute_layers"] is None else tr["recompute_layers"]
        if not isinstance(k, int) or k < 0 or k > L:
            no("training.recompute_layers", "must be 0..%d" % L)
        else:
            rec["layers"] = list(range(k))
            applied.append("recompute: torch.utils.checkpoint(use_reentrant=False) around %s"
                           % ("every layer" if k == L else "the first %d of %d layers" % (k, L)))
    elif rc == "selective":
        mods = list(tr["recompute_modules"])
        if "layernorm" in mods:
            no("training.recompute_modules", "layernorm recompute (Megatron's discarded norm outputs) "
               "is not reproducible with torch.utils.checkpoint")
        ignored = [x for x in mods if x in ("moe", "moe_act", "mla_up_proj")]
        if ignored:
            notes.append("training.recompute_modules %s: no such modules in a dense model" % ", ".join(ignored))
        rec["modules"] = [x for x in mods if x in ("core_attn", "mlp")]
        rec["layers"] = list(range(L)) if rec["modules"] else []
        applied.append("recompute: checkpoint of %s in every layer" % (" and ".join(rec["modules"]) or "nothing"))
    elif rc == "per_op":
        if not caps.get("sac"):
            no("training.recompute", "per_op needs torch.utils.checkpoint.create_selective_checkpoint_contexts "
               "(torch >= 2.4)")
        rec["layers"] = list(range(L))
        applied.append("recompute: per-op selective checkpointing (torchtitan 'op' policy: save every "
                       "other mm and the SDPA outputs) in every layer")
    else:
        applied.append("recompute: none")
    if impl == "hf" and (rc in ("selective", "per_op") or tr["recompute_layers"] is not None):
        no("training.recompute", "--impl hf applies only recompute none or full over every layer")

    # ---- attention ----
    att = tr["attention"]
    if att in ("flash", "sdpa_math") and not caps.get("sdpa"):
        no("training.attention", "%s needs torch.nn.functional.scaled_dot_product_attention "
           "(torch >= 2.0; this torch is %s)" % (att, caps.get("torch")))
    if m["attn_sinks"] and att != "eager":
        no("model.attn_sinks", "attention sinks are only built with attention 'eager' (SDPA has none)")
    gqa = m["kv_heads"] < m["heads"]
    attn_desc = {
        "flash": "torch SDPA restricted to the flash / memory-efficient kernels, is_causal%s" % (
            (", GQA via enable_gqa (KV heads not repeated)" if caps.get("enable_gqa")
             else ", KV heads repeated (no enable_gqa in this torch)") if gqa else ""),
        "sdpa_math": "torch SDPA math kernel, KV heads repeated",
        "eager": "explicit softmax(QK^T/sqrt(d) + mask, fp32) V, KV heads repeated (HF eager)",
    }[att]
    applied.append("attention %s: %s" % (att, attn_desc))

    # ---- loss ----
    loss = {"kind": tr["loss"], "chunks": tr["loss_chunks"]}
    if m["head"] != "lm":
        notes.append("training.loss %s does not apply to head %s (%s)" % (
            tr["loss"], m["head"], "cross-entropy over num_labels of the pooled first token"
            if m["head"] == "classification" else "objective: mean of the final hidden states"))
        loss["kind"] = m["head"]
    elif tr["loss"] == "compiled" and not caps.get("compile"):
        no("training.loss", "compiled needs torch.compile (torch >= 2.0)")
    elif tr["loss"] == "fused" and not caps.get("liger_kernel"):
        no("training.loss", "fused needs liger_kernel (LigerFusedLinearCrossEntropyLoss), which is not installed")
    elif tr["loss"] == "flash_ce":
        no("training.loss", "flash_ce is flash-attn's Triton cross-entropy with an in-place backward (verl); "
                            "the probe does not run it")
    elif tr["loss"] in ("bf16_ce", "chunked_inplace"):
        no("training.loss", "%s is ms-swift's loss under sequence parallelism; the probe does not run it" % tr["loss"])
    loss_desc = {
        "standard": "F.cross_entropy(logits.float()) over the full logits",
        "chunked": "the output projection and an upcast + F.cross_entropy per chunk, %d chunks "
                   "(torchtune CEWithChunkedOutputLoss)" % tr["loss_chunks"],
        "compiled": "torch.compile of F.cross_entropy(logits.float()) (torchtitan)",
        "fused": "Liger fused linear cross-entropy",
        "hf_upcast": "logits.float(), shifted .contiguous() copy, F.cross_entropy (transformers < 4.45)",
        "loss_parallel": "loss_parallel() over the vocabulary-sharded logits (DTensor cross-entropy)"
                         if layout and layout["tp"] > 1 else
                         "without TP loss_parallel() is the standard F.cross_entropy(logits.float()) "
                         "over the full logits",
    }.get(loss["kind"])
    if loss_desc:
        applied.append("loss %s: %s; logits dropped before backward" % (loss["kind"], loss_desc))

    # ---- fine-tuning ----
    fin = {"method": method}
    if lora:
        targets = [t for t in ft["lora_targets"] if not (t == "gate" and m["mlp"] != "gated")]
        if not targets:
            no("training.finetune.lora_targets", "no LoRA target exists in this model")
        fin.update(rank=ft["lora_rank"], alpha=2 * ft["lora_rank"], dropout=ft["lora_dropout"],
                   targets=[LORA_MODULES[t] for t in targets], adapter_dtype=ft["adapter_dtype"],
                   base_dtype=prec["base_dtype"])
        if not caps.get("peft"):
            no("training.finetune.method", "%s needs peft, which is not installed" % method)
        if method == "qlora":
            fin.update(quant=ft["quant"], double_quant=bool(ft["double_quant"]))
            if not caps.get("bitsandbytes"):
                no("training.finetune.method", "qlora needs bitsandbytes, which is not installed")
            if impl == "hf":
                no("training.finetune.method", "qlora is built on the reference decoder only (drop --impl hf)")
        applied.append("finetune %s: peft LoRA r=%d alpha=%d dropout=%s on %s%s" % (
            method, ft["lora_rank"], 2 * ft["lora_rank"], ft["lora_dropout"], ", ".join(fin["targets"]),
            "; bitsandbytes %s%s linears in the layers" % (
                ft["quant"], " + double quant" if ft["double_quant"] and ft["quant"] != "int8" else "")
            if method == "qlora" else ""))
    if tr["dropout"] and not (0 <= tr["dropout"] < 1):
        no("training.dropout", "must be in [0, 1)")
    if tr["activation_offload"]:
        no("training.activation_offload", "activation offload (saved-tensor hooks to host) is not run by the probe")

    # ---- runtime / hardware: estimator inputs ----
    if rt["torch_compile"]:
        no("runtime.torch_compile", "whole-model torch.compile is not applied by the probe")
    alloc_conf = alloc_conf_of(rt)
    if alloc_conf:
        applied.append("allocator: PYTORCH_CUDA_ALLOC_CONF=%s" % alloc_conf)
    if rt["empty_cache_after_init"]:
        applied.append("torch.cuda.empty_cache() after building the model, before the first step")
    for k in ("cuda_context_mib", "cublas_workspace_mib", "nccl_buffer_mib", "allocator_reserve"):
        if rt[k] is not None:
            notes.append("runtime.%s is an estimator input; the probe measures the real value" % k)
    notes.append("hardware.* is an estimator input; the probe runs on the GPU it finds (see environment)")
    if eff["formula"] != "llmem":
        notes.append("formula %s selects an estimator formula; the run is the same" % eff["formula"])

    # ---- implementation ----
    hf = None
    if impl == "hf":
        if not caps.get("transformers"):
            no("impl", "--impl hf needs transformers, which is not installed")
        mapping, why = hf_model_mapping(m, tr["dropout"])
        if mapping is None:
            no("impl", "--impl hf: %s (use the reference decoder)" % why)
        else:
            hf = {"model_type": mapping[0], "config": mapping[1],
                  "attn_implementation": "eager" if att == "eager" else "sdpa"}
            applied.append("model: transformers %s from AutoConfig.for_model + from_config (random weights)"
                           % mapping[0])
    else:
        applied.append("model: llmem reference decoder (HF Llama-style eager modules: RMSNorm upcast to "
                       "fp32, RoPE on [b, heads, s, d], %s MLP), random weights" % (
                           "SwiGLU" if m["mlp"] == "gated" else "GELU"))

    if layout is not None:
        if impl == "hf":
            no("impl", "--impl hf is not sharded by the probe (the reference decoder is)")
        if opt["in_backward"]:
            no("training.optimizer_in_backward", "not combined with FSDP2 by the probe")
        if (opt["class"] or "").startswith("bitsandbytes"):
            no("training.optimizer", "bitsandbytes optimizers are not combined with FSDP2 by the probe")
        if layout["tp"] > 1 and tr["loss"] in ("chunked", "compiled", "hf_upcast"):
            no("training.loss", "%s under TP is not built by the probe (standard or loss_parallel)" % tr["loss"])
        if layout["shard_root_modules"] and m["tied_embeddings"]:
            notes.append("parallel.shard_root_modules: a tied embedding and output projection stay in the root unit")
        notes.append("runtime.nccl_buffer_mib: the fake process group has no NCCL buffers (set 0 to compare "
                     "device-used readings)")

    if refuse:
        raise Refusal(refuse)

    total = count_params_analytic(m)
    trainable = lora_params_analytic(m, ft["lora_rank"], [t for t in ft["lora_targets"]]) if lora else total
    return {
        "probe_version": PROBE_VERSION,
        "impl": impl,
        "hf": hf,
        "model": {k: m[k] for k in ("layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "mlp",
                                    "vocab", "tied_embeddings", "head", "num_labels", "norm", "bias",
                                    "qkv_bias", "qk_norm", "norms_per_layer", "attn_sinks", "type_vocab",
                                    "embedding_norm", "final_norm", "lm_head_bias", "position",
                                    "max_positions")},
        "model_name": m.get("name"),
        "engine": engine,
        "layout": layout,
        "ddp": {"gradient_as_bucket_view": bool(par["grad_as_bucket_view"]),
                "find_unused_parameters": bool(par["ddp_find_unused_parameters"]),
                "bucket_cap_mb": par["ddp_bucket_cap_mib"]} if engine == "ddp" else None,
        "micro_batch": tr["micro_batch"], "seq_len": tr["seq_len"], "grad_accum": tr["grad_accum"],
        "precision": prec,
        "optimizer": opt,
        "recompute": rec,
        "attention": att,
        "loss": loss,
        "dropout": tr["dropout"],
        "finetune": fin,
        "expandable_segments": bool(rt["expandable_segments"]),
        "alloc_conf": alloc_conf,
        "empty_cache_after_init": bool(rt["empty_cache_after_init"]),
        "params": {"total": total + (trainable if lora else 0), "base": total,
                   "trainable": trainable},
        "applied": applied,
        "notes": notes,
    }
