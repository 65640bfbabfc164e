"""The command line: python3 probe/llmem_probe.py config.json [-o out.json | --dry-run] (see probe/README.md)."""
from __future__ import annotations

import argparse
import json
import os
import sys

from ._torch import TORCH_IMPORT_ERROR, torch
from .capabilities import OPTIONAL_PACKAGES, detect_capabilities, dry_run_capabilities
from .config import EXIT_ERROR, EXIT_OK, EXIT_OOM, EXIT_REFUSED, ProbeError, Refusal
from .measure import collect_environment, run_probe
from .model import ReferenceDecoder, _build_hf, module_shapes
from .translate import translate

DESCRIPTION = "llmem probe: measure the per-GPU training memory of one config-v1 run on one GPU."


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
    ap = argparse.ArgumentParser(prog="llmem_probe.py", description=DESCRIPTION)
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
    ap.add_argument("--profile-kernels", action="store_true",
                    help="one more step under torch.profiler: GPU time by kernel class (measured.kernel_time)")
    ap.add_argument("--trace-allocator", metavar="PATH", default=None,
                    help="write the allocator's every event, from before the model is built to the end of the last "
                         "step, to PATH (.gz: compressed) for llmem_trace_replay")
    ap.add_argument("--assume", action="append", default=[], choices=OPTIONAL_PACKAGES + ("all",),
                    help="with --dry-run: plan as if this optional package were installed (repeatable)")
    ap.add_argument("--local-capabilities", action="store_true",
                    help="with --dry-run: use this machine's torch features instead of assuming torch >= 2.5")
    args = ap.parse_args(argv)
    if args.dry_run and args.trace_allocator:
        ap.error("--trace-allocator measures: not with --dry-run")
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
                           seed=args.seed, plan=plan, profile_kernels=args.profile_kernels,
                           trace_path=args.trace_allocator)
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
