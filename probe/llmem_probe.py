#!/usr/bin/env python3
"""llmem probe, one command: measure the per-GPU training memory of one config-v1 run.

    python3 probe/llmem_probe.py config.json -o measured.json [--steps 3 --warmup 2]
    python3 probe/llmem_probe.py config.json --dry-run        # the plan; no GPU needed

Starts the package beside this file (probe/llmem_probe/, whose __init__ says
what it measures and how; `python3 -m llmem_probe` from probe/ does the same).
"""
import os
import sys

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path[0] != here:
        sys.path.insert(0, here)
    from llmem_probe.cli import main  # the package llmem_probe/ beside this file

    sys.exit(main())
