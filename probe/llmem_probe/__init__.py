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

The package, by concern: config (the field table generated from the core,
fields.json; presets, the effective config, value checks), capabilities (what
this torch and its packages offer), translate (config -> plan or Refusal),
model (the reference decoder, the transformers model, LoRA / QLoRA), run (the
training setup and step), measure (memory readers, the measured steps,
run_probe) and cli (the command line). Its public names are re-exported here;
the functions translate and measure hide their modules as attributes of the
package, so import from those with `from llmem_probe.translate import ...`.
"""
from ._torch import F, TORCH_IMPORT_ERROR, nn, torch
from .capabilities import MODERN_TORCH_CAPS, OPTIONAL_PACKAGES, detect_capabilities, dry_run_capabilities
from .cli import dry_run, format_plan, main
from .config import (DEFAULT_CATALOG, DEFAULTS, DTYPES, ENUMS, EXIT_ERROR, EXIT_OK, EXIT_OOM, EXIT_REFUSED,
                     EXTRA_KEYS, FIELD, FIELDS, GENERIC_STACK, LENIENT_SECTIONS, PROBE_VERSION, REPO_ROOT,
                     REVIEWED_KEYS, SETS, ProbeError, Refusal, check_values, deep_merge, effective_config,
                     load_catalog, load_fields, resolve_preset, unreviewed_settings)
from .measure import CudaMemory, collect_environment, measure, nvml_used_before_cuda, run_probe
from .model import (Attention, Block, HFTrainModule, LossComputer, MLP, ReferenceDecoder, RMSNorm, build_reference,
                    count_params_meta, materialize, module_shapes, sdpa_backend_context, torch_dtype)
from .run import PHASES, Run, build_run, train_step
from .translate import (LORA_MODULES, count_params_analytic, hf_model_mapping, lora_params_analytic,
                        translate)

__all__ = [
    "F", "TORCH_IMPORT_ERROR", "nn", "torch",
    "MODERN_TORCH_CAPS", "OPTIONAL_PACKAGES", "detect_capabilities", "dry_run_capabilities",
    "dry_run", "format_plan", "main",
    "DEFAULT_CATALOG", "DEFAULTS", "DTYPES", "ENUMS", "EXIT_ERROR", "EXIT_OK", "EXIT_OOM", "EXIT_REFUSED",
    "EXTRA_KEYS", "FIELD", "FIELDS", "GENERIC_STACK", "LENIENT_SECTIONS", "PROBE_VERSION", "REPO_ROOT",
    "REVIEWED_KEYS", "SETS", "ProbeError", "Refusal", "check_values", "deep_merge", "effective_config",
    "load_catalog", "load_fields", "resolve_preset", "unreviewed_settings",
    "CudaMemory", "collect_environment", "measure", "nvml_used_before_cuda", "run_probe",
    "Attention", "Block", "HFTrainModule", "LossComputer", "MLP", "ReferenceDecoder", "RMSNorm", "build_reference",
    "count_params_meta", "materialize", "module_shapes", "sdpa_backend_context", "torch_dtype",
    "PHASES", "Run", "build_run", "train_step",
    "LORA_MODULES", "count_params_analytic", "hf_model_mapping", "lora_params_analytic", "translate",
]
