"""Tests of probe/llmem_probe.py and probe/run_matrix.py (plain unittest, CPU only).

    python3 -m unittest discover -s tests/probe -v

The plan, the refusals, preset resolution and the matrix need only the standard
library. Building models (meta-device parameter counts, the CPU smoke runs of the
step loop with a fake CUDA-memory reader) needs torch; without it those tests
are skipped with the reason printed (Debian: apt-get install -y python3-torch).
"""
import copy
import gzip
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
import unittest.mock
from unittest import mock
from contextlib import redirect_stderr, redirect_stdout

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE_DIR = os.path.join(ROOT, "probe")
sys.path.insert(0, PROBE_DIR)
import llmem_probe as P  # noqa: E402
import run_matrix as RM  # noqa: E402

HAVE_TORCH = P.torch is not None
TORCH_REASON = "torch is not importable (%s); Debian: apt-get install -y python3-torch and run " \
               "/usr/bin/python3 -m unittest discover -s tests/probe -v" % P.TORCH_IMPORT_ERROR
if not HAVE_TORCH:
    print("llmem probe tests: %s -- the model-building tests are skipped" % TORCH_REASON, file=sys.stderr)
needs_torch = unittest.skipUnless(HAVE_TORCH, TORCH_REASON)
HAVE_SDPA = HAVE_TORCH and hasattr(P.F, "scaled_dot_product_attention")

CATALOG = P.load_catalog()
MEASUREMENTS = os.path.join(ROOT, "tests", "accuracy", "measurements.json")

# Capabilities of a current CUDA torch with every optional package, and without packages.
FULL = dict(P.MODERN_TORCH_CAPS, torch="2.11.0", cuda=True, transformers="5.0", peft="0.17",
            bitsandbytes="0.48", liger_kernel="0.6", pynvml="12")
BARE = dict(P.MODERN_TORCH_CAPS, torch="2.11.0", cuda=True, transformers=None, peft=None,
            bitsandbytes=None, liger_kernel=None, pynvml=None)
OLD = dict(BARE, torch="1.13.0", sdpa=False, enable_gqa=False, sac=False, adafactor=False, fused_adam=False,
           fused_sgd=False, compile=False, post_accumulate_grad_hook=False)

ONE_GPU = {"gpus": 1, "engine": "single"}
TINY = {"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "head_dim": 16, "ffn_hidden": 128,
        "vocab": 256, "max_positions": 128, "name": "tiny"}


def cfg(model=None, parallel=None, **training):
    c = {"version": 1, "model": copy.deepcopy(model if model is not None else {"preset": "llama-3-8b"}),
         "training": dict(training), "parallel": dict(ONE_GPU, **(parallel or {}))}
    return c


def preset(pid, **kw):
    return dict({"preset": pid}, **kw)


def refusal(config, caps=FULL, impl="reference"):
    try:
        P.translate(config, caps, catalog=CATALOG, impl=impl)
    except P.Refusal as r:
        return r
    raise AssertionError("not refused: %s" % json.dumps(config))


def catalog_entry(pid):
    return next(e for e in CATALOG if e["id"] == pid)


# ---------------------------------------------------------------------------

class PresetResolution(unittest.TestCase):
    def test_preset_fills_and_explicit_keys_override(self):
        eff = P.effective_config({"model": preset("llama-3.2-1b", layers=2, vocab=1000)}, CATALOG)
        m = eff["model"]
        self.assertEqual((m["layers"], m["vocab"]), (2, 1000))
        self.assertEqual((m["hidden"], m["heads"], m["kv_heads"], m["head_dim"]), (2048, 32, 8, 64))
        self.assertTrue(m["tied_embeddings"])
        self.assertEqual(m["name"], "Llama 3.2 1B")

    def test_catalog_extra_keys_come_through(self):
        m = P.effective_config({"model": preset("qwen2.5-0.5b")}, CATALOG)["model"]
        self.assertTrue(m["qkv_bias"])
        m = P.effective_config({"model": preset("gemma-2-2b")}, CATALOG)["model"]
        self.assertEqual(m["norms_per_layer"], 4)

    def test_defaults_fill_missing_keys(self):
        eff = P.effective_config({"model": {"hidden": 1024, "heads": 16}})
        self.assertEqual(eff["model"]["kv_heads"], 16)
        self.assertEqual(eff["model"]["head_dim"], 64)
        self.assertEqual(eff["training"]["seq_len"], 4096)
        self.assertEqual(eff["parallel"]["gpus"], 8)
        self.assertEqual(eff["parallel"]["engine"], "fsdp2")

    def test_null_overrides_preset(self):
        eff = P.effective_config({"model": preset("llama-3-8b", moe=None)}, CATALOG)
        self.assertIsNone(eff["model"]["moe"])

    def test_unknown_preset(self):
        with self.assertRaises(P.Refusal) as cm:
            P.effective_config({"model": preset("llama-9-9b")}, CATALOG)
        self.assertEqual(cm.exception.path, "model.preset")
        self.assertIn("unknown model \"llama-9-9b\"", str(cm.exception))
        self.assertIn("llama-3-8b", str(cm.exception))

    def test_catalog_path_override(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "models.json")
            with open(path, "w") as f:
                json.dump([{"id": "mini", "name": "Mini", "model": dict(TINY)}], f)
            eff = P.effective_config({"model": {"preset": "mini"}}, catalog_path=path)
        self.assertEqual(eff["model"]["hidden"], 64)

    def test_unknown_key_is_refused(self):
        r = refusal({"training": {"sequence_len": 10}, "parallel": ONE_GPU})
        self.assertEqual(r.path, "training.sequence_len")
        self.assertIn("unknown key", str(r))

    def test_flash_ce_is_refused(self):
        r = refusal(cfg(loss="flash_ce"))
        self.assertEqual(r.path, "training.loss")
        self.assertIn("flash-attn", str(r))

    def test_ms_swift_sp_losses_are_refused(self):
        for loss in ("bf16_ce", "chunked_inplace"):
            r = refusal(cfg(loss=loss))
            self.assertEqual(r.path, "training.loss")
            self.assertIn("ms-swift", str(r))

    def test_bad_enum_is_refused(self):
        r = refusal(cfg(optimizer="adamax"))
        self.assertEqual(r.path, "training.optimizer")
        self.assertIn("adamw", str(r))

    def test_defaults_table_matches_the_cli(self):
        node = shutil.which("node")
        cli = os.path.join(ROOT, "bin", "llmem.mjs")
        if not node or not os.path.exists(cli):
            self.skipTest("node or bin/llmem.mjs not available")
        proc = subprocess.run([node, cli, "defaults"], capture_output=True, text=True, cwd=ROOT, timeout=120)
        if proc.returncode != 0:
            self.skipTest("llmem defaults failed here: %s" % proc.stderr[-200:])
        cli = json.loads(proc.stdout)
        diffs = []

        def walk(a, b, path):
            for k in sorted(set(a) | set(b)):
                p = path + k
                if p.startswith("hardware."):
                    continue  # the probe accepts any hardware key (estimator inputs)
                if k not in b:
                    diffs.append("%s: new in llmem (%s)" % (p, json.dumps(a[k])))
                elif k not in a:
                    diffs.append("%s: no longer in llmem" % p)
                elif isinstance(a[k], dict) and isinstance(b[k], dict):
                    walk(a[k], b[k], p + ".")
                elif a[k] != b[k]:
                    diffs.append("%s: llmem %s, probe %s" % (p, json.dumps(a[k]), json.dumps(b[k])))

        walk(cli, P.DEFAULTS, "")
        self.assertEqual(diffs, [], "probe/llmem_probe/fields.json is stale: run `npm run build:core` "
                                    "(it runs scripts/gen-probe-fields.mjs)")

    def test_generic_stack_is_llmems(self):
        # the probe fills null keys with llmem's generic training-stack rows (core/profiles.def), the rows
        # of today's code (open at the end: the probe runs the machine's current PyTorch)
        rows = open(os.path.join(ROOT, "core", "profiles.def")).read()
        for path, value in P.GENERIC_STACK.items():
            key = path.split(".")[-1]
            enum = str(int(value)) if isinstance(value, bool) else \
                {"optimizer_impl": "LLMEM_OPT_IMPL_", "loss": "LLMEM_LOSS_"}[key] + value.upper()
            self.assertRegex(rows, r"\{LLMEM_FW_GENERIC, (0|YM\(\d+, \d+\)), 0, KEY\(%s\), %s," % (key, enum))

    def test_a_framework_stack_is_refused(self):
        c = cfg(preset("llama-3.2-1b"))
        c["runtime"] = {"framework": "torchtitan", "framework_version": "2025-06"}
        with self.assertRaises(P.Refusal) as r:
            P.translate(c, FULL, catalog=CATALOG)
        self.assertIn("runtime.framework", str(r.exception))

    def test_any_hardware_key_is_accepted(self):
        c = cfg(preset("llama-3.2-1b"))
        c["hardware"] = {"gpu": "h200-141gb", "memory_gib": 141, "hbm_gb_per_s": 4800}
        P.translate(c, FULL, catalog=CATALOG)


class FieldTable(unittest.TestCase):
    """The probe's keys, defaults and allowed values come from probe/llmem_probe/fields.json (the core's
    field table, generated by scripts/gen-probe-fields.mjs; tests/js/probe-fields.test.ts keeps it fresh)."""

    def test_tables_come_from_the_field_table(self):
        with open(os.path.join(PROBE_DIR, "llmem_probe", "fields.json")) as f:
            fields = json.load(f)["fields"]
        self.assertEqual(P.FIELDS, fields)
        self.assertEqual(P.ENUMS["training.optimizer"], P.FIELD["training.optimizer"]["values"])
        self.assertEqual(set(P.ENUMS), {f["path"] for f in fields if f["kind"] == "enum"})
        self.assertEqual(set(P.SETS), {f["path"] for f in fields if f["kind"] == "set"})
        self.assertEqual(P.EXTRA_KEYS, {"model.preset", "model.name", "runtime.framework_version", "hardware.gpu"})
        self.assertEqual(P.DEFAULTS["training"]["finetune"]["lora_targets"], ["q", "k", "v", "o", "gate", "up", "down"])
        self.assertIsNone(P.DEFAULTS["training"]["optimizer_impl"])  # null in the table; GENERIC_STACK fills it
        self.assertEqual(P.effective_config({})["training"]["optimizer_impl"], "foreach")

    def test_defaults_from_fields(self):
        fields = [{"path": "a", "kind": "group", "nullable": False},
                  {"path": "a.n", "kind": "int", "nullable": True, "default": None, "min": 0, "max": 9},
                  {"path": "a.t", "kind": "text", "nullable": True},
                  {"path": "g", "kind": "group", "nullable": True},
                  {"path": "h", "kind": "group", "nullable": True},
                  {"path": "h.b", "kind": "bool", "nullable": False, "default": True}]
        self.assertEqual(P.config.defaults_from_fields(fields), {"a": {"n": None}, "g": None, "h": {"b": True}})

    def test_reviewed_keys_are_keys_of_the_core(self):
        leaves = {f["path"] for f in P.FIELDS if f["kind"] not in ("group", "text")}
        self.assertEqual(sorted(P.REVIEWED_KEYS - leaves), [])

    def test_a_key_the_probe_was_not_taught_is_refused_off_its_default(self):
        reviewed = P.REVIEWED_KEYS - {"parallel.gpus_per_node", "model.moe.top_k"}
        eff = P.effective_config(cfg(preset("llama-3.2-1b")), CATALOG)
        self.assertEqual(P.unreviewed_settings(eff, reviewed), [])
        c = cfg(preset("llama-3.2-1b"), parallel={"gpus_per_node": 4})
        got = P.unreviewed_settings(P.effective_config(c, CATALOG), reviewed)
        self.assertEqual([p for p, _ in got], ["parallel.gpus_per_node"])
        self.assertIn("has not been taught", got[0][1])
        self.assertEqual(P.unreviewed_settings(P.effective_config(c, CATALOG)), [])  # a reviewed key
        none = P.effective_config(cfg(preset("llama-3.2-1b", moe=None)), CATALOG)
        self.assertEqual(P.unreviewed_settings(none, reviewed), [])  # inside a null group: nothing set
        with unittest.mock.patch.object(P.config, "REVIEWED_KEYS", reviewed):
            r = refusal(c)
        self.assertEqual(r.path, "parallel.gpus_per_node")

    def test_values_are_checked_against_the_field_table(self):
        for c, path, text in (
                (cfg(parallel={"tp": 0}), "parallel.tp", "from 1 to"),
                (cfg(preset("llama-3.2-1b", layers=2.5)), "model.layers", "an integer"),
                (cfg(dropout=1.5), "training.dropout", "a number from 0 to 0.999"),
                (cfg(preset("llama-3.2-1b", bias="yes")), "model.bias", "true or false"),
                (cfg(loss="cross_entropy"), "training.loss", "(or null)"),
                (cfg(recompute_modules=["attn"]), "training.recompute_modules", "a list of core_attn"),
                (cfg(preset("llama-3.2-1b", name=7)), "model.name", "a string"),
                (cfg(preset("llama-3.2-1b", heads=None)), "model.heads", "must not be null")):
            with self.subTest(path=path):
                r = refusal(c)
                self.assertEqual(r.path, path, str(r))
                self.assertIn(text, str(r))
        P.translate(cfg(preset("llama-3.2-1b"), loss=None, optimizer_impl=None), FULL, catalog=CATALOG)

    def test_run_as_a_module_from_the_probe_folder(self):
        with tempfile.TemporaryDirectory() as d:
            c = os.path.join(d, "c.json")
            with open(c, "w") as f:
                json.dump(cfg(preset("llama-3.2-1b")), f)
            proc = subprocess.run([sys.executable, "-m", "llmem_probe", c, "--dry-run", "--json"], cwd=PROBE_DIR,
                                  capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(json.loads(proc.stdout)["params"]["base"], 1235814400)


# ---------------------------------------------------------------------------

class Translation(unittest.TestCase):
    def plan(self, config, caps=FULL, impl="reference"):
        return P.translate(config, caps, catalog=CATALOG, impl=impl)

    def test_allocator_settings_reach_the_run(self):
        c = cfg(dtype="bf16")
        c["runtime"] = {"max_split_size_mib": 128, "gc_threshold": 0.6, "expandable_segments": True,
                        "empty_cache_after_init": True}
        p = self.plan(c)
        self.assertEqual(p["alloc_conf"], "expandable_segments:True,max_split_size_mb:128,"
                                          "garbage_collection_threshold:0.6")
        self.assertTrue(p["empty_cache_after_init"])
        self.assertEqual(self.plan(cfg(dtype="bf16"))["alloc_conf"], "")

    def test_mixed_precision(self):
        p = self.plan(cfg(dtype="bf16", master_weights=True))
        self.assertEqual(p["precision"], {"param_dtype": "fp32", "autocast_dtype": "bf16", "grad_dtype": "fp32",
                                          "state_dtype": "fp32", "base_dtype": None, "grad_scaler": False})
        self.assertEqual(p["optimizer"]["class"], "torch.optim.AdamW")
        self.assertEqual(p["optimizer"]["kwargs"], {"foreach": True})  # the generic stack: torch's default
        self.assertEqual(p["engine"], "single")
        self.assertEqual(p["recompute"]["layers"], [])
        self.assertEqual(p["params"]["total"], 8030261248)
        self.assertTrue(any("torch.autocast(bf16)" in a for a in p["applied"]))

    def test_fp16_mixed_uses_a_grad_scaler(self):
        p = self.plan(cfg(dtype="fp16"))
        self.assertTrue(p["precision"]["grad_scaler"])

    def test_pure_bf16(self):
        p = self.plan(cfg(dtype="bf16", master_weights=False, optimizer_dtype="bf16", grad_dtype="bf16",
                          optimizer="sgd_momentum", optimizer_impl="foreach"))
        self.assertEqual(p["precision"]["param_dtype"], "bf16")
        self.assertIsNone(p["precision"]["autocast_dtype"])
        self.assertEqual(p["optimizer"]["class"], "torch.optim.SGD")
        self.assertEqual(p["optimizer"]["kwargs"], {"momentum": 0.9, "foreach": True})
        self.assertEqual(p["notes"], [n for n in p["notes"] if "grad_dtype" not in n])

    def test_pure_bf16_grad_dtype_note(self):
        p = self.plan(cfg(dtype="bf16", master_weights=False, optimizer_dtype="bf16"))
        self.assertTrue(any("grad_dtype fp32" in n for n in p["notes"]))

    def test_fp32(self):
        p = self.plan(cfg(dtype="fp32", optimizer="adafactor", optimizer_impl="for_loop"))
        self.assertEqual((p["precision"]["param_dtype"], p["precision"]["autocast_dtype"]), ("fp32", None))
        self.assertEqual(p["optimizer"]["class"], "torch.optim.Adafactor")
        self.assertEqual(p["optimizer"]["kwargs"], {"foreach": False})

    def test_recompute_full_and_first_layers(self):
        self.assertEqual(self.plan(cfg(recompute="full"))["recompute"]["layers"], list(range(32)))
        p = self.plan(cfg(recompute="full", recompute_layers=3))
        self.assertEqual(p["recompute"]["layers"], [0, 1, 2])
        self.assertTrue(any("first 3 of 32 layers" in a for a in p["applied"]))

    def test_recompute_selective_and_per_op(self):
        p = self.plan(cfg(recompute="selective", recompute_modules=["core_attn", "mlp", "moe"]))
        self.assertEqual(p["recompute"]["modules"], ["core_attn", "mlp"])
        self.assertTrue(any("moe" in n for n in p["notes"]))
        p = self.plan(cfg(recompute="per_op"))
        self.assertEqual(p["recompute"]["mode"], "per_op")
        self.assertEqual(len(p["recompute"]["layers"]), 32)

    def test_attention_and_loss(self):
        p = self.plan(cfg(attention="eager", loss="chunked", loss_chunks=4))
        self.assertEqual(p["attention"], "eager")
        self.assertEqual(p["loss"], {"kind": "chunked", "chunks": 4})
        p = self.plan(cfg(attention="flash"))
        self.assertTrue(any("enable_gqa" in a for a in p["applied"]))
        p = self.plan(cfg(attention="flash"), caps=dict(FULL, enable_gqa=False))
        self.assertTrue(any("KV heads repeated" in a for a in p["applied"]))
        for kind in ("compiled", "fused", "hf_upcast", "standard"):
            self.assertEqual(self.plan(cfg(loss=kind))["loss"]["kind"], kind)

    def test_lora(self):
        ft = {"method": "lora", "lora_rank": 16}
        p = self.plan(cfg(finetune=ft))
        self.assertEqual(p["finetune"]["targets"], ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                                                    "up_proj", "down_proj"])
        self.assertEqual(p["params"]["trainable"], 41943040)  # PEFT: Llama-3-8B, r=16, all linears
        self.assertEqual(p["params"]["total"], 8030261248 + 41943040)
        self.assertEqual(p["precision"]["base_dtype"], "bf16")
        self.assertEqual(p["precision"]["param_dtype"], "fp32")
        self.assertEqual(p["precision"]["autocast_dtype"], "bf16")
        p = self.plan(cfg(finetune=dict(ft, lora_targets=["q", "v"], lora_rank=8)))
        self.assertEqual(p["params"]["trainable"], 32 * 8 * ((4096 + 4096) + (4096 + 1024)))

    def test_qlora(self):
        p = self.plan(cfg(finetune={"method": "qlora", "quant": "nf4", "double_quant": True}))
        self.assertEqual(p["finetune"]["quant"], "nf4")
        self.assertTrue(any("bitsandbytes nf4 + double quant" in a for a in p["applied"]))

    def test_bitsandbytes_optimizers(self):
        self.assertEqual(self.plan(cfg(optimizer="adamw_8bit"))["optimizer"]["class"],
                         "bitsandbytes.optim.AdamW8bit")
        self.assertEqual(self.plan(cfg(optimizer="adamw_8bit", paged_optimizer=True))["optimizer"]["class"],
                         "bitsandbytes.optim.PagedAdamW8bit")
        self.assertEqual(self.plan(cfg(paged_optimizer=True))["optimizer"]["class"], "bitsandbytes.optim.PagedAdamW")

    def test_optimizer_in_backward(self):
        p = self.plan(cfg(optimizer_in_backward=True))
        self.assertTrue(p["optimizer"]["in_backward"])

    def test_zero_grad_in_place(self):
        self.assertTrue(self.plan(cfg())["optimizer"]["set_to_none"])
        p = self.plan(cfg(zero_grad_in_place=True))
        self.assertFalse(p["optimizer"]["set_to_none"])
        self.assertTrue(any("zero_grad(set_to_none=False)" in a for a in p["applied"]))

    def test_ddp_one_rank(self):
        p = self.plan(cfg(parallel={"engine": "ddp"}))
        self.assertEqual(p["engine"], "ddp")
        self.assertEqual(p["ddp"], {"gradient_as_bucket_view": False, "find_unused_parameters": False,
                                    "bucket_cap_mb": None})
        p = self.plan(cfg(parallel={"engine": "ddp", "ddp_find_unused_parameters": True, "ddp_bucket_cap_mib": 50}))
        self.assertEqual(p["ddp"], {"gradient_as_bucket_view": False, "find_unused_parameters": True,
                                    "bucket_cap_mb": 50})
        self.assertTrue(any("find_unused_parameters=True, bucket_cap_mb=50" in a for a in p["applied"]))

    def test_classification_and_plain_models(self):
        p = self.plan(cfg(preset("bert-large"), attention="eager", seq_len=512))
        self.assertEqual(p["loss"]["kind"], "classification")
        self.assertEqual(p["params"]["total"], catalog_entry("bert-large")["params_total"])
        p = self.plan(cfg(preset("gpt2"), attention="eager", seq_len=1024))
        self.assertEqual((p["model"]["mlp"], p["model"]["position"], p["model"]["norm"]), ("plain", "learned", "layernorm"))

    def test_estimator_inputs_become_notes(self):
        c = cfg()
        c["runtime"] = {"cuda_context_mib": 500, "expandable_segments": True}
        c["hardware"] = {"gpu": "h200-141gb"}
        c["formula"] = "megatron"
        p = self.plan(c)
        self.assertTrue(p["expandable_segments"])
        self.assertTrue(any("cuda_context_mib" in n for n in p["notes"]))
        self.assertTrue(any("formula megatron" in n for n in p["notes"]))

    def test_hf_mapping(self):
        def mt(pid):
            m = P.effective_config({"model": preset(pid)}, CATALOG)["model"]
            mapping, why = P.hf_model_mapping(m, 0.0)
            return mapping[0] if mapping else None
        self.assertEqual(mt("llama-3-8b"), "llama")
        self.assertEqual(mt("qwen2.5-0.5b"), "qwen2")
        self.assertEqual(mt("qwen3-8b"), "qwen3")
        self.assertEqual(mt("gpt2"), "gpt2")
        self.assertIsNone(mt("gemma-2-2b"))
        p = self.plan(cfg(preset("llama-3.2-1b")), impl="hf")
        self.assertEqual(p["hf"]["model_type"], "llama")
        self.assertEqual(p["hf"]["config"]["num_key_value_heads"], 8)
        self.assertTrue(p["hf"]["config"]["tie_word_embeddings"])
        self.assertEqual(p["hf"]["attn_implementation"], "sdpa")

    def test_plan_is_json(self):
        json.dumps(self.plan(cfg(recompute="full", finetune={"method": "lora"})))


# ---------------------------------------------------------------------------

def stub_python(stub):
    """An "interpreter" for run_matrix --python that runs `stub` in place of probe/llmem_probe.py."""
    path = stub + ".sh"
    with open(path, "w") as f:
        f.write('#!/bin/sh\nshift\nexec "%s" "%s" x "$@"\n' % (sys.executable, stub))
    os.chmod(path, 0o755)
    return path


def fake(parallel, model=None, **training):
    """A multi-rank FSDP2 config (rank 0 through the fake process group)."""
    t = {"dtype": "bf16", "master_weights": True, "grad_dtype": "fp32", "optimizer_dtype": "fp32"}
    t.update(training)
    return cfg(model or preset("llama-3.1-8b"), dict({"engine": "fsdp2", "gpus_per_node": 8}, **parallel), **t)


class Layouts(unittest.TestCase):
    def plan(self, config):
        return P.translate(config, FULL, catalog=CATALOG)

    def test_fsdp2_mixed_precision(self):
        plan = self.plan(fake({"gpus": 64}))
        lay = plan["layout"]
        self.assertEqual((lay["world"], lay["dp_shard"], lay["dp_replicate"], lay["tp"], lay["sp"]), (64, 64, 1, 1, False))
        self.assertEqual(lay["mp"], {"param_dtype": "bf16", "reduce_dtype": "fp32"})
        self.assertIsNone(plan["precision"]["autocast_dtype"])  # FSDP2 casts; no autocast
        self.assertEqual(plan["precision"]["param_dtype"], "fp32")
        self.assertTrue(lay["reshard_after_forward"])
        self.assertIn("step time is compute-only", plan["applied"][0])
        self.assertEqual(self.plan(fake({"gpus": 8}, grad_dtype="bf16"))["layout"]["mp"]["reduce_dtype"], "bf16")

    def test_pure_bf16_has_no_mixed_precision_policy(self):
        plan = self.plan(fake({"gpus": 8}, master_weights=False, grad_dtype="bf16", optimizer_dtype="bf16"))
        self.assertNotIn("mp", plan["layout"])
        self.assertEqual(plan["precision"]["param_dtype"], "bf16")

    def test_hsdp_mesh(self):
        lay = self.plan(fake({"gpus": 32, "fsdp_strategy": "hybrid_shard", "fsdp_shard_size": 8}))["layout"]
        self.assertEqual((lay["dp_replicate"], lay["dp_shard"]), (4, 8))
        # the core's default shard group: one node (gpus_per_node), as core/plan.c derive_sharding
        lay = self.plan(fake({"gpus": 32, "fsdp_strategy": "hybrid_shard"}))["layout"]
        self.assertEqual((lay["dp_replicate"], lay["dp_shard"]), (4, 8))
        self.assertIn("parallel.fsdp_shard_size", [p for p, _ in refusal(
            fake({"gpus": 32, "fsdp_strategy": "hybrid_shard", "fsdp_shard_size": 12})).items])

    def test_tp_with_and_without_sequence_parallel(self):
        plan = self.plan(fake({"gpus": 32, "tp": 4}, loss="loss_parallel"))
        lay = plan["layout"]
        self.assertEqual((lay["dp_shard"], lay["tp"], lay["sp"], lay["loss_parallel"]), (8, 4, True, True))
        self.assertTrue(any("loss_parallel() over the vocabulary-sharded logits" in a for a in plan["applied"]))
        lay = self.plan(fake({"gpus": 2, "tp": 2, "sequence_parallel": False}))["layout"]
        self.assertEqual((lay["dp_shard"], lay["sp"], lay["loss_parallel"]), (1, False, False))

    def test_tp_refusals(self):
        r = refusal(fake({"gpus": 2, "tp": 2}, preset("llama-3.2-1b")))
        self.assertIn("model.tied_embeddings", [p for p, _ in r.items])
        r = refusal(fake({"gpus": 16, "tp": 16}))
        self.assertIn("tp=16 must divide heads (32) and kv_heads (8)", str(r))
        self.assertIn("training.attention", [p for p, _ in refusal(fake({"gpus": 2, "tp": 2}, attention="eager")).items])
        self.assertIn("training.loss", [p for p, _ in refusal(fake({"gpus": 2, "tp": 2}, loss="chunked")).items])

    def test_what_the_sharded_path_does_not_combine(self):
        self.assertIn("training.finetune.method", [p for p, _ in refusal(fake({"gpus": 8}, finetune={"method": "lora"})).items])
        self.assertIn("impl", [p for p, _ in refusal(fake({"gpus": 8}), impl="hf").items])
        self.assertIn("parallel.fsdp_strategy", [p for p, _ in refusal(fake({"gpus": 8, "fsdp_strategy": "shard_grad_op"})).items])
        self.assertIn("training.dtype", [p for p, _ in refusal(fake({"gpus": 8}, dtype="fp16")).items])


# ---------------------------------------------------------------------------

class Refusals(unittest.TestCase):
    def assertRefused(self, config, path, *words, caps=FULL, impl="reference"):
        r = refusal(config, caps, impl)
        paths = [p for p, _ in r.items]
        self.assertIn(path, paths, str(r))
        msg = dict(r.items)[path] if paths.count(path) == 1 else str(r)
        self.assertTrue(msg.startswith(path + ": "), msg)
        for w in words:
            self.assertIn(w, msg)
        return r

    def test_more_than_one_gpu_needs_the_fake_process_group(self):
        no_fake = dict(FULL, fake_pg=False)
        self.assertRefused(cfg(parallel={"gpus": 8, "engine": "fsdp2"}, master_weights=True), "parallel.gpus",
                           "8 ranks", "fake process group", caps=no_fake)
        self.assertRefused(cfg(parallel={"gpus": 8, "engine": "fsdp2"}, master_weights=True), "parallel.engine",
                           "fully_shard", caps=dict(FULL, fully_shard=False))

    def test_model_parallelism(self):
        for k in ("pp", "cp", "ep", "vpp", "etp"):
            self.assertRefused(cfg(parallel={k: 2, "gpus": 2, "engine": "fsdp2"}), "parallel." + k, "not run by the probe")
        self.assertRefused(cfg(parallel={"tp": 2}), "parallel.tp", "multiple of it")
        self.assertRefused(cfg(parallel={"tp": 3, "gpus": 8, "engine": "fsdp2"}), "parallel.tp", "does not divide")

    def test_engines(self):
        for engine in ("deepspeed", "megatron", "megatron_deepspeed", "fsdp1", "ddp", "single"):
            self.assertRefused(cfg(parallel={"engine": engine, "gpus": 4}), "parallel.engine",
                               engine, "over 4 ranks", "FSDP2")
        for engine in ("deepspeed", "megatron", "megatron_deepspeed", "fsdp1", "fsdp2"):
            self.assertRefused(cfg(parallel={"engine": engine}), "parallel.engine", engine)

    def test_default_config_runs_as_a_fake_process_group(self):
        plan = P.translate({"model": preset("llama-3-8b")}, FULL, catalog=CATALOG)
        lay = plan["layout"]
        self.assertEqual((lay["world"], lay["dp_shard"], lay["dp_replicate"], lay["tp"]), (8, 8, 1, 1))
        self.assertTrue(any(a.startswith("fake process group: rank 0 of 8 ranks") for a in plan["applied"]))

    def test_default_config_lists_every_reason(self):
        r = refusal({"model": preset("llama-3-8b")}, dict(FULL, fake_pg=False, fully_shard=False))
        paths = [p for p, _ in r.items]
        self.assertEqual(paths[:2], ["parallel.gpus", "parallel.engine"])
        err = r.to_error()
        self.assertEqual(err["path"], "parallel.gpus")
        self.assertEqual(len(err["refusals"]), len(paths))

    def test_sharding_and_offload(self):
        self.assertRefused(cfg(parallel={"zero_stage": 2}), "parallel.zero_stage", "DeepSpeed")
        self.assertRefused(cfg(parallel={"distributed_optimizer": True}), "parallel.distributed_optimizer")
        self.assertRefused(cfg(parallel={"offload_optimizer": "cpu"}), "parallel.offload_optimizer", "offload")
        self.assertRefused(cfg(parallel={"offload_params": "nvme"}), "parallel.offload_params", "offload")
        self.assertRefused(cfg(parallel={"fp8_all_gather": True}), "parallel.fp8_all_gather")
        self.assertRefused(cfg(activation_offload=True), "training.activation_offload", "activation offload")

    def test_architectures(self):
        self.assertRefused(cfg(preset("mixtral-8x7b")), "model.moe", "mixture-of-experts", "8 experts")
        self.assertRefused(cfg(preset("deepseek-v3")), "model.mla", "multi-latent")
        self.assertRefused(cfg(preset("llama-3-8b", mtp_layers=1)), "model.mtp_layers")
        self.assertRefused(cfg(preset("llama-3-8b", vocab=128257, vocab_multiple=64)), "model.vocab_multiple")
        self.assertRefused(cfg(preset("llama-3-8b", norms_per_layer=3)), "model.norms_per_layer")
        self.assertRefused(cfg(preset("gpt2"), seq_len=4096, attention="eager"), "training.seq_len", "1024")
        self.assertRefused(cfg(preset("gpt-oss-20b", moe=None)), "model.attn_sinks", "eager")

    def test_fp8(self):
        self.assertRefused(cfg(dtype="fp8"), "training.dtype", "fp8")
        self.assertRefused(cfg(fp8_linear=True), "training.fp8_linear", "Transformer Engine")

    def test_finetune_packages(self):
        self.assertRefused(cfg(finetune={"method": "lora"}), "training.finetune.method", "peft",
                           caps=BARE)
        r = self.assertRefused(cfg(finetune={"method": "qlora"}), "training.finetune.method",
                               caps=dict(BARE, peft="0.17"))
        self.assertIn("qlora needs bitsandbytes", str(r))
        self.assertRefused(cfg(finetune={"method": "qlora"}), "training.finetune.method", "qlora", "--impl hf",
                           impl="hf")
        self.assertRefused(cfg(finetune={"method": "lora", "adapter_dtype": "bf16"}),
                           "training.master_weights", "master copy")

    def test_optimizers(self):
        self.assertRefused(cfg(optimizer="adamw_8bit"), "training.optimizer", "bitsandbytes", caps=BARE)
        self.assertRefused(cfg(optimizer="lion"), "training.optimizer", "bitsandbytes", caps=BARE)
        self.assertRefused(cfg(paged_optimizer=True), "training.paged_optimizer", "bitsandbytes", caps=BARE)
        self.assertRefused(cfg(paged_optimizer=True, optimizer="sgd"), "training.paged_optimizer", "no paged")
        self.assertRefused(cfg(optimizer="muon"), "training.optimizer", "muon")
        self.assertRefused(cfg(optimizer="adafactor", optimizer_impl="foreach"), "training.optimizer",
                           "torch >= 2.5", caps=OLD)
        self.assertRefused(cfg(optimizer="adafactor", optimizer_impl="fused"), "training.optimizer_impl", "no fused")
        self.assertRefused(cfg(optimizer_impl="fused"), "training.optimizer_impl", "torch >= 2.0", caps=OLD)
        self.assertRefused(cfg(optimizer="sgd", optimizer_impl="fused"), "training.optimizer_impl", "fused SGD",
                           caps=dict(FULL, fused_sgd=False))

    def test_state_and_gradient_dtypes(self):
        self.assertRefused(cfg(master_weights=False), "training.optimizer_dtype",
                           "fp32 states with bf16 parameters", "set optimizer_dtype to bf16")
        self.assertRefused(cfg(grad_dtype="bf16"), "training.grad_dtype", "autocast keeps")
        self.assertRefused(cfg(finetune={"method": "lora"}, optimizer_dtype="bf16"), "training.optimizer_dtype",
                           "adapters")

    def test_optimizer_in_backward(self):
        self.assertRefused(cfg(optimizer_in_backward=True, grad_accum=2), "training.optimizer_in_backward",
                           "grad_accum=2")
        self.assertRefused(cfg(optimizer_in_backward=True), "training.optimizer_in_backward", "torch >= 2.1",
                           caps=dict(FULL, post_accumulate_grad_hook=False))
        self.assertRefused(cfg(optimizer_in_backward=True, zero_grad_in_place=True), "training.zero_grad_in_place",
                           "frees each gradient")

    def test_torch_features(self):
        self.assertRefused(cfg(optimizer_impl="foreach"), "training.attention",
                           "scaled_dot_product_attention", caps=OLD)
        self.assertRefused(cfg(recompute="per_op", optimizer_impl="foreach"), "training.recompute",
                           "create_selective_checkpoint_contexts", caps=OLD)
        self.assertRefused(cfg(loss="compiled", optimizer_impl="foreach", attention="eager"), "training.loss",
                           "torch.compile", caps=OLD)
        self.assertRefused(cfg(loss="fused"), "training.loss", "liger_kernel", caps=BARE)

    def test_recompute_policies(self):
        self.assertRefused(cfg(recompute="selective", recompute_modules=["layernorm"]),
                           "training.recompute_modules", "layernorm")
        self.assertRefused(cfg(recompute_layers=4), "training.recompute_layers", "full")
        self.assertRefused(cfg(recompute="full", recompute_layers=40), "training.recompute_layers", "0..32")

    def test_runtime_compile(self):
        c = cfg()
        c["runtime"] = {"torch_compile": True}
        self.assertRefused(c, "runtime.torch_compile", "torch.compile")

    def test_hf_impl(self):
        self.assertRefused(cfg(), "impl", "transformers", caps=BARE, impl="hf")
        self.assertRefused(cfg(preset("gemma-2-2b")), "impl", "reference decoder", impl="hf")
        self.assertRefused(cfg(recompute="full", recompute_layers=2), "training.recompute", impl="hf")

    def test_cli_exit_status_and_error_json(self):
        with tempfile.TemporaryDirectory() as d:
            c = os.path.join(d, "c.json")
            out = os.path.join(d, "r.json")
            with open(c, "w") as f:
                json.dump({"model": preset("mixtral-8x7b")}, f)
            proc = subprocess.run([sys.executable, os.path.join(PROBE_DIR, "llmem_probe.py"), c, "-o", out],
                                  capture_output=True, text=True, timeout=300)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn("refused", proc.stderr)
            with open(out) as f:
                res = json.load(f)
        self.assertFalse(res["ok"])
        self.assertEqual(res["config"], {"model": preset("mixtral-8x7b")})
        paths = [r["path"] for r in res["error"]["refusals"]]
        self.assertIn("model.moe", paths)
        self.assertIn("parallel.gpus", paths)


# ---------------------------------------------------------------------------

class ParameterCounts(unittest.TestCase):
    def test_analytic_known_counts(self):
        for pid, want in (("llama-3-8b", 8030261248), ("llama-2-7b", 6738415616)):
            m = P.effective_config({"model": preset(pid)}, CATALOG)["model"]
            self.assertEqual(P.count_params_analytic(m), want)

    @needs_torch
    def test_meta_known_counts(self):
        self.assertEqual(P.count_params_meta(catalog_entry("llama-3-8b")["model"]), 8030261248)
        self.assertEqual(P.count_params_meta(catalog_entry("llama-2-7b")["model"]), 6738415616)

    @needs_torch
    def test_meta_device_needs_no_memory(self):
        m = P.effective_config({"model": preset("llama-3.1-405b")}, CATALOG)["model"]
        model = P.ReferenceDecoder(m, device="meta", dtype=P.torch.float32)
        self.assertTrue(all(p.device.type == "meta" for p in model.parameters()))
        self.assertEqual(sum(p.numel() for p in model.parameters()), 405853388800)

    @needs_torch
    def test_every_dense_catalog_model(self):
        checked = 0
        for e in CATALOG:
            m = e["model"]
            if m.get("moe") or m.get("mla"):
                continue
            # the reference decoder has attention layers only (windows change no parameter), no vision tower
            mixers = m.get("layer_types") or []
            if m.get("vision") or m.get("mlp_types") or m.get("attn_output_gate") or m.get("encoder_layers") or any(
                    k not in ("full", "sliding", "chunked") for k in mixers):
                continue
            with self.subTest(model=e["id"]):
                self.assertEqual(P.count_params_meta(m), e["params_total"])
                checked += 1
        self.assertGreaterEqual(checked, 30)

    @needs_torch
    def test_tied_embeddings_counted_once(self):
        m = catalog_entry("llama-3.2-1b")["model"]
        self.assertTrue(m["tied_embeddings"])
        self.assertEqual(P.count_params_meta(m), 1235814400)
        untied = dict(m, tied_embeddings=False)
        self.assertEqual(P.count_params_meta(untied), 1235814400 + 128256 * 2048)


class DryRun(unittest.TestCase):
    def run_cli(self, *args):
        with tempfile.TemporaryDirectory() as d:
            c = os.path.join(d, "c.json")
            with open(c, "w") as f:
                json.dump(cfg(preset("llama-3-8b")), f)
            return subprocess.run([sys.executable, os.path.join(PROBE_DIR, "llmem_probe.py"), c, "--dry-run"]
                                  + list(args), capture_output=True, text=True, timeout=300)

    def test_text(self):
        proc = self.run_cli()
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("8,030,261,248 (llmem's count)", proc.stdout)
        self.assertIn("torch.autocast(bf16)", proc.stdout)
        if HAVE_TORCH:
            self.assertIn("8,030,261,248 built on the meta device (equal)", proc.stdout)
            self.assertIn("layers.*.attn.k_proj.weight", proc.stdout)

    def test_json(self):
        proc = self.run_cli("--json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        plan = json.loads(proc.stdout)
        self.assertEqual(plan["params"]["base"], 8030261248)
        if HAVE_TORCH:
            self.assertEqual(plan["meta_params"], 8030261248)
            self.assertEqual(sum(m["numel"] for m in plan["modules"] if ".*." not in m["name"])
                             + 32 * sum(m["numel"] for m in plan["modules"] if ".*." in m["name"]), 8030261248)


# ---------------------------------------------------------------------------

class FakeMemory:
    """Stands in for torch.cuda's counters: every read of a peak returns a new, larger number."""

    def __init__(self):
        self.resets = 0
        self.syncs = 0
        self.reads = 0
        self.n = 0

    def synchronize(self):
        self.syncs += 1

    def reset_peak(self):
        self.resets += 1

    def allocated(self):
        return 1000

    def reserved(self):
        return 4000

    def peak_allocated(self):
        self.reads += 1
        self.n += 1
        return 2000 + self.n

    def peak_reserved(self):
        return 5000 + self.n

    def device_used(self):
        return 9000, "fake"

    def driver(self):
        return "fake-driver"


def tiny_cfg(model=None, parallel=None, **training):
    t = {"micro_batch": 2, "seq_len": 16, "dtype": "fp32", "optimizer_impl": "foreach", "attention": "eager"}
    t.update(training)
    return cfg(dict(TINY, **(model or {})), parallel, **t)


@needs_torch
class KernelTime(unittest.TestCase):
    """--profile-kernels: GPU time by kernel class, the step-time model's operation classes."""

    def test_kernel_names_fall_into_the_model_classes(self):
        from llmem_probe.kernels import kernel_class
        names = {
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off":
                "matmuls",
            "nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTT": "matmuls",
            "cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>": "matmuls",
            "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false>>": "attention",
            "fmha_cutlassB_bf16_aligned_64x64_k128_sm80": "attention",
            "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)": "communication",
            "Memcpy DtoD (Device -> Device)": "copies",
            "Memset (Device)": "copies",
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>>": "memory_bound",
            "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float>": "memory_bound",
            "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<FusedAdamMathFunctor>": "memory_bound",
        }
        for name, want in names.items():
            self.assertEqual(kernel_class(name), want, name)

    def test_device_time_is_summed_by_class_from_cuda_entries_only(self):
        from llmem_probe.kernels import KERNEL_CLASSES, kernel_seconds

        class Avg:
            def __init__(self, key, device, us, count=1):
                self.key, self.device_type, self.self_device_time_total, self.count = key, device, us, count

        out = kernel_seconds([Avg("sm90_xmma_gemm_x", "DeviceType.CUDA", 3000, 10),
                              Avg("nvjet_y", "DeviceType.CUDA", 1000, 5),
                              Avg("flash_bwd_kernel", "DeviceType.CUDA", 500),
                              Avg("aten::mm", "DeviceType.CPU", 9000),  # host time: not the GPU's
                              Avg("vectorized_elementwise_kernel", "DeviceType.CUDA", 250, 40)])
        self.assertEqual(set(out["seconds"]), set(KERNEL_CLASSES))
        self.assertAlmostEqual(out["seconds"]["matmuls"], 0.004)
        self.assertAlmostEqual(out["seconds"]["attention"], 0.0005)
        self.assertAlmostEqual(out["seconds"]["memory_bound"], 0.00025)
        self.assertAlmostEqual(out["kernel_seconds_total"], 0.00475)
        self.assertEqual(out["kernels"], 56)

    def test_a_profiled_step_leaves_the_measurement_and_records_its_time(self):
        reader = FakeMemory()
        res = P.run_probe(cfg(model={"preset": "qwen2.5-0.5b", "layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2,
                                     "head_dim": 16, "ffn_hidden": 128, "vocab": 256},
                              micro_batch=1, seq_len=16, attention="eager"),
                          steps=1, warmup=1, device="cpu", reader=reader, caps=P.detect_capabilities(),
                          catalog=CATALOG, profile_kernels=True)
        kt = res["measured"]["kernel_time"]
        json.dumps(kt)
        self.assertGreater(res["measured"]["peak_allocated_bytes"], 0)
        # on a CPU-only torch the profiler sees no CUDA kernel (or refuses CUDA activity): zeros or an error
        self.assertTrue("error" in kt or kt["kernel_seconds_total"] == 0, kt)


class SmokeRun(unittest.TestCase):
    def run_tiny(self, config, steps=2, warmup=1, reader=None):
        reader = reader or FakeMemory()
        res = P.run_probe(config, steps=steps, warmup=warmup, device="cpu", reader=reader,
                          caps=P.detect_capabilities(), catalog=CATALOG)
        json.dumps(res)
        return res, reader

    def test_history_of_the_last_step_carries_phase_marks(self):
        class Recording(FakeMemory):
            def __init__(self):
                super().__init__()
                self.started = self.stopped = 0

            def start_history(self):
                self.started += 1

            def stop_history(self, phases):
                self.stopped += 1
                return {"phases": list(phases)}

        config = tiny_cfg(grad_accum=2)
        res, reader = self.run_tiny(config, steps=2, warmup=1, reader=Recording())
        self.assertEqual((reader.started, reader.stopped), (1, 1))  # the last measured step only
        phases = res["measured"]["timeline"]["phases"]
        self.assertEqual([p["phase"] for p in phases], ["forward", "backward", "forward", "backward", "optimizer"])
        self.assertEqual([p.get("micro_batch") for p in phases if p["phase"] == "forward"], [0, 1])
        self.assertTrue(all(a["t_us"] <= b["t_us"] for a, b in zip(phases, phases[1:])))

    def test_allocator_trace_records_from_the_build_and_marks_every_step(self):
        class Tracing(FakeMemory):
            def __init__(self):
                super().__init__()
                self.started = self.stopped = 0

            def start_history(self):
                self.started += 1
                self.t0 = time.time_ns() // 1000

            def snapshot(self):  # two events: one before the first step, one after its start
                now = time.time_ns() // 1000
                trace = [{"action": "segment_alloc", "addr": 0, "size": 2 << 20, "stream": 0, "time_us": self.t0},
                         {"action": "alloc", "addr": 0, "size": 512, "stream": 0, "time_us": now}]
                return {"segments": [{"device": 0, "total_size": 2 << 20,
                                      "blocks": [{"size": 512, "state": "active_allocated"}]}],
                        "device_traces": [trace]}

            def stop_recording(self):
                self.stopped += 1

        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "run.trace.gz")
            reader = Tracing()
            res = P.run_probe(tiny_cfg(), steps=2, warmup=1, device="cpu", reader=reader,
                              caps=P.detect_capabilities(), catalog=CATALOG, trace_path=path)
            json.dumps(res)
            with gzip.open(path, "rt") as f:
                text = f.read()
        self.assertEqual((reader.started, reader.stopped), (1, 1))  # one recording, from the build on
        self.assertEqual(res["measured"]["allocator_trace"], {"file": "run.trace.gz", "events": 2})
        self.assertNotIn("_allocator_trace", res["measured"])
        marks = [line[5:] for line in text.splitlines() if line.startswith("mark ")]
        self.assertEqual(marks[0], "build")
        self.assertIn("step 1 forward 0", marks)
        self.assertEqual(marks[-3:], ["step 3 forward 0", "step 3 backward", "step 3 optimizer"])
        self.assertLess(text.index("s 0 2097152 0"), text.index("mark step 1 forward 0"))
        # the last step's series is cut from the same recording: only the event after its start
        self.assertEqual(res["measured"]["timeline"]["events"], 1)

    def test_result_shape(self):
        config = tiny_cfg()
        res, reader = self.run_tiny(config, steps=3, warmup=2)
        self.assertEqual(set(res), {"ok", "config", "measured", "environment", "probe"})
        self.assertIs(res["ok"], True)
        self.assertEqual(res["config"], config)
        ms = res["measured"]
        for k in ("peak_allocated_bytes", "peak_reserved_bytes", "device_used_bytes"):
            self.assertIsInstance(ms[k], int)
        self.assertEqual(ms["device_used_source"], "fake")
        self.assertEqual(set(ms["phases"]), {"forward", "backward", "optimizer"})
        for ph in ms["phases"].values():
            self.assertEqual(set(ph), {"peak_allocated_bytes", "peak_reserved_bytes"})
            self.assertIsInstance(ph["peak_allocated_bytes"], int)
        self.assertIsInstance(ms["step_seconds"], float)
        self.assertGreater(ms["step_seconds"], 0)
        self.assertEqual(len(ms["step_seconds_each"]), 3)
        self.assertEqual((ms["steps"], ms["warmup"]), (3, 2))
        self.assertEqual(ms["params"]["total"], P.count_params_analytic(
            P.effective_config(config)["model"]))
        env = res["environment"]
        for k in ("gpu", "capability", "total_memory_bytes", "driver", "cuda", "torch", "transformers", "peft",
                  "bitsandbytes", "python"):
            self.assertIn(k, env)
        self.assertEqual(env["driver"], "fake-driver")
        self.assertEqual(env["torch"], P.torch.__version__)

    def test_phase_peaks_come_from_the_reader(self):
        reader = FakeMemory()
        res, _ = self.run_tiny(tiny_cfg(), steps=2, warmup=1, reader=reader)
        ms = res["measured"]
        # 1 reset after warm-up + one per phase boundary of the last step (forward, backward, optimizer, end)
        self.assertEqual(reader.resets, 1 + 4)
        # peak reads: one before the last step, then one as each of the three phases ends
        self.assertEqual(reader.reads, 1 + 3)
        self.assertEqual([ms["phases"][p]["peak_allocated_bytes"] for p in P.PHASES], [2002, 2003, 2004])
        self.assertEqual(ms["peak_allocated_bytes"], 2004)

    def test_variants_run(self):
        variants = {
            "mixed bf16 + full recompute of 1 layer + chunked loss":
                tiny_cfg(dtype="bf16", master_weights=True, recompute="full", recompute_layers=1, loss="chunked",
                         loss_chunks=4),
            "pure bf16 + sgd momentum + accumulation + hf_upcast + dropout":
                tiny_cfg(dtype="bf16", master_weights=False, optimizer_dtype="bf16", optimizer="sgd_momentum",
                         grad_accum=2, loss="hf_upcast", dropout=0.1),
            "selective core_attn + mlp, plain SGD for_loop":
                tiny_cfg(recompute="selective", recompute_modules=["core_attn", "mlp"], optimizer="sgd",
                         optimizer_impl="for_loop"),
            "gpt2-like: plain MLP, layernorm, learned positions, biases, tied":
                tiny_cfg({"mlp": "plain", "norm": "layernorm", "position": "learned", "bias": True,
                          "tied_embeddings": True, "kv_heads": 4}),
            "parallel block, qk head norm":
                tiny_cfg({"norms_per_layer": 1, "qk_norm": "head", "qkv_bias": True}),
            "gemma sandwich norms, full qk norm, sinks, MQA":
                tiny_cfg({"norms_per_layer": 4, "qk_norm": "full", "attn_sinks": True, "kv_heads": 1}),
            "classification head":
                tiny_cfg({"head": "classification", "num_labels": 3, "type_vocab": 2, "embedding_norm": True,
                          "final_norm": False}),
            "no head": tiny_cfg({"head": "none"}),
            "adam, lm head bias": tiny_cfg({"lm_head_bias": True}, optimizer="adam"),
        }
        for name, config in variants.items():
            with self.subTest(variant=name):
                res, _ = self.run_tiny(config)
                self.assertTrue(res["ok"])
                self.assertEqual(res["measured"]["params"]["total"],
                                 P.count_params_analytic(P.effective_config(config)["model"]))
                self.assertTrue(res["measured"]["loss"] == res["measured"]["loss"])  # not NaN

    def test_ddp_one_rank(self):
        import torch.distributed as dist
        if not dist.is_available():
            self.skipTest("torch.distributed is not available")
        res, _ = self.run_tiny(tiny_cfg(parallel={"engine": "ddp"}, grad_accum=2))
        self.assertTrue(res["ok"])
        self.assertFalse(dist.is_initialized())

    def test_recompute_does_not_change_gradients(self):
        torch = P.torch
        grads = []
        for rc in ({"recompute": "none"}, {"recompute": "full"},
                   {"recompute": "selective", "recompute_modules": ["core_attn", "mlp"]}):
            plan = P.translate(tiny_cfg(**rc), P.detect_capabilities())
            run = P.build_run(plan, "cpu", seed=3)
            ids, labels = run.batches[0]
            run.model(ids, labels).backward()
            grads.append([p.grad.clone() for p in run.model.parameters()])
        for other in grads[1:]:
            for a, b in zip(grads[0], other):
                self.assertTrue(torch.allclose(a, b, atol=1e-6))

    @unittest.skipUnless(HAVE_SDPA, "torch has no scaled_dot_product_attention")
    def test_sdpa_matches_eager(self):
        torch = P.torch
        outs = []
        for att in ("eager", "sdpa_math", "flash"):
            plan = P.translate(tiny_cfg(attention=att), P.detect_capabilities())
            run = P.build_run(plan, "cpu", seed=5)
            ids, labels = run.batches[0]
            with P.sdpa_backend_context(att):
                outs.append(run.model(ids, labels).detach())
        for o in outs[1:]:
            self.assertTrue(torch.allclose(outs[0], o, atol=1e-4), outs)

    def test_measuring_needs_cuda_without_a_reader(self):
        if P.torch.cuda.is_available():
            self.skipTest("a CUDA device is present")
        with self.assertRaises(P.ProbeError) as cm:
            P.run_probe(tiny_cfg(), steps=1, warmup=0, device="cpu", catalog=CATALOG)
        self.assertIn("CUDA", str(cm.exception))


# ---------------------------------------------------------------------------

class Matrix(unittest.TestCase):
    def test_matrix_entries(self):
        entries = RM.load_matrix()
        self.assertGreaterEqual(len(entries), 60)
        presets, fake_rows = set(), 0
        for e in entries:
            with self.subTest(entry=e["id"]):
                c = e["config"]
                self.assertEqual(c["hardware"]["gpu"], "h200-141gb")
                self.assertGreater(e["hint_gib"], 0)  # what the runner sets aside for it on the GPU
                plan = P.translate(c, FULL, catalog=CATALOG, impl=e.get("impl", "reference"))
                self.assertTrue(512 <= plan["seq_len"] <= 16384)
                self.assertTrue(1 <= plan["micro_batch"] <= 8)
                if plan["layout"]:
                    fake_rows += 1
                    self.assertTrue(e["id"].startswith("probe-h200-fake-"))
                    self.assertEqual(c["parallel"]["engine"], "fsdp2")
                    self.assertEqual(c["runtime"]["nccl_buffer_mib"], 0)  # no NCCL under the fake group
                else:
                    self.assertEqual(c["parallel"]["gpus"], 1)
                    self.assertIn(c["parallel"]["engine"], ("single", "ddp"))
                    self.assertTrue(0.4e9 <= plan["params"]["base"] <= 8.1e9)
                presets.add(c["model"]["preset"])
                needs = set(e.get("requires", []))
                if plan["finetune"]["method"] != "full":
                    self.assertIn("peft", needs)
                if plan["optimizer"]["class"].startswith("bitsandbytes") or plan["finetune"]["method"] == "qlora":
                    self.assertIn("bitsandbytes", needs)
                if e.get("impl") == "hf":
                    self.assertIn("transformers", needs)
        self.assertGreaterEqual(fake_rows, 20)
        self.assertTrue({"qwen2.5-0.5b", "llama-3.2-1b", "llama-3.2-3b", "qwen2.5-7b", "llama-3.1-8b",
                         "llama-3.1-70b"} <= presets)

    def test_matrix_covers_the_options(self):
        plans = [P.translate(e["config"], FULL, catalog=CATALOG, impl=e.get("impl", "reference"))
                 for e in RM.load_matrix()]
        self.assertTrue({"fp32", "bf16"} <= {p["precision"]["param_dtype"] for p in plans})
        self.assertIn("bf16", {p["precision"]["autocast_dtype"] for p in plans})
        self.assertTrue({"adamw", "sgd", "sgd_momentum", "adafactor"} <= {p["optimizer"]["name"] for p in plans})
        self.assertTrue({"none", "full", "selective", "per_op"} <= {p["recompute"]["mode"] for p in plans})
        self.assertTrue({"flash", "eager", "sdpa_math"} <= {p["attention"] for p in plans})
        self.assertTrue({"standard", "chunked", "compiled", "loss_parallel"} <= {p["loss"]["kind"] for p in plans})
        self.assertGreaterEqual(len({p["finetune"].get("rank") for p in plans if p["finetune"]["method"] == "lora"}), 3)
        self.assertEqual(min(p["seq_len"] for p in plans), 512)
        self.assertEqual(max(p["seq_len"] for p in plans), 16384)
        lays = [p["layout"] for p in plans if p["layout"]]
        self.assertTrue({8, 16, 32, 64} <= {lay["dp_shard"] * lay["dp_replicate"] for lay in lays})
        self.assertTrue({2, 4, 8} <= {lay["tp"] for lay in lays})
        self.assertTrue(any(lay["dp_replicate"] > 1 for lay in lays))  # HSDP
        self.assertTrue(any(lay["tp"] > 1 and lay["dp_shard"] > 1 for lay in lays))  # TP x FSDP2
        self.assertTrue(any(not lay["reshard_after_forward"] for lay in lays))

    def test_matrix_configs_are_valid_for_llmem(self):
        node = shutil.which("node")
        cli = os.path.join(ROOT, "bin", "llmem.mjs")
        if not node or not os.path.exists(cli):
            self.skipTest("node or bin/llmem.mjs not available")
        for e in RM.load_matrix():
            proc = subprocess.run([node, cli, "estimate", "-", "--json"], input=json.dumps(e["config"]),
                                  capture_output=True, text=True, cwd=ROOT, timeout=120)
            if proc.returncode != 0 and "Cannot find" in proc.stderr:
                self.skipTest("the llmem CLI is not built here")
            with self.subTest(entry=e["id"]):
                self.assertEqual(proc.returncode, 0, proc.stdout[-300:] + proc.stderr[-300:])
                self.assertTrue(json.loads(proc.stdout)["ok"])

    def fake_result(self):
        e = RM.load_matrix()[0]
        return e, {
            "ok": True, "config": e["config"],
            "measured": {"peak_allocated_bytes": 123, "peak_reserved_bytes": 456, "device_used_bytes": 789,
                         "device_used_source": "nvml", "device_used_before_bytes": 0,
                         "phases": {p: {"peak_allocated_bytes": 1, "peak_reserved_bytes": 2} for p in P.PHASES},
                         "step_seconds": 0.5, "steps": 3, "warmup": 2,
                         "attention_path": {"kind": "flash", "gqa": "enable_gqa"}},
            "environment": {"gpu": "NVIDIA H200", "capability": "9.0", "total_memory_bytes": 150754820096,
                            "driver": "580", "cuda": "13.0", "torch": "2.11.0"},
            "probe": {"version": 1, "impl": "reference", "applied": ["engine single: no wrapper"], "notes": [],
                      "date": "2026-11-20T10:00:00Z"},
        }

    def test_case_shape(self):
        e, result = self.fake_result()
        case = RM.make_case(e, result, 42.123)
        for k in ("id", "category", "confidence", "source", "config", "expect", "assumptions", "environment",
                  "seconds"):
            self.assertIn(k, case)
        self.assertEqual((case["category"], case["confidence"]), ("measured", "high"))
        self.assertEqual(case["source"], "llmem probe on NVIDIA H200 2026-11-20")
        self.assertEqual(case["expect"], {"metric": "peak_allocated_bytes", "bytes": 123, "relation": "eq"})
        self.assertEqual([a["metric"] for a in case["expect_alt"]], ["peak_reserved_bytes", "device_used_bytes"])
        self.assertEqual(case["seconds"], 42.12)
        self.assertTrue(all(isinstance(a, str) for a in case["assumptions"]))
        self.assertIn("engine single: no wrapper", case["assumptions"])
        with open(MEASUREMENTS) as f:
            ref = json.load(f)[0]
        # optional in the reference set (a published run names its framework; the probe records "environment")
        self.assertTrue(set(ref) - {"quote", "expect_alt", "stack"} <= set(case), set(ref) - set(case))
        self.assertEqual(set(ref["expect"]), set(case["expect"]))
        self.assertEqual(type(ref["config"]), type(case["config"]))

    def test_case_follows_the_gqa_path_seen(self):
        e, result = self.fake_result()
        result["config"] = json.loads(json.dumps(result["config"]))
        result["measured"]["attention_path"] = {"kind": "flash", "gqa": "repeat_kv",
                                                "gqa_fallback_reason": "No available kernel. Aborting execution."}
        case = RM.make_case(e, result, 1.0)
        self.assertIs(case["config"]["training"]["repeat_kv"], True)
        self.assertTrue(any("repeat_kv true" in a for a in case["assumptions"]))
        e, result = self.fake_result()  # enable_gqa ran: the config is left as it was
        case = RM.make_case(e, result, 1.0)
        self.assertNotIn("repeat_kv", case["config"].get("training", {}))

    def test_oom_case_is_a_lower_bound(self):
        e, result = self.fake_result()
        oom = {"ok": False, "config": e["config"], "environment": result["environment"],
               "error": {"message": "out of memory", "oom": True, "peak_allocated_bytes_until_oom": 777,
                         "total_memory_bytes": 150754820096}}
        case = RM.make_oom_case(e, oom, 3.0)
        self.assertEqual(case["expect"], {"metric": "peak_allocated_bytes", "bytes": 777, "relation": "ge"})

    def test_bundle_round_trip(self):
        e, result = self.fake_result()
        case = RM.make_case(e, result, 1.0)
        with tempfile.TemporaryDirectory() as d:
            bundle = os.path.join(d, "bundle.json")
            with open(bundle, "w") as f:
                json.dump([case], f)
            with redirect_stdout(io.StringIO()):
                RM.unbundle(bundle, os.path.join(d, "out"))
            with open(os.path.join(d, "out", e["id"] + ".json")) as f:
                self.assertEqual(json.load(f), case)

    def test_refused_entries_write_no_case(self):
        with tempfile.TemporaryDirectory() as d:
            matrix = os.path.join(d, "matrix.json")
            with open(matrix, "w") as f:
                json.dump([{"id": "refused-moe", "config": cfg(preset("mixtral-8x7b"))}], f)
            out = os.path.join(d, "measured")
            summary = os.path.join(d, "summary.json")
            buf = io.StringIO()
            with redirect_stdout(buf), redirect_stderr(io.StringIO()):
                rc = RM.main(["--matrix", matrix, "--out", out, "--summary", summary, "--timeout", "300"])
            self.assertEqual(rc, 1)
            self.assertFalse(os.path.exists(out))
            with open(summary) as f:
                rows = json.load(f)
        self.assertEqual(rows[0]["status"], "refused")
        self.assertIn("model.moe", rows[0]["message"])

    def run_stub_matrix(self, jobs, gpu_gib, oom_when_shared=False):
        """The runner over three entries with a stand-in probe (sleeps, logs its lifetime, writes a result)."""
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        stub = os.path.join(d, "stub.py")
        with open(stub, "w") as f:
            f.write(textwrap.dedent("""
                import json, os, sys, time
                cfg, out = sys.argv[2], sys.argv[4]
                log = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lifetimes.log")
                t0 = time.time(); time.sleep(0.6); t1 = time.time()
                others = [l for l in open(log)] if os.path.exists(log) else []
                with open(log, "a") as f: f.write("%%s %%f %%f\\n" %% (os.path.basename(cfg), t0, t1))
                if %s and os.environ.get("STUB_SHARED") and not os.path.exists(log + ".alone"):
                    open(log + ".alone", "w").close()
                    json.dump({"ok": False, "config": json.load(open(cfg)), "error": {"message": "out of memory",
                               "oom": True, "peak_allocated_bytes_until_oom": 5}}, open(out, "w")); sys.exit(%d)
                ms = {"peak_allocated_bytes": 1, "peak_reserved_bytes": 2, "device_used_bytes": 3,
                      "device_used_source": "nvml", "phases": {}, "step_seconds": 0.1, "steps": 1, "warmup": 0}
                json.dump({"ok": True, "config": json.load(open(cfg)), "measured": ms, "environment": {},
                           "probe": {"version": 1, "impl": "reference", "applied": [], "notes": []}}, open(out, "w"))
                """ % (oom_when_shared, P.EXIT_OOM)))
        matrix = os.path.join(d, "matrix.json")
        with open(matrix, "w") as f:
            json.dump([{"id": "e%d" % i, "hint_gib": 10, "config": cfg()} for i in range(3)], f)
        bundle = os.path.join(d, "bundle.json")
        env = dict(os.environ, STUB_SHARED="1" if jobs > 1 else "")
        with mock.patch.dict(os.environ, env), redirect_stdout(io.StringIO()):
            rc = RM.main(["--matrix", matrix, "--out", os.path.join(d, "out"), "--bundle", bundle, "--jobs",
                          str(jobs), "--gpu-gib", str(gpu_gib), "--python", stub_python(stub)])
        with open(os.path.join(d, "lifetimes.log")) as f:
            spans = sorted((float(a), float(b)) for _, a, b in (line.split() for line in f))
        with open(bundle) as f:
            return rc, spans, json.load(f)

    def test_runner_keeps_within_the_gpu_capacity(self):
        rc, spans, cases = self.run_stub_matrix(jobs=3, gpu_gib=15)  # one 10 GiB entry at a time
        self.assertEqual(rc, 0)
        self.assertTrue(all(spans[i][1] <= spans[i + 1][0] for i in range(len(spans) - 1)), spans)
        self.assertEqual([c["measured"]["concurrent_processes"] for c in cases], [0, 0, 0])

    def test_runner_runs_entries_side_by_side_and_says_so(self):
        rc, spans, cases = self.run_stub_matrix(jobs=3, gpu_gib=100)
        self.assertEqual(rc, 0)
        self.assertLess(spans[1][0], spans[0][1])  # overlapping lifetimes
        self.assertEqual(len(cases), 3)
        self.assertTrue(all(c["measured"]["concurrent_processes"] >= 1 for c in cases))
        for c in cases:  # a device-wide reading taken beside other runs is left out
            self.assertEqual([a["metric"] for a in c["expect_alt"]], ["peak_reserved_bytes"])
            self.assertTrue(any("left out" in a for a in c["assumptions"]))

    def test_runner_retries_alone_an_oom_beside_others(self):
        rc, spans, cases = self.run_stub_matrix(jobs=3, gpu_gib=100, oom_when_shared=True)
        self.assertEqual(rc, 0)
        self.assertEqual(len(spans), 4)  # one entry ran twice
        self.assertEqual(sorted(c["id"] for c in cases), ["e0", "e1", "e2"])
        self.assertTrue(spans[-1][0] >= max(b for _, b in spans[:-1]))  # the retry ran alone, last

    def test_gpu_session_names_matrix_entries(self):
        with open(os.path.join(PROBE_DIR, "gpu-session.sh")) as f:
            text = f.read()
        ids = set(re.findall(r"probe-h200-[a-z0-9.\-]+", text))
        self.assertGreaterEqual(len(ids), 8)
        self.assertEqual(ids - {e["id"] for e in RM.load_matrix(RM.DEFAULT_MATRIX)}, set())

    def test_plan_only(self):
        with redirect_stdout(io.StringIO()) as buf:
            rc = RM.main(["--plan-only", "--assume", "all"])
        self.assertEqual(rc, 0, buf.getvalue())
        self.assertEqual(len(buf.getvalue().strip().splitlines()), len(RM.load_matrix()))


if __name__ == "__main__":
    unittest.main(verbosity=2)
