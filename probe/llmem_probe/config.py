"""Config v1 for the probe: the field table, model presets, the effective config, value checks.

Every key's path, kind, default and allowed values come from fields.json, generated from
the core's field table (core/fields.def) by scripts/gen-probe-fields.mjs and committed, so
the probe runs on a machine with Python only; tests/js/probe-fields.test.ts fails when it
is stale. Only the standard library is needed here.
"""
from __future__ import annotations

import copy
import json
import math
import os

PROBE_VERSION = 1
EXIT_OK, EXIT_ERROR, EXIT_REFUSED, EXIT_OOM = 0, 1, 2, 3
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
PROBE_DIR = os.path.dirname(PACKAGE_DIR)
REPO_ROOT = os.path.dirname(PROBE_DIR)
DEFAULT_CATALOG = os.path.join(REPO_ROOT, "frontend", "config", "catalog", "models.json")
FIELDS_FILE = os.path.join(PACKAGE_DIR, "fields.json")


def load_fields(path=FIELDS_FILE):
    """The core's field table: [{path, kind, nullable, default, min, max, values}] in the core's order."""
    with open(path) as f:
        return json.load(f)["fields"]


def defaults_from_fields(fields):
    """The config every omitted key stands for, as `npx llmem defaults` prints it (text keys have none)."""
    root = {}
    for f in fields:
        parts = f["path"].split(".")
        node = root
        for p in parts[:-1]:
            if node.get(p) is None:
                node[p] = {}
            node = node[p]
        key = parts[-1]
        if f["kind"] == "group":
            if key not in node:
                node[key] = None if f["nullable"] and f["path"] != "model" else {}
        elif f["kind"] != "text":
            node[key] = copy.deepcopy(f["default"])
    return root


FIELDS = load_fields()
FIELD = {f["path"]: f for f in FIELDS}
# Config v1 defaults: what every omitted key stands for (tests/probe also checks them against the CLI).
DEFAULTS = defaults_from_fields(FIELDS)
ENUMS = {f["path"]: f["values"] for f in FIELDS if f["kind"] == "enum"}
SETS = {f["path"]: f["values"] for f in FIELDS if f["kind"] == "set"}
DTYPES = FIELD["training.dtype"]["values"]

# What llmem's generic training stack sets for keys left null (core/profiles.def,
# LLMEM_FW_GENERIC rows; tests/probe checks they agree): the probe runs plain PyTorch.
GENERIC_STACK = {"training.optimizer_impl": "foreach", "training.loss": "standard",
                 "parallel.ddp_find_unused_parameters": False}

# Keys a config may carry beyond the defaults table: the text keys (catalog references,
# labels, the training stack's version). Every hardware.* key describes the GPU for the
# estimator: the probe runs on the GPU it finds, so any hardware key is accepted.
EXTRA_KEYS = {f["path"] for f in FIELDS if f["kind"] == "text"}
LENIENT_SECTIONS = {"hardware"}
# Inputs of llmem's step-time model, not of the memory: never noted.
TIME_ONLY_KEYS = {"runtime.compute_efficiency"}

# The keys whose effect on the run the probe has been taught (translate.py applies,
# refuses or notes each). A key the core gains later is in fields.json but not here:
# the probe takes its default and refuses a config that sets it to anything else,
# until translate.py handles it and it is added here.
REVIEWED_KEYS = frozenset(
    ["version", "formula"]
    + ["model." + k for k in (
        "layers hidden heads kv_heads head_dim ffn_hidden mlp vocab vocab_multiple tied_embeddings head "
        "num_labels norm bias qkv_bias qk_norm norms_per_layer attn_sinks type_vocab embedding_norm "
        "final_norm lm_head_bias parallel_block mtp_layers position max_positions").split()]
    + ["model.moe." + k for k in (
        "experts top_k expert_ffn_hidden shared_experts shared_expert_ffn_hidden shared_expert_gate "
        "router_bias dense_layers layer_freq capacity_factor latent_size load_imbalance").split()]
    + ["model.mla." + k for k in "q_lora_rank kv_lora_rank qk_nope_head_dim qk_rope_head_dim v_head_dim".split()]
    + ["training." + k for k in (
        "micro_batch seq_len grad_accum global_batch dtype fp8_linear master_weights grad_dtype optimizer optimizer_dtype "
        "optimizer_impl optimizer_in_backward paged_optimizer recompute recompute_modules recompute_layers "
        "dropout attention loss loss_chunks repeat_kv activation_offload zero_grad_in_place").split()]
    + ["training.finetune." + k for k in (
        "method lora_rank lora_targets lora_dropout adapter_dtype base_dtype quant double_quant "
        "quant_keeps_input").split()]
    + ["parallel." + k for k in (
        "gpus gpus_per_node tp pp vpp cp ep etp sequence_parallel pp_schedule pp_first_stage_layers "
        "pp_last_stage_layers engine shard_with_cp zero_stage fsdp_strategy fsdp_shard_size "
        "reshard_after_forward shard_root_modules reduce_input_on_compute_stream pp_stage_buffers distributed_optimizer offload_optimizer offload_params "
        "fp8_all_gather zero_init grad_as_bucket_view ddp_find_unused_parameters ddp_bucket_cap_mib reduce_bucket_size allgather_bucket_size overlap_comm "
        "stage3_prefetch_bucket_size stage3_max_live_parameters stage3_param_persistence_threshold").split()]
    + ["runtime." + k for k in (
        "cuda_context_mib cublas_workspace_mib nccl_buffer_mib allocator_reserve expandable_segments "
        "max_split_size_mib gc_threshold empty_cache_after_init torch_compile compute_efficiency "
        "framework").split()])


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
    for section in ("model", "training", "parallel", "runtime"):
        if not isinstance(eff.get(section), dict):
            raise Refusal((section, "%s: must be an object, not %s" % (section, json.dumps(eff.get(section)))))
    for path, value in GENERIC_STACK.items():  # null: the training stack's value; the probe is plain PyTorch
        section, key = path.split(".")
        if eff[section][key] is None:
            eff[section][key] = value
    m = eff["model"]
    if m.get("kv_heads") is None:
        m["kv_heads"] = m["heads"]
    if m.get("head_dim") is None and isinstance(m.get("hidden"), int) and isinstance(m.get("heads"), int) \
            and m["heads"] > 0:
        m["head_dim"] = m["hidden"] // m["heads"]
    return eff


def lookup(eff, path):
    """(True, value) at `path`, or (False, None) inside a null or missing group."""
    cur = eff
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return False, None
        cur = cur[part]
    return True, cur


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _value_problem(f, v):
    """Why `v` is not a value of field `f` (the core's kinds and bounds), or None."""
    kind = f["kind"]
    if v is None:
        return None if f["nullable"] else "must not be null"
    if kind == "group":
        return None if isinstance(v, dict) else "must be an object, not %s" % json.dumps(v)
    if kind == "text":
        return None if isinstance(v, str) else "must be a string, not %s" % json.dumps(v)
    if kind == "bool":
        return None if isinstance(v, bool) else "must be true or false (got %s)" % json.dumps(v)
    if kind == "enum":
        return None if v in f["values"] else "%s is not one of %s%s" % (
            json.dumps(v), ", ".join(f["values"]), " (or null)" if f["nullable"] else "")
    if kind == "set":
        ok = isinstance(v, list) and all(x in f["values"] for x in v)
        return None if ok else "must be a list of %s" % ", ".join(f["values"])
    if kind == "list":  # per-layer kinds: a list of names, or its compact text "3*a,b"
        if isinstance(v, str):
            names = []
            for part in v.split(","):
                count, _, name = part.strip().rpartition("*")
                names += [name.strip()] * (int(count) if count.strip().isdigit() else (0 if count else 1))
            v = names
        ok = isinstance(v, list) and f["min"] <= len(v) <= f["max"] and all(x in f["values"] for x in v)
        return None if ok else "must be a list of %s to %s of %s" % (f["min"], f["max"], ", ".join(f["values"]))
    whole = kind == "int"
    if not _number(v) or not math.isfinite(v) or (whole and v != int(v)) or not f["min"] <= v <= f["max"]:
        return "must be %s from %s to %s (got %s)" % ("an integer" if whole else "a number",
                                                      json.dumps(f["min"]), json.dumps(f["max"]), json.dumps(v))
    return None


def check_values(eff):
    """Refuse every value the core would not take (kinds, enum values, bounds); hardware.* is not the probe's."""
    bad = []
    for f in FIELDS:
        path = f["path"]
        if path.split(".")[0] in LENIENT_SECTIONS:
            continue
        found, v = lookup(eff, path)
        if not found:
            continue
        why = _value_problem(f, v)
        if why:
            bad.append((path, "%s: %s" % (path, why)))
    if bad:
        raise Refusal(bad)


def unreviewed_settings(eff, reviewed=None):
    """Keys the probe has not been taught that the config sets to something other than their default."""
    reviewed = REVIEWED_KEYS if reviewed is None else reviewed
    out = []
    for f in FIELDS:
        path = f["path"]
        if f["kind"] in ("group", "text") or path in reviewed or path.split(".")[0] in LENIENT_SECTIONS:
            continue
        found, v = lookup(eff, path)
        if found and v != f["default"]:
            out.append((path, "%s: %s is not the default (%s) and the probe has not been taught this key "
                              "yet (probe/llmem_probe/config.py REVIEWED_KEYS)"
                        % (path, json.dumps(v), json.dumps(f["default"]))))
    return out
