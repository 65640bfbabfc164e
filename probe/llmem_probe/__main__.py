"""python3 -m llmem_probe (from probe/): the same command as python3 probe/llmem_probe.py."""
import sys

from .cli import main

sys.exit(main())
