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

This file starts the package beside it, probe/llmem_probe/ (`python3 -m
llmem_probe` from probe/ does the same); with probe/ on sys.path, `import
llmem_probe` imports the package.
"""
import os
import sys

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path[0] != here:
        sys.path.insert(0, here)
    from llmem_probe.cli import main  # the package llmem_probe/ beside this file

    sys.exit(main())
