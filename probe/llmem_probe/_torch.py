"""torch when importable: the plan and the refusals work without it; building and measuring need it."""
from __future__ import annotations

import contextlib

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.utils.checkpoint

    Module = nn.Module
    TORCH_IMPORT_ERROR = None
except Exception as _e:  # pragma: no cover - exercised when torch is missing
    torch = nn = F = None
    Module = object
    TORCH_IMPORT_ERROR = "%s: %s" % (type(_e).__name__, _e)

__all__ = ["torch", "nn", "F", "Module", "TORCH_IMPORT_ERROR", "torch_at_least", "null_context",
           "require_torch"]


def torch_at_least(major, minor):
    if torch is None:
        return False
    try:
        parts = torch.__version__.split("+")[0].split(".")
        return (int(parts[0]), int(parts[1])) >= (major, minor)
    except Exception:
        return False


@contextlib.contextmanager
def null_context():
    yield


def require_torch():
    from .config import ProbeError
    if torch is None:
        raise ProbeError("torch is not importable (%s)" % TORCH_IMPORT_ERROR)
