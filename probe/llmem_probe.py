#!/usr/bin/env python3
"""llmem probe: measure the per-GPU training memory of one config-v1 run on one GPU.

    python3 probe/llmem_probe.py config.json -o measured.json [--steps 3 --warmup 2]
    python3 probe/llmem_probe.py config.json --dry-run        # the plan; no GPU needed

The config is config v1 (docs/config.md). A missing key takes
its documented default (the same table `npx llmem defaults` prints), and
model.preset is read from frontend/config/catalog/models.json with explicit
model keys merged over it. The probe builds the model from its architecture
with random weights (a compact reference decoder in plain PyTorch, or with
--impl hf a transformers model from AutoConfig.for_model + from_config), runs
warm-up and measured training steps on random tokens, and writes

    {"ok": true, "config": <the config as given>,
     "measured": {"peak_allocated_bytes", "peak_reserved_bytes", "device_used_bytes",
                  "phases": {"forward": {...}, "backward": {...}, "optimizer": {...}},
                  "step_seconds", ...},
     "environment": {...}, "probe": {the plan: what was applied, notes}}

Anything one GPU cannot reproduce faithfully is refused (exit status 2) with
a message naming the key: the probe never silently measures something else.
Exit status: 0 measured, 1 error, 2 refused (or usage error), 3 out of memory.

Only the standard library is needed for the plan and the refusals; torch is
needed to build, count (on the meta device) and measure. Nothing is downloaded.
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import datetime
import importlib.util
import json
import os
import platform
import sys
import tempfile
import time

try:  # the plan and the refusals work without torch; building and measuring need it
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.utils.checkpoint

    _Module = nn.Module
    TORCH_IMPORT_ERROR = None
except Exception as _e:  # pragma: no cover - exercised when torch is missing
    torch = nn = F = None
    _Module = object
    TORCH_IMPORT_ERROR = "%s: %s" % (type(_e).__name__, _e)

PROBE_VERSION = 1
EXIT_OK, EXIT_ERROR, EXIT_REFUSED, EXIT_OOM = 0, 1, 2, 3
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CATALOG = os.path.join(REPO_ROOT, "frontend", "config", "catalog", "models.json")

# Config v1 defaults: what every omitted key stands for (`npx llmem defaults`;
# tests/probe checks this table against the CLI when node is available).
DEFAULTS = json.loads(r"""{
 "version": 1,
 "formula": "llmem",
 "model": {
  "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": null, "head_dim": null,
  "ffn_hidden": 14336, "mlp": "gated", "vocab": 128256, "vocab_multiple": 1,
  "tied_embeddings": false, "head": "lm", "num_labels": 2, "norm": "rmsnorm",
  "bias": false, "qkv_bias": false, "qk_norm": "none", "norms_per_layer": 2,
  "attn_sinks": false, "type_vocab": 0, "embedding_norm": false, "final_norm": true,
  "lm_head_bias": false, "parallel_block": false, "mtp_layers": 0, "position": "rope", "max_positions": 131072,
  "moe": {"experts": 0, "top_k": 1, "expert_ffn_hidden": null, "shared_experts": 0,
          "shared_expert_ffn_hidden": null, "shared_expert_gate": false, "router_bias": false,
          "dense_layers": 0, "layer_freq": 1, "capacity_factor": null, "latent_size": null,
          "load_imbalance": 1},
  "mla": {"q_lora_rank": null, "kv_lora_rank": 0, "qk_nope_head_dim": 0,
          "qk_rope_head_dim": 0, "v_head_dim": 0}
 },
 "training": {
  "micro_batch": 1, "seq_len": 4096, "grad_accum": 1, "dtype": "bf16", "fp8_linear": false,
  "master_weights": true, "grad_dtype": "fp32", "optimizer": "adamw", "optimizer_dtype": "fp32",
  "optimizer_impl": null, "optimizer_in_backward": false, "paged_optimizer": false,
  "recompute": "none", "recompute_modules": ["core_attn"], "recompute_layers": null,
  "dropout": 0, "attention": "flash", "loss": null, "loss_chunks": 8,
  "repeat_kv": null, "activation_offload": false,
  "finetune": {"method": "full", "lora_rank": 16,
               "lora_targets": ["q", "k", "v", "o", "gate", "up", "down"],
               "lora_dropout": 0, "adapter_dtype": "fp32", "base_dtype": null,
               "quant": "nf4", "double_quant": true, "quant_keeps_input": null}
 },
 "parallel": {
  "gpus": 8, "gpus_per_node": 8, "tp": 1, "pp": 1, "vpp": 1, "cp": 1, "ep": 1, "etp": 1,
  "sequence_parallel": true, "pp_schedule": "1f1b", "pp_first_stage_layers": null,
  "pp_last_stage_layers": null, "engine": "fsdp2", "shard_with_cp": true, "zero_stage": 0,
  "fsdp_strategy": "full_shard", "fsdp_shard_size": null, "reshard_after_forward": true,
  "shard_root_modules": null,
  "distributed_optimizer": false, "offload_optimizer": "none", "offload_params": "none",
  "fp8_all_gather": false, "zero_init": true, "grad_as_bucket_view": false,
  "reduce_bucket_size": 500000000, "allgather_bucket_size": 500000000, "overlap_comm": null,
  "stage3_prefetch_bucket_size": 50000000, "stage3_max_live_parameters": 1000000000,
  "stage3_param_persistence_threshold": 100000
 },
 "hardware": {"memory_gib": 80, "bf16_tflops": 989, "fp8_tflops": null, "intra_node_gb_per_s": 450,
              "inter_node_gb_per_s": 50},
 "runtime": {"cuda_context_mib": null, "cublas_workspace_mib": null, "nccl_buffer_mib": null,
             "allocator_reserve": null, "expandable_segments": false, "max_split_size_mib": null,
             "gc_threshold": 0, "torch_compile": false,
             "compute_efficiency": 0.4, "framework": "generic"}
}""")

# What llmem's generic training stack sets for keys left null (core/profiles.def,
# LLMEM_FW_GENERIC rows; tests/probe checks they agree): the probe runs plain PyTorch.
GENERIC_STACK = {"training.optimizer_impl": "foreach", "training.loss": "standard"}

# Keys a config may carry beyond the defaults table (catalog references, labels).
# Every hardware.* key describes the GPU for the estimator: the probe runs on the
# GPU it finds, so new hardware keys are accepted; a new key anywhere else may
# change what runs and is refused until the probe knows it.
EXTRA_KEYS = {"model.preset", "model.name", "runtime.framework_version"}
LENIENT_SECTIONS = {"hardware"}
# Inputs of llmem's step-time model, not of the memory: never noted.
TIME_ONLY_KEYS = {"runtime.compute_efficiency"}

DTYPES = ["fp32", "fp16", "bf16", "fp8"]
ENUMS = {
    "formula": ["llmem", "megatron", "megatron_bridge", "deepspeed", "deepspeed_legacy",
                "zero_paper", "korthikanti"],
    "model.mlp": ["gated", "plain"],
    "model.head": ["lm", "classification", "none"],
    "model.norm": ["rmsnorm", "layernorm"],
    "model.position": ["rope", "learned"],
    "model.qk_norm": ["none", "head", "full"],
    "training.dtype": DTYPES,
    "training.grad_dtype": DTYPES,
    "training.optimizer_dtype": DTYPES,
    "training.optimizer": ["adamw", "adam", "sgd", "sgd_momentum", "adafactor", "lion",
                           "adamw_8bit", "muon"],
    "training.optimizer_impl": ["foreach", "fused", "for_loop"],
    "training.recompute": ["none", "selective", "per_op", "full"],
    "training.attention": ["flash", "sdpa_math", "eager"],
    "runtime.framework": ["generic", "torchtitan", "torchtune", "hf_trainer", "accelerate", "litgpt", "megatron",
                          "deepspeed", "axolotl", "llamafactory", "nemo"],
    "training.loss": ["standard", "chunked", "fused", "compiled", "hf_upcast", "loss_parallel"],
    "training.finetune.method": ["full", "lora", "qlora"],
    "training.finetune.adapter_dtype": DTYPES,
    "training.finetune.quant": ["nf4", "fp4", "int8"],
    "parallel.pp_schedule": ["gpipe", "1f1b", "interleaved", "zero_bubble"],
    "parallel.engine": ["single", "ddp", "deepspeed", "fsdp1", "fsdp2", "megatron",
                        "megatron_deepspeed"],
    "parallel.fsdp_strategy": ["full_shard", "shard_grad_op", "hybrid_shard", "no_shard"],
    "parallel.offload_optimizer": ["none", "cpu", "nvme"],
    "parallel.offload_params": ["none", "cpu", "nvme"],
}
SETS = {
    "training.recompute_modules": ["core_attn", "mlp", "layernorm", "moe", "moe_act", "mla_up_proj"],
    "training.finetune.lora_targets": ["q", "k", "v", "o", "gate", "up", "down"],
}
LORA_MODULES = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj",
                "gate": "gate_proj", "up": "up_proj", "down": "down_proj"}
TORCH_DTYPE_NAMES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


class Refusal(Exception):
    """The config asks for something one GPU cannot run faithfully here."""

    def __init__(self, items):
        if isinstance(items, tuple):
            items = [items]
        self.items = list(items)  # [(path, message)]
        super().__init__("; ".join(m for _, m in self.items))

    @property
    def path(self):
        return self.items[0][0] if self.items else ""

    def to_error(self):
        return {"path": self.path, "message": str(self),
                "refusals": [{"path": p, "message": m} for p, m in self.items]}


class ProbeError(Exception):
    pass


# --------------------------------------------------------------------------
# Config: preset, defaults, checks
# --------------------------------------------------------------------------

def deep_merge(base, over):
    """Keys of `over` win, a null in `over` too (it means "none"), as resolve.ts."""
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            out[k] = deep_merge(base[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def load_catalog(path=None):
    with open(path or DEFAULT_CATALOG) as f:
        return json.load(f)


def resolve_preset(config, catalog=None, catalog_path=None):
    """model.preset fills the model before explicit model keys override it."""
    config = copy.deepcopy(config)
    model = config.get("model")
    if isinstance(model, dict) and model.get("preset") is not None:
        if catalog is None:
            catalog = load_catalog(catalog_path)
        pid = model["preset"]
        entry = next((e for e in catalog if e.get("id") == pid), None)
        if entry is None:
            raise Refusal(("model.preset", "model.preset: unknown model %s (allowed: %s)"
                           % (json.dumps(pid), ", ".join(e["id"] for e in catalog))))
        base = dict(entry["model"], name=entry.get("name"))
        config["model"] = deep_merge(base, model)
    return config


def _unknown_keys(obj, defaults, prefix):
    out = []
    for k, v in obj.items():
        path = prefix + k
        if path in EXTRA_KEYS or (not prefix and k in LENIENT_SECTIONS and isinstance(v, dict)):
            continue
        if k not in defaults:
            out.append(path)
        elif isinstance(defaults[k], dict) and isinstance(v, dict):
            out.extend(_unknown_keys(v, defaults[k], path + "."))
    return out


def effective_config(config, catalog=None, catalog_path=None):
    """The config with the preset resolved and every omitted key at its default."""
    if not isinstance(config, dict):
        raise Refusal(("", "the config must be a JSON object"))
    resolved = resolve_preset(config, catalog, catalog_path)
    unknown = _unknown_keys(resolved, DEFAULTS, "")
    if unknown:
        raise Refusal([(p, "%s: unknown key; the probe cannot tell whether it changes the run "
                           "(config v1 keys: `npx llmem defaults`)" % p) for p in unknown])
    eff = copy.deepcopy(deep_merge(DEFAULTS, resolved))
    for path, value in GENERIC_STACK.items():  # null: the training stack's value; the probe is plain PyTorch
        section, key = path.split(".")
        if eff[section][key] is None:
            eff[section][key] = value
    m = eff["model"]
    if m.get("kv_heads") is None:
        m["kv_heads"] = m["heads"]
    if m.get("head_dim") is None:
        m["head_dim"] = m["hidden"] // m["heads"]
    return eff


def _get(eff, path):
    cur = eff
    for part in path.split("."):
        cur = cur[part]
    return cur


def _check_values(eff):
    bad = []
    for path, allowed in ENUMS.items():
        v = _get(eff, path)
        if v not in allowed:
            bad.append((path, "%s: %s is not one of %s" % (path, json.dumps(v), ", ".join(allowed))))
    bd = eff["training"]["finetune"]["base_dtype"]
    if bd is not None and bd not in DTYPES:
        bad.append(("training.finetune.base_dtype", "training.finetune.base_dtype: %s is not null or one of %s"
                    % (json.dumps(bd), ", ".join(DTYPES))))
    for path, allowed in SETS.items():
        v = _get(eff, path)
        if not isinstance(v, list) or any(x not in allowed for x in v):
            bad.append((path, "%s: must be a list of %s" % (path, ", ".join(allowed))))
    ints = ["model.layers", "model.hidden", "model.heads", "model.kv_heads", "model.head_dim",
            "model.ffn_hidden", "model.vocab", "model.vocab_multiple", "model.max_positions",
            "training.micro_batch", "training.seq_len", "training.grad_accum", "training.loss_chunks",
            "parallel.gpus"]
    for path in ints:
        v = _get(eff, path)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            bad.append((path, "%s: must be an integer >= 1 (got %s)" % (path, json.dumps(v))))
    if bad:
        raise Refusal(bad)


# --------------------------------------------------------------------------
# What this Python can do
# --------------------------------------------------------------------------

def _pkg_version(name):
    try:
        if importlib.util.find_spec(name) is None:
            return None
    except (ImportError, ValueError):
        return None
    from importlib import metadata
    dists = {"pynvml": ("nvidia-ml-py", "pynvml")}.get(name, (name.replace("_", "-"),))
    for dist in dists:
        try:
            return metadata.version(dist)
        except Exception:
            continue
    return "unknown"


def _torch_at_least(major, minor):
    if torch is None:
        return False
    try:
        parts = torch.__version__.split("+")[0].split(".")
        return (int(parts[0]), int(parts[1])) >= (major, minor)
    except Exception:
        return False


def detect_capabilities():
    """Feature flags the translation depends on; tests pass their own dict."""
    caps = {"torch": None, "sdpa": False, "sdpa_kernel": False, "enable_gqa": False, "sac": False,
            "adafactor": False, "fused_adam": False, "fused_sgd": False, "compile": False,
            "post_accumulate_grad_hook": False, "cuda": False, "meta_device": False}
    if torch is not None:
        import inspect
        caps["torch"] = torch.__version__
        caps["sdpa"] = hasattr(F, "scaled_dot_product_attention")
        caps["sdpa_kernel"] = importlib.util.find_spec("torch.nn.attention") is not None or \
            hasattr(torch.backends.cuda, "sdp_kernel")
        caps["enable_gqa"] = caps["sdpa"] and _torch_at_least(2, 5)
        caps["sac"] = hasattr(torch.utils.checkpoint, "create_selective_checkpoint_contexts")
        caps["adafactor"] = hasattr(torch.optim, "Adafactor")
        caps["fused_adam"] = _torch_at_least(2, 0)
        try:
            caps["fused_sgd"] = "fused" in inspect.signature(torch.optim.SGD.__init__).parameters
        except (TypeError, ValueError):
            caps["fused_sgd"] = False
        caps["compile"] = hasattr(torch, "compile")
        caps["post_accumulate_grad_hook"] = hasattr(torch.Tensor, "register_post_accumulate_grad_hook")
        caps["cuda"] = bool(torch.cuda.is_available())
        caps["meta_device"] = True
    for name in ("transformers", "peft", "bitsandbytes", "liger_kernel", "pynvml"):
        caps[name] = _pkg_version(name)
    return caps


# What a current CUDA build of torch (>= 2.5) offers: a dry run assumes it when
# the local torch is missing or older, so the plan shows what the GPU machine runs.
MODERN_TORCH_CAPS = {"torch": ">= 2.5 (assumed for the dry run)", "sdpa": True, "sdpa_kernel": True,
                     "enable_gqa": True, "sac": True, "adafactor": True, "fused_adam": True,
                     "fused_sgd": True, "compile": True, "post_accumulate_grad_hook": True}
OPTIONAL_PACKAGES = ("transformers", "peft", "bitsandbytes", "liger_kernel")


def dry_run_capabilities(caps, assume=(), local_only=False):
    """Capabilities for --dry-run: local ones, plus a modern torch unless local_only, plus --assume."""
    caps = dict(caps)
    assumed = []
    if not local_only:
        for k, v in MODERN_TORCH_CAPS.items():
            if k != "torch" and not caps.get(k):
                caps[k] = v
                assumed.append(k)
        if assumed:
            caps["torch"] = "%s locally; %s" % (caps.get("torch"), MODERN_TORCH_CAPS["torch"])
    for name in assume:
        for pkg in (OPTIONAL_PACKAGES if name == "all" else (name,)):
            if not caps.get(pkg):
                caps[pkg] = "assumed"
                assumed.append(pkg)
    caps["assumed"] = assumed
    return caps


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


def translate(config, caps=None, catalog=None, catalog_path=None, impl="reference"):
    """The plan for `config`, or Refusal listing everything that cannot be reproduced."""
    caps = detect_capabilities() if caps is None else caps
    eff = effective_config(config, catalog, catalog_path)
    _check_values(eff)
    m, tr, par, rt = eff["model"], eff["training"], eff["parallel"], eff["runtime"]
    ft = tr["finetune"]
    refuse, applied, notes = [], [], []

    def no(path, message):
        refuse.append((path, "%s: %s" % (path, message)))

    if impl not in ("reference", "hf"):
        no("impl", "--impl must be reference or hf")

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

    # ---- one GPU, plain PyTorch ----
    if par["gpus"] != 1:
        no("parallel.gpus", "%d GPUs; the probe measures a single-GPU run (set parallel.gpus to 1 "
           "and run multi-GPU layouts with their own launcher)" % par["gpus"])
    for k, what in (("tp", "tensor"), ("pp", "pipeline"), ("vpp", "virtual-pipeline"),
                    ("cp", "context"), ("ep", "expert"), ("etp", "expert-tensor")):
        if par[k] != 1:
            no("parallel." + k, "%s parallelism (%s=%s) needs more than one GPU; the probe runs "
               "%s=1" % (what, k, par[k], k))
    engine = par["engine"]
    if engine not in ("single", "ddp"):
        no("parallel.engine", "%s%s is not reproduced by the probe, which runs plain PyTorch on one "
           "GPU (engine 'single', or 'ddp' with one rank)"
           % (engine, " with %d GPUs" % par["gpus"] if par["gpus"] > 1 else ""))
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
                       "(gradient_as_bucket_view=%s)" % bool(par["grad_as_bucket_view"]))
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
           "paged": bool(tr["paged_optimizer"])}
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
    if opt["class"]:
        applied.append("optimizer: %s(%s)%s" % (
            opt["class"], ", ".join("%s=%s" % kv for kv in sorted(opt["kwargs"].items())),
            " stepped per parameter in the backward (post-accumulate-grad hooks)" if opt["in_backward"] else
            "; zero_grad(set_to_none=True) after step"))

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
    loss_desc = {
        "standard": "F.cross_entropy(logits.float()) over the full logits",
        "chunked": "the output projection and an upcast + F.cross_entropy per chunk, %d chunks "
                   "(torchtune CEWithChunkedOutputLoss)" % tr["loss_chunks"],
        "compiled": "torch.compile of F.cross_entropy(logits.float()) (torchtitan)",
        "fused": "Liger fused linear cross-entropy",
        "hf_upcast": "logits.float(), shifted .contiguous() copy, F.cross_entropy (transformers < 4.45)",
        "loss_parallel": "without TP loss_parallel() is the standard F.cross_entropy(logits.float()) "
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
    if rt["expandable_segments"]:
        applied.append("allocator: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")
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
        "ddp": {"gradient_as_bucket_view": bool(par["grad_as_bucket_view"])} if engine == "ddp" else None,
        "micro_batch": tr["micro_batch"], "seq_len": tr["seq_len"], "grad_accum": tr["grad_accum"],
        "precision": prec,
        "optimizer": opt,
        "recompute": rec,
        "attention": att,
        "loss": loss,
        "dropout": tr["dropout"],
        "finetune": fin,
        "expandable_segments": bool(rt["expandable_segments"]),
        "params": {"total": total + (trainable if lora else 0), "base": total,
                   "trainable": trainable},
        "applied": applied,
        "notes": notes,
    }


# --------------------------------------------------------------------------
# The reference decoder (plain PyTorch; HF Llama-style eager modules)
# --------------------------------------------------------------------------

class RMSNorm(_Module):
    def __init__(self, dim, eps=1e-6, device=None, dtype=None):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim, device=device, dtype=dtype))
        self.eps = eps

    def forward(self, x):  # transformers LlamaRMSNorm
        dt = x.dtype
        x = x.to(torch.float32)
        var = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(var + self.eps)
        return self.weight * x.to(dt)


def make_norm(kind, dim, fk):
    if kind == "rmsnorm":
        return RMSNorm(dim, **fk)
    return nn.LayerNorm(dim, eps=1e-5, **fk)


def _rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def _repeat_kv(x, n_rep):
    if n_rep == 1:
        return x
    b, g, s, d = x.shape
    return x[:, :, None, :, :].expand(b, g, n_rep, s, d).reshape(b, g * n_rep, s, d)


@contextlib.contextmanager
def _null():
    yield


def sdpa_backend_context(kind):
    """Restrict torch SDPA: flash -> flash + memory-efficient kernels, sdpa_math -> math."""
    if kind not in ("flash", "sdpa_math") or torch is None:
        return _null()
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backs = ([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION] if kind == "flash"
                 else [SDPBackend.MATH])
        return sdpa_kernel(backs)
    except ImportError:
        if hasattr(torch.backends.cuda, "sdp_kernel"):
            flash = kind == "flash"
            return torch.backends.cuda.sdp_kernel(enable_flash=flash, enable_mem_efficient=flash,
                                                  enable_math=not flash)
        return _null()


class AttentionRuntime:
    """What the attention actually did (recorded in the result)."""

    def __init__(self, kind, enable_gqa):
        self.kind = kind
        self.enable_gqa = enable_gqa
        self.gqa_path = None


class Attention(_Module):
    def __init__(self, m, rt, dropout, fk, causal=True):
        super().__init__()
        h, a, g, d = m["hidden"], m["heads"], m["kv_heads"], m["head_dim"]
        self.a, self.g, self.d = a, g, d
        qkv_bias = bool(m["bias"] or m["qkv_bias"])
        self.q_proj = nn.Linear(h, a * d, bias=qkv_bias, **fk)
        self.k_proj = nn.Linear(h, g * d, bias=qkv_bias, **fk)
        self.v_proj = nn.Linear(h, g * d, bias=qkv_bias, **fk)
        self.o_proj = nn.Linear(a * d, h, bias=bool(m["bias"]), **fk)
        self.qk_norm = m["qk_norm"]
        if self.qk_norm == "head":
            self.q_norm, self.k_norm = RMSNorm(d, **fk), RMSNorm(d, **fk)
        elif self.qk_norm == "full":
            self.q_norm, self.k_norm = RMSNorm(a * d, **fk), RMSNorm(g * d, **fk)
        self.sinks = nn.Parameter(torch.zeros(a, **fk)) if m["attn_sinks"] else None
        self.rope = m["position"] == "rope"
        self.rt = rt
        self.p = dropout
        self.causal = causal
        self.checkpoint_core = False

    def core(self, q, k, v):
        """Attention kernel: [b, a, s, d] x [b, g, s, d] -> [b, a, s, d]."""
        n_rep = self.a // self.g
        p = self.p if self.training else 0.0
        rt = self.rt
        if rt.kind == "eager":
            k, v = _repeat_kv(k, n_rep), _repeat_kv(v, n_rep)
            scores = torch.matmul(q, k.transpose(2, 3)) * (self.d ** -0.5)
            if self.causal:
                s = q.shape[-2]
                mask = torch.full((s, s), torch.finfo(self._mask_dtype).min, device=q.device,
                                  dtype=self._mask_dtype).triu_(1)
                scores = scores + mask
            if self.sinks is not None:
                sink = self.sinks.reshape(1, -1, 1, 1).expand(q.shape[0], -1, q.shape[-2], 1).to(scores.dtype)
                scores = torch.cat([scores, sink], dim=-1)
            probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
            if self.sinks is not None:
                probs = probs[..., :-1]
            probs = F.dropout(probs, p=p, training=self.training)
            return torch.matmul(probs, v)
        with sdpa_backend_context(rt.kind):
            if n_rep > 1 and rt.kind == "flash" and rt.enable_gqa and rt.gqa_path != "repeat_kv":
                try:
                    out = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=self.causal,
                                                         enable_gqa=True)
                    rt.gqa_path = "enable_gqa"
                    return out
                except RuntimeError as e:  # no kernel for GQA here (e.g. fp32 on the efficient kernel)
                    rt.gqa_path = "repeat_kv"
                    rt.gqa_fallback_reason = str(e).splitlines()[0][:200]
            if n_rep > 1:
                k, v = _repeat_kv(k, n_rep), _repeat_kv(v, n_rep)
                rt.gqa_path = rt.gqa_path or "repeat_kv"
            return F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=self.causal)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        if self.qk_norm == "full":
            q, k = self.q_norm(q), self.k_norm(k)
        q = q.view(b, s, self.a, self.d)
        k = k.view(b, s, self.g, self.d)
        if self.qk_norm == "head":
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        v = v.view(b, s, self.g, self.d).transpose(1, 2)
        if self.rope:  # transformers apply_rotary_pos_emb
            q = q * cos + _rotate_half(q) * sin
            k = k * cos + _rotate_half(k) * sin
        self._mask_dtype = x.dtype
        if self.checkpoint_core:
            out = torch.utils.checkpoint.checkpoint(self.core, q, k, v, use_reentrant=False)
        else:
            out = self.core(q, k, v)
        out = out.transpose(1, 2).reshape(b, s, self.a * self.d)
        return self.o_proj(out)


class MLP(_Module):
    def __init__(self, m, fk):
        super().__init__()
        h, f, bias = m["hidden"], m["ffn_hidden"], bool(m["bias"])
        self.gated = m["mlp"] == "gated"
        if self.gated:
            self.gate_proj = nn.Linear(h, f, bias=bias, **fk)
        self.up_proj = nn.Linear(h, f, bias=bias, **fk)
        self.down_proj = nn.Linear(f, h, bias=bias, **fk)

    def forward(self, x):
        if self.gated:  # transformers LlamaMLP
            return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
        return self.down_proj(F.gelu(self.up_proj(x)))


class Block(_Module):
    def __init__(self, m, rt, dropout, fk, causal=True):
        super().__init__()
        h = m["hidden"]
        self.n = m["norms_per_layer"]
        self.input_norm = make_norm(m["norm"], h, fk)
        if self.n >= 2:
            self.post_attention_norm = make_norm(m["norm"], h, fk)
        if self.n == 4:
            self.pre_feedforward_norm = make_norm(m["norm"], h, fk)
            self.post_feedforward_norm = make_norm(m["norm"], h, fk)
        self.attn = Attention(m, rt, dropout, fk, causal)
        self.mlp = MLP(m, fk)
        self.p = dropout
        self.checkpoint_mlp = False

    def _mlp(self, x):
        if self.checkpoint_mlp:
            return torch.utils.checkpoint.checkpoint(self.mlp, x, use_reentrant=False)
        return self.mlp(x)

    def _drop(self, x):
        return F.dropout(x, p=self.p, training=self.training) if self.p else x

    def forward(self, x, cos, sin):
        if self.n == 1:  # parallel attention + MLP on one norm (Falcon-7B)
            y = self.input_norm(x)
            return x + self._drop(self.attn(y, cos, sin)) + self._drop(self._mlp(y))
        if self.n == 2:  # pre-norm
            x = x + self._drop(self.attn(self.input_norm(x), cos, sin))
            return x + self._drop(self._mlp(self.post_attention_norm(x)))
        # Gemma sandwich norms
        x = x + self._drop(self.post_attention_norm(self.attn(self.input_norm(x), cos, sin)))
        return x + self._drop(self.post_feedforward_norm(self._mlp(self.pre_feedforward_norm(x))))


def _per_op_context_fn():
    """torchtitan's op-level SAC policy: save every other mm and the attention kernels' outputs."""
    from collections import defaultdict
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts
    ops = torch.ops.aten
    save = {ops.mm.default}
    for name in ("_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
                 "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_flash_attention_for_cpu"):
        op = getattr(ops, name, None)
        if op is not None:
            save.add(op.default)
    meta = defaultdict(int)

    def policy(ctx, func, *args, **kwargs):
        key = "%s_mm_count" % ("recompute" if ctx.is_recompute else "forward")
        if func == ops.mm.default:
            meta[key] += 1
        keep = func in save and not (func == ops.mm.default and meta[key] % 2 == 0)
        return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE

    return create_selective_checkpoint_contexts(policy)


class LossComputer:
    """Head + loss on the final hidden states, by plan["loss"]."""

    def __init__(self, plan):
        self.kind = plan["loss"]["kind"]
        self.chunks = plan["loss"]["chunks"]
        self._compiled = None
        self._liger = None

    def __call__(self, hidden, labels, lm_head=None, pooler=None, classifier=None):
        kind = self.kind
        if kind == "none":
            return hidden.float().mean()
        if kind == "classification":
            pooled = torch.tanh(pooler(hidden[:, 0]))
            logits = classifier(pooled)
            return F.cross_entropy(logits.float(), labels[:, 0] % logits.shape[-1])
        if kind == "chunked":
            outs = [lm_head(hc) for hc in hidden.chunk(self.chunks, dim=1)]
            labs = labels.chunk(self.chunks, dim=1)
            total = None
            for o, y in zip(outs, labs):
                part = F.cross_entropy(o.float().reshape(-1, o.shape[-1]), y.reshape(-1), reduction="sum")
                total = part if total is None else total + part
            return total / labels.numel()
        if kind == "fused":
            if self._liger is None:
                from liger_kernel.transformers import LigerFusedLinearCrossEntropyLoss
                self._liger = LigerFusedLinearCrossEntropyLoss()
            return self._liger(lm_head.weight, hidden.reshape(-1, hidden.shape[-1]), labels.reshape(-1),
                               lm_head.bias)
        logits = lm_head(hidden)
        if kind == "compiled":
            if self._compiled is None:
                def ce(lg, y):
                    return F.cross_entropy(lg.flatten(0, 1).float(), y.flatten(0, 1))
                self._compiled = torch.compile(ce)
            return self._compiled(logits, labels)
        if kind == "hf_upcast":
            logits = logits.float()
            shift = logits[..., :-1, :].contiguous()
            y = labels[..., 1:].contiguous()
            return F.cross_entropy(shift.view(-1, shift.shape[-1]), y.view(-1))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), labels.view(-1))


class ReferenceDecoder(_Module):
    """Embedding, N blocks, final norm, head; forward(ids, labels) -> loss."""

    def __init__(self, m, dropout=0.0, device=None, dtype=None, attention="flash", enable_gqa=False,
                 loss=None):
        super().__init__()
        fk = {"device": device, "dtype": dtype}
        h, V = m["hidden"], m["vocab"]
        self.m = dict(m)
        self.head_kind = m["head"]
        causal = m["head"] == "lm"
        self.rt = AttentionRuntime(attention, enable_gqa)
        self.embed_tokens = nn.Embedding(V, h, **fk)
        self.embed_positions = nn.Embedding(m["max_positions"], h, **fk) if m["position"] == "learned" else None
        self.token_type = nn.Embedding(m["type_vocab"], h, **fk) if m["type_vocab"] else None
        self.embedding_norm = make_norm(m["norm"], h, fk) if m["embedding_norm"] else None
        self.layers = nn.ModuleList([Block(m, self.rt, dropout, fk, causal) for _ in range(m["layers"])])
        self.norm = make_norm(m["norm"], h, fk) if m["final_norm"] else None
        self.lm_head = self.pooler = self.classifier = None
        if m["head"] == "lm":
            if m["tied_embeddings"]:
                self.lm_head = nn.Linear(h, V, bias=False, device="meta")
                self.lm_head.weight = self.embed_tokens.weight
                if m["lm_head_bias"]:
                    self.lm_head.bias = nn.Parameter(torch.zeros(V, **fk))
            else:
                self.lm_head = nn.Linear(h, V, bias=bool(m["lm_head_bias"]), **fk)
        elif m["head"] == "classification":
            self.pooler = nn.Linear(h, h, **fk)
            self.classifier = nn.Linear(h, m["num_labels"], **fk)
        self.p = dropout
        self.rope = m["position"] == "rope"
        self.checkpoint_layers = set()
        self.context_fn = None
        self.loss = loss

    def tie(self):
        """to_empty() unties shared parameters; tie the head to the embedding again."""
        if self.lm_head is not None and self.m["tied_embeddings"]:
            self.lm_head.weight = self.embed_tokens.weight

    def configure_recompute(self, rec):
        self.checkpoint_layers = set(rec["layers"]) if rec["mode"] in ("full", "per_op") else set()
        self.context_fn = _per_op_context_fn if rec["mode"] == "per_op" else None
        for blk in self.layers:
            blk.checkpoint_mlp = rec["mode"] == "selective" and "mlp" in rec["modules"]
            blk.attn.checkpoint_core = rec["mode"] == "selective" and "core_attn" in rec["modules"]

    def _rope(self, x, s):
        d = self.m["head_dim"]
        with torch.autocast(device_type=x.device.type, enabled=False):
            inv = 1.0 / (500000.0 ** (torch.arange(0, d, 2, device=x.device, dtype=torch.float32) / d))
            pos = torch.arange(s, device=x.device, dtype=torch.float32)
            freqs = torch.outer(pos, inv)
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype)[None, None], emb.sin().to(x.dtype)[None, None]

    def hidden_states(self, ids):
        s = ids.shape[1]
        x = self.embed_tokens(ids)
        if self.embed_positions is not None:
            x = x + self.embed_positions(torch.arange(s, device=ids.device))[None]
        if self.token_type is not None:
            x = x + self.token_type(torch.zeros_like(ids))
        if self.embedding_norm is not None:
            x = self.embedding_norm(x)
        if self.p:
            x = F.dropout(x, p=self.p, training=self.training)
        cos, sin = self._rope(x, s) if self.rope else (None, None)
        for i, layer in enumerate(self.layers):
            if i in self.checkpoint_layers:
                kw = {"use_reentrant": False}
                if self.context_fn is not None:
                    kw["context_fn"] = self.context_fn
                x = torch.utils.checkpoint.checkpoint(layer, x, cos, sin, **kw)
            else:
                x = layer(x, cos, sin)
        if self.norm is not None:
            x = self.norm(x)
        return x

    def forward(self, ids, labels):
        return self.loss(self.hidden_states(ids), labels, self.lm_head, self.pooler, self.classifier)


class HFTrainModule(_Module):
    """A transformers causal LM with the probe's loss on its final hidden states."""

    def __init__(self, hf_model, loss):
        super().__init__()
        self.hf = hf_model
        self.loss = loss

    def forward(self, ids, labels):
        out = self.hf.base_model(input_ids=ids, use_cache=False)
        return self.loss(out[0], labels, self.hf.get_output_embeddings())


def torch_dtype(name):
    return getattr(torch, TORCH_DTYPE_NAMES[name])


def build_reference(plan, device, dtype, loss=None):
    return ReferenceDecoder(plan["model"], dropout=plan["dropout"], device=device, dtype=dtype,
                            attention=plan["attention"], enable_gqa=bool(detect_gqa()),
                            loss=loss or LossComputer(plan))


def detect_gqa():
    return torch is not None and hasattr(F, "scaled_dot_product_attention") and _torch_at_least(2, 5)


def count_params_meta(model_keys, impl="reference", hf=None):
    """Parameter count of the built module on the meta device (no memory needed)."""
    if torch is None:
        raise ProbeError("torch is not importable (%s)" % TORCH_IMPORT_ERROR)
    if impl == "hf":
        model = _build_hf(hf, "meta", torch.float32)
    else:
        m = dict(DEFAULTS["model"], **model_keys)
        if m.get("kv_heads") is None:
            m["kv_heads"] = m["heads"]
        if m.get("head_dim") is None:
            m["head_dim"] = m["hidden"] // m["heads"]
        model = ReferenceDecoder(m, device="meta", dtype=torch.float32)
    return sum(p.numel() for p in model.parameters())


def module_shapes(model):
    """Parameter shapes: layer 0 stands for every layer."""
    rows, n_layers = [], 0
    for name, p in model.named_parameters():
        parts = name.split(".")
        if "layers" in parts:
            i = parts.index("layers")
            if parts[i + 1] != "0":
                continue
            name = ".".join(parts[:i + 1] + ["*"] + parts[i + 2:])
        rows.append((name, list(p.shape), p.numel()))
    for mod in model.modules():
        if isinstance(mod, nn.ModuleList):
            n_layers = max(n_layers, len(mod))
    return rows, n_layers


def _build_hf(hf, device, dtype):
    from transformers import AutoConfig, AutoModelForCausalLM
    import transformers
    cfg = AutoConfig.for_model(hf["model_type"], **hf["config"])
    major = int(transformers.__version__.split(".")[0])
    kw = {"attn_implementation": hf["attn_implementation"], ("dtype" if major >= 5 else "torch_dtype"): dtype}
    with torch.device(device):  # from_config never loads weights; random init on the target device
        model = AutoModelForCausalLM.from_config(cfg, **kw)
    return model


# --------------------------------------------------------------------------
# Building the run
# --------------------------------------------------------------------------

def _init_weights(model, std=0.02):
    """Random weights: N(0, std) matrices and tables, unit norms, zero biases and sinks."""
    with torch.no_grad():
        for mod in model.modules():
            w = getattr(mod, "weight", None)
            if not isinstance(w, torch.Tensor) or w.device.type == "meta" or not w.dtype.is_floating_point:
                continue
            b = getattr(mod, "bias", None)
            if isinstance(mod, (nn.Linear, nn.Embedding)):
                w.normal_(0.0, std)
            elif isinstance(mod, (RMSNorm, nn.LayerNorm)):
                w.fill_(1.0)
            if isinstance(b, torch.Tensor) and b.dtype.is_floating_point:
                b.zero_()
            if isinstance(mod, Attention) and mod.sinks is not None:
                mod.sinks.zero_()


def materialize(model, device):
    """A meta-device module on `device`, tied again, with random weights (no double init)."""
    model = model.to_empty(device=device)
    model.tie()
    _init_weights(model)
    return model


def _quantize_linears(model, fin, compute_dtype):
    """QLoRA: every linear of the decoder layers becomes a bitsandbytes 4-bit / int8 linear."""
    import bitsandbytes as bnb
    for layer in model.layers:
        for parent in list(layer.modules()):
            for cname, child in list(parent.named_children()):
                if not isinstance(child, nn.Linear):
                    continue
                w = child.weight.data
                if fin["quant"] == "int8":
                    new = bnb.nn.Linear8bitLt(child.in_features, child.out_features, bias=child.bias is not None,
                                              has_fp16_weights=False, threshold=6.0)
                    new.weight = bnb.nn.Int8Params(w, requires_grad=False, has_fp16_weights=False)
                else:
                    new = bnb.nn.Linear4bit(child.in_features, child.out_features, bias=child.bias is not None,
                                            compute_dtype=compute_dtype, compress_statistics=fin["double_quant"],
                                            quant_type=fin["quant"])
                    new.weight = bnb.nn.Params4bit(w, requires_grad=False, compress_statistics=fin["double_quant"],
                                                   quant_type=fin["quant"])
                if child.bias is not None:
                    new.bias = nn.Parameter(child.bias.data, requires_grad=False)
                setattr(parent, cname, new)


def _apply_lora(model, fin):
    import peft
    cfg = peft.LoraConfig(r=fin["rank"], lora_alpha=fin["alpha"], lora_dropout=fin["dropout"],
                          target_modules=list(fin["targets"]), bias="none")
    model = peft.inject_adapter_in_model(cfg, model)
    dt = torch_dtype(fin["adapter_dtype"])
    for name, p in model.named_parameters():
        if "lora_" in name:
            p.data = p.data.to(dt)
            p.requires_grad_(True)
        else:
            p.requires_grad_(False)
    return model


class Run:
    """Everything one training step needs."""

    def __init__(self, plan, device):
        self.plan = plan
        self.device = torch.device(device)
        self.model = None      # the module called for the loss (maybe DDP-wrapped)
        self.inner = None      # the unwrapped module
        self.optimizer = None
        self.per_param_optimizers = None
        self.scaler = None
        self.batches = []
        self.process_group = False


def build_run(plan, device="cuda", seed=0):
    if torch is None:
        raise ProbeError("torch is not importable (%s)" % TORCH_IMPORT_ERROR)
    run = Run(plan, device)
    dev = run.device
    torch.manual_seed(seed)
    prec, fin = plan["precision"], plan["finetune"]
    lora = fin["method"] in ("lora", "qlora")
    loss = LossComputer(plan)
    weight_dtype = torch_dtype(prec["base_dtype"] if lora else prec["param_dtype"])
    if plan["impl"] == "hf":
        hf_model = _build_hf(plan["hf"], dev, weight_dtype)
        _init_weights(hf_model)
        if plan["recompute"]["mode"] == "full":
            hf_model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model = HFTrainModule(hf_model, loss)
    elif fin["method"] == "qlora":
        model = materialize(build_reference(plan, "meta", weight_dtype, loss), "cpu")
        _quantize_linears(model, fin, torch_dtype(prec["autocast_dtype"] or prec["base_dtype"]))
        model = model.to(dev)  # bitsandbytes quantises on the transfer
        model.tie()
        model.configure_recompute(plan["recompute"])
    else:
        model = materialize(build_reference(plan, "meta", weight_dtype, loss), dev)
        model.configure_recompute(plan["recompute"])
    if lora:
        model = _apply_lora(model, fin)
    model.train()
    run.inner = model
    params = [p for p in model.parameters() if p.requires_grad]
    run.params_total = sum(p.numel() for p in model.parameters())
    run.params_trainable = sum(p.numel() for p in params)

    if plan["engine"] == "ddp":
        import torch.distributed as dist
        if not dist.is_initialized():
            fd, path = tempfile.mkstemp(prefix="llmem-probe-pg-")
            os.close(fd)
            os.unlink(path)
            dist.init_process_group("nccl" if dev.type == "cuda" else "gloo", init_method="file://" + path,
                                    rank=0, world_size=1)
            run.process_group = True
        model = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[dev.index or 0] if dev.type == "cuda" else None, broadcast_buffers=False,
            gradient_as_bucket_view=plan["ddp"]["gradient_as_bucket_view"])
    run.model = model

    opt = plan["optimizer"]
    run.optimizer_factory = _optimizer_factory(opt)
    if opt["in_backward"]:
        run.per_param_optimizers = {p: run.optimizer_factory([p]) for p in params}

        def hook(p):
            o = run.per_param_optimizers[p]
            o.step()
            o.zero_grad(set_to_none=True)

        for p in params:
            p.register_post_accumulate_grad_hook(hook)
    else:
        run.optimizer = run.optimizer_factory(params)
    if prec["grad_scaler"]:
        try:
            run.scaler = torch.amp.GradScaler(dev.type, init_scale=1.0)
        except (AttributeError, TypeError):
            run.scaler = torch.cuda.amp.GradScaler(init_scale=1.0)
    g = torch.Generator(device="cpu").manual_seed(seed + 1)
    V = plan["model"]["vocab"]
    for _ in range(plan["grad_accum"]):
        ids = torch.randint(0, V, (plan["micro_batch"], plan["seq_len"]), generator=g).to(dev)
        labels = torch.randint(0, V, (plan["micro_batch"], plan["seq_len"]), generator=g).to(dev)
        run.batches.append((ids, labels))
    return run


def _optimizer_factory(opt):
    cls_path = opt["class"]
    mod_name, cls_name = cls_path.rsplit(".", 1)
    if mod_name.startswith("bitsandbytes"):
        import bitsandbytes.optim as bo
        cls = getattr(bo, cls_name)
    else:
        cls = getattr(torch.optim, cls_name)
    lr = {"SGD": 1e-4, "Adafactor": 1e-3}.get(cls_name, 1e-5)
    kwargs = dict(opt["kwargs"])
    return lambda params: cls(params, lr=lr, **kwargs)


def _autocast(run):
    ad = run.plan["precision"]["autocast_dtype"]
    if not ad:
        return _null()
    return torch.autocast(device_type=run.device.type, dtype=torch_dtype(ad))


def _optimizer_has_state(run):
    opts = list(run.per_param_optimizers.values()) if run.per_param_optimizers else [run.optimizer]
    return any(len(o.state) > 0 for o in opts)


# --------------------------------------------------------------------------
# Memory readers (injected so the step loop runs on CPU in the tests)
# --------------------------------------------------------------------------

class CudaMemory:
    """torch.cuda counters, plus NVML (pynvml) or cudaMemGetInfo for the device-wide reading."""

    def __init__(self, device):
        self.device = torch.device(device)
        self._nvml = None
        self.nvml_error = None
        try:
            import pynvml
            pynvml.nvmlInit()
            self._nvml = (pynvml, self._nvml_handle(pynvml))
        except Exception as e:
            self.nvml_error = "%s: %s" % (type(e).__name__, e)
            self._nvml = None

    def _nvml_handle(self, pynvml):
        idx = self.device.index or 0
        try:
            uuid = str(torch.cuda.get_device_properties(idx).uuid)
            return pynvml.nvmlDeviceGetHandleByUUID(uuid if uuid.startswith("GPU-") else "GPU-" + uuid)
        except Exception:
            vis = os.environ.get("CUDA_VISIBLE_DEVICES", "")
            ids = [v.strip() for v in vis.split(",") if v.strip()]
            if ids and ids[min(idx, len(ids) - 1)].isdigit():
                idx = int(ids[min(idx, len(ids) - 1)])
            return pynvml.nvmlDeviceGetHandleByIndex(idx)

    def synchronize(self):
        torch.cuda.synchronize(self.device)

    def reset_peak(self):
        torch.cuda.reset_peak_memory_stats(self.device)

    def allocated(self):
        return int(torch.cuda.memory_allocated(self.device))

    def reserved(self):
        return int(torch.cuda.memory_reserved(self.device))

    def peak_allocated(self):
        return int(torch.cuda.max_memory_allocated(self.device))

    def peak_reserved(self):
        return int(torch.cuda.max_memory_reserved(self.device))

    def stats(self):
        """Allocator counters that explain a reserved reading (retries mean fragmentation near capacity)."""
        st = torch.cuda.memory_stats(self.device)
        return {k: int(st.get(k, 0)) for k in ("num_alloc_retries", "num_ooms", "num_device_alloc",
                                                "active_bytes.all.peak", "inactive_split_bytes.all.peak")}

    def start_history(self):
        """Record every allocator event (torch.cuda.memory._record_memory_history; no stack contexts, to keep it cheap)."""
        rec = torch.cuda.memory._record_memory_history
        try:
            rec(enabled="all", context=None, max_entries=2000000)
        except TypeError:  # older signature
            rec(True)

    def stop_history(self, phases):
        """The recorded events as the compact series of probe/snapshot_to_json.py, with the phase marks."""
        import snapshot_to_json
        snap = torch.cuda.memory._snapshot()
        try:
            torch.cuda.memory._record_memory_history(enabled=None)
        except TypeError:
            torch.cuda.memory._record_memory_history(False)
        return snapshot_to_json.convert(snap, self.device.index or 0, phases=phases)

    def device_used(self):
        if self._nvml is not None:
            pynvml, handle = self._nvml
            return int(pynvml.nvmlDeviceGetMemoryInfo(handle).used), "nvml"
        free, total = torch.cuda.mem_get_info(self.device)
        return int(total - free), "torch.cuda.mem_get_info (total - free)"

    def driver(self):
        if self._nvml is not None:
            v = self._nvml[0].nvmlSystemGetDriverVersion()
            return v.decode() if isinstance(v, bytes) else v
        try:
            with open("/proc/driver/nvidia/version") as f:
                for word in f.readline().split():
                    if word[:1].isdigit() and "." in word:
                        return word
        except OSError:
            pass
        return None


def nvml_used_before_cuda():
    """Device memory in use before this process creates its CUDA context (NVML only)."""
    try:
        import pynvml
        pynvml.nvmlInit()
        vis = [v for v in os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",") if v.strip()]
        idx = int(vis[0]) if vis and vis[0].strip().isdigit() else 0
        return int(pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(idx)).used)
    except Exception:
        return None


# --------------------------------------------------------------------------
# The step loop
# --------------------------------------------------------------------------

PHASES = ("forward", "backward", "optimizer")


def train_step(run, mark):
    """One optimizer step over grad_accum micro-batches; mark(phase) at each boundary."""
    model, n = run.model, len(run.batches)
    with sdpa_backend_context(run.plan["attention"]):
        for i, (ids, labels) in enumerate(run.batches):
            sync = contextlib.nullcontext() if i == n - 1 or not hasattr(model, "no_sync") else model.no_sync()
            with sync:
                mark("forward")
                with _autocast(run):
                    loss = model(ids, labels) / n
                mark("backward")
                if run.scaler is not None:
                    run.scaler.scale(loss).backward()
                else:
                    loss.backward()
                loss_value = loss.detach()
                del loss
    mark("optimizer")
    if run.optimizer is not None:
        if run.scaler is not None:
            run.scaler.step(run.optimizer)
            run.scaler.update()
        else:
            run.optimizer.step()
        run.optimizer.zero_grad(set_to_none=True)
    mark(None)
    return loss_value


def measure(run, reader, steps=3, warmup=2, timer=time.perf_counter):
    """Warm-up steps, then measured steps; phase peaks come from the last measured step."""
    if steps < 1:
        raise ProbeError("--steps must be >= 1")
    null_mark = lambda phase: None  # noqa: E731
    losses = []
    for _ in range(warmup):
        losses.append(float(train_step(run, null_mark)))
    if warmup and run.plan["optimizer"]["name"] != "sgd" and not _optimizer_has_state(run):
        raise ProbeError("the optimizer kept no state after %d warm-up steps (a skipped step?)" % warmup)
    reader.synchronize()
    reader.reset_peak()
    seconds = []
    peak_alloc = peak_res = 0
    resident = None
    timeline = None
    phases = {p: {"peak_allocated_bytes": 0, "peak_reserved_bytes": 0} for p in PHASES}
    for step in range(steps):
        last = step == steps - 1
        if last:
            reader.synchronize()
            peak_alloc = max(peak_alloc, reader.peak_allocated())
            peak_res = max(peak_res, reader.peak_reserved())
            resident = reader.allocated()
            state = {"phase": None, "forward": 0}
            # the last step's allocator events, with phase marks placed by wall-clock time: trace
            # entries carry time_us, unix time in microseconds (torch/csrc/cuda/memory_snapshot.cpp)
            history = hasattr(reader, "start_history")
            marks = []
            if history:
                reader.start_history()

            def mark(phase):
                reader.synchronize()
                if history and phase is not None:
                    m = {"phase": phase, "t_us": time.time_ns() // 1000}
                    if phase == "forward":
                        m["micro_batch"] = state["forward"]
                        state["forward"] += 1
                    marks.append(m)
                cur = state["phase"]
                if cur is not None:
                    ph = phases[cur]
                    ph["peak_allocated_bytes"] = max(ph["peak_allocated_bytes"], reader.peak_allocated())
                    ph["peak_reserved_bytes"] = max(ph["peak_reserved_bytes"], reader.peak_reserved())
                reader.reset_peak()
                state["phase"] = phase
        else:
            mark = lambda phase: None  # noqa: E731
        t0 = timer()
        losses.append(float(train_step(run, mark)))
        reader.synchronize()
        seconds.append(timer() - t0)
        if last and history:
            timeline = reader.stop_history(marks)
    for ph in phases.values():
        peak_alloc = max(peak_alloc, ph["peak_allocated_bytes"])
        peak_res = max(peak_res, ph["peak_reserved_bytes"])
    used, source = reader.device_used()
    rt = getattr(run.inner, "rt", None)
    out = {
        "peak_allocated_bytes": int(peak_alloc),
        "peak_reserved_bytes": int(peak_res),
        "device_used_bytes": None if used is None else int(used),
        "device_used_source": source,
        "phases": phases,
        "step_seconds": sum(seconds) / len(seconds),
        "step_seconds_each": seconds,
        "resident_bytes": None if resident is None else int(resident),
        "steps": steps,
        "warmup": warmup,
        "loss": losses[-1] if losses else None,
        "params": {"total": int(run.params_total), "trainable": int(run.params_trainable)},
    }
    if hasattr(reader, "stats"):
        out["allocator_stats"] = reader.stats()
    if timeline is not None:
        out["timeline"] = timeline
    if rt is not None:
        out["attention_path"] = {"kind": rt.kind, "gqa": rt.gqa_path or "none"}
        if getattr(rt, "gqa_fallback_reason", None):
            out["attention_path"]["gqa_fallback_reason"] = rt.gqa_fallback_reason
    return out


def collect_environment(device, caps, reader=None):
    env = {"device": str(device), "gpu": None, "capability": None, "total_memory_bytes": None,
           "driver": None, "cuda": None, "cudnn": None, "torch": caps.get("torch"),
           "transformers": caps.get("transformers"), "peft": caps.get("peft"),
           "bitsandbytes": caps.get("bitsandbytes"), "liger_kernel": caps.get("liger_kernel"),
           "pynvml": caps.get("pynvml"), "python": platform.python_version(),
           "platform": platform.platform(),
           "pytorch_cuda_alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF")}
    if torch is not None:
        env["cuda"] = torch.version.cuda
        try:
            env["cudnn"] = torch.backends.cudnn.version()
        except Exception:
            pass
        dev = torch.device(device)
        if dev.type == "cuda" and torch.cuda.is_available():
            props = torch.cuda.get_device_properties(dev.index or 0)
            env["gpu"] = props.name
            env["capability"] = "%d.%d" % (props.major, props.minor)
            env["total_memory_bytes"] = int(props.total_memory)
    if reader is not None and hasattr(reader, "driver"):
        env["driver"] = reader.driver()
    return env


def run_probe(config, steps=3, warmup=2, device="cuda", reader=None, caps=None, catalog=None,
              catalog_path=None, impl="reference", seed=0, plan=None):
    """Translate, build, measure; the result object (Refusal / ProbeError raised)."""
    caps = detect_capabilities() if caps is None else caps
    plan = plan or translate(config, caps, catalog, catalog_path, impl)
    if torch is None:
        raise ProbeError("torch is not importable (%s)" % TORCH_IMPORT_ERROR)
    if plan["expandable_segments"]:  # before the first CUDA allocation (both names: torch < / >= 2.9)
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
        os.environ["PYTORCH_ALLOC_CONF"] = "expandable_segments:True"
    dev = torch.device(device)
    baseline = None
    if reader is None:
        if dev.type != "cuda" or not torch.cuda.is_available():
            raise ProbeError("measuring needs a CUDA device (none here); --dry-run prints the plan")
        baseline = nvml_used_before_cuda()
        if plan["expandable_segments"]:
            try:
                torch.cuda.memory._set_allocator_settings("expandable_segments:True")
            except Exception:
                pass
        reader = CudaMemory(dev)
    run = build_run(plan, device, seed)
    try:
        measured = measure(run, reader, steps, warmup)
    finally:
        if run.process_group:
            import torch.distributed as dist
            dist.destroy_process_group()
    measured["device_used_before_bytes"] = baseline
    if getattr(reader, "nvml_error", None) and measured["device_used_source"] != "nvml":
        measured["device_used_note"] = "NVML unavailable: %s" % reader.nvml_error
    return {
        "ok": True,
        "config": config,
        "measured": measured,
        "environment": collect_environment(dev, caps, reader),
        "probe": {"version": PROBE_VERSION, "impl": plan["impl"], "applied": plan["applied"],
                  "notes": plan["notes"], "params": plan["params"],
                  "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")},
    }


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------

def format_plan(plan, shapes=None, meta_count=None, meta_error=None):
    m = plan["model"]
    lines = ["llmem probe plan (%s)" % (plan.get("model_name") or "model"),
             "model     layers %d, hidden %d, heads %d, kv_heads %d, head_dim %d, ffn %d (%s), vocab %d, "
             "%s, %s, head %s%s" % (m["layers"], m["hidden"], m["heads"], m["kv_heads"], m["head_dim"],
                                    m["ffn_hidden"], m["mlp"], m["vocab"], m["norm"], m["position"], m["head"],
                                    ", tied" if m["tied_embeddings"] else ""),
             "params    %s (llmem's count), trainable %s" % ("{:,}".format(plan["params"]["base"]),
                                                              "{:,}".format(plan["params"]["trainable"]))]
    if meta_count is not None:
        lines.append("          %s built on the meta device (%s)" % (
            "{:,}".format(meta_count), "equal" if meta_count == plan["params"]["base"] else "DIFFERENT"))
    elif meta_error:
        lines.append("          meta-device count unavailable: %s" % meta_error)
    p = plan["precision"]
    lines.append("batch     micro_batch %d x seq_len %d, grad_accum %d" % (
        plan["micro_batch"], plan["seq_len"], plan["grad_accum"]))
    lines.append("dtypes    %s %s, autocast %s, grads %s, optimizer states %s%s" % (
        "adapters" if p["base_dtype"] else "params", p["param_dtype"], p["autocast_dtype"] or "off", p["grad_dtype"], p["state_dtype"],
        ", frozen base %s" % p["base_dtype"] if p["base_dtype"] else ""))
    lines.append("applied:")
    lines.extend("  - " + a for a in plan["applied"])
    if plan["notes"]:
        lines.append("notes:")
        lines.extend("  - " + n for n in plan["notes"])
    if shapes:
        rows, n_layers = shapes
        lines.append("modules (layers.* = each of %d layers):" % n_layers)
        for name, shape, numel in rows:
            lines.append("  %-48s %-16s %s" % (name, "x".join(str(s) for s in shape), "{:,}".format(numel)))
    return "\n".join(lines)


def dry_run(plan):
    """The plan plus the meta-device build (shapes, count) when torch is importable."""
    out = dict(plan)
    shapes = meta = err = None
    if torch is None:
        err = "torch is not importable (%s)" % TORCH_IMPORT_ERROR
    else:
        try:
            if plan["impl"] == "hf":
                model = _build_hf(plan["hf"], "meta", torch.float32)
            else:
                model = ReferenceDecoder(plan["model"], device="meta", dtype=torch.float32)
            meta = sum(p.numel() for p in model.parameters())
            shapes = module_shapes(model)
        except Exception as e:  # pragma: no cover - depends on optional packages
            err = "%s: %s" % (type(e).__name__, e)
    out["meta_params"] = meta
    if shapes:
        out["modules"] = [{"name": n, "shape": s, "numel": c} for n, s, c in shapes[0]]
    return out, format_plan(plan, shapes, meta, err)


def _write(path, obj):
    text = json.dumps(obj, indent=1) + "\n"
    if path in (None, "-"):
        sys.stdout.write(text)
    else:
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


def _is_oom(e):
    cls = getattr(torch.cuda, "OutOfMemoryError", None) if torch is not None else None
    return (cls is not None and isinstance(e, cls)) or "out of memory" in str(e).lower()


def main(argv=None):
    ap = argparse.ArgumentParser(prog="llmem_probe.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("config", help="config-v1 JSON file, or - for stdin")
    ap.add_argument("-o", "--output", help="result JSON (default: stdout)")
    ap.add_argument("--steps", type=int, default=3, help="measured steps (default 3)")
    ap.add_argument("--warmup", type=int, default=2, help="warm-up steps (default 2)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan; build on the meta device only")
    ap.add_argument("--json", action="store_true", help="with --dry-run: print the plan as JSON")
    ap.add_argument("--impl", choices=("reference", "hf"), default="reference",
                    help="reference decoder (default) or a transformers model from_config")
    ap.add_argument("--device", default="cuda", help="torch device (default cuda)")
    ap.add_argument("--catalog", default=None, help="models.json for model.preset (default: the repo's)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--assume", action="append", default=[], choices=OPTIONAL_PACKAGES + ("all",),
                    help="with --dry-run: plan as if this optional package were installed (repeatable)")
    ap.add_argument("--local-capabilities", action="store_true",
                    help="with --dry-run: use this machine's torch features instead of assuming torch >= 2.5")
    args = ap.parse_args(argv)
    if not args.dry_run and (args.assume or args.local_capabilities or args.json):
        ap.error("--assume, --local-capabilities and --json go with --dry-run")

    try:
        text = sys.stdin.read() if args.config == "-" else open(args.config).read()
        config = json.loads(text)
    except (OSError, ValueError) as e:
        print("llmem probe: cannot read %s: %s" % (args.config, e), file=sys.stderr)
        return EXIT_ERROR
    try:
        caps = detect_capabilities()
        if args.dry_run:
            caps = dry_run_capabilities(caps, args.assume, args.local_capabilities)
        plan = translate(config, caps, catalog_path=args.catalog, impl=args.impl)
    except Refusal as r:
        print("llmem probe: refused: %s" % r, file=sys.stderr)
        if args.output:
            _write(args.output, {"ok": False, "config": config, "error": r.to_error()})
        return EXIT_REFUSED
    if args.dry_run:
        obj, text = dry_run(plan)
        if caps.get("assumed"):
            obj["assumed_capabilities"] = caps["assumed"]
            text += "\ncapabilities assumed for this dry run (not installed here): %s" % ", ".join(caps["assumed"])
        if args.json:
            print(json.dumps(obj, indent=1))
        else:
            print(text)
        if args.output:
            _write(args.output, obj)
        return EXIT_OK
    try:
        result = run_probe(config, args.steps, args.warmup, args.device, caps=caps, impl=args.impl,
                           seed=args.seed, plan=plan)
    except ProbeError as e:
        print("llmem probe: %s" % e, file=sys.stderr)
        if args.output:
            _write(args.output, {"ok": False, "config": config, "error": {"path": "", "message": str(e)}})
        return EXIT_ERROR
    except Exception as e:
        if torch is None or not _is_oom(e):
            raise
        err = {"path": "", "message": "out of memory: %s" % str(e).splitlines()[0][:300], "oom": True}
        try:
            err["peak_allocated_bytes_until_oom"] = int(torch.cuda.max_memory_allocated())
            err["peak_reserved_bytes_until_oom"] = int(torch.cuda.max_memory_reserved())
            err["total_memory_bytes"] = int(torch.cuda.get_device_properties(0).total_memory)
        except Exception:
            pass
        print("llmem probe: %s" % err["message"], file=sys.stderr)
        if args.output:
            _write(args.output, {"ok": False, "config": config, "error": err,
                                 "environment": collect_environment(args.device, caps)})
        return EXIT_OOM
    _write(args.output, result)
    if args.output:
        ms = result["measured"]
        print("llmem probe: peak allocated %.2f GiB, reserved %.2f GiB, device used %s, %.3f s/step -> %s" % (
            ms["peak_allocated_bytes"] / 2 ** 30, ms["peak_reserved_bytes"] / 2 ** 30,
            "n/a" if ms["device_used_bytes"] is None else "%.2f GiB" % (ms["device_used_bytes"] / 2 ** 30),
            ms["step_seconds"], args.output), file=sys.stderr)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
