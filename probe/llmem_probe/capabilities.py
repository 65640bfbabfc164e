"""What this Python can do: torch features and optional packages the translation depends on."""
from __future__ import annotations

import importlib
import importlib.util

from ._torch import F, torch, torch_at_least


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


def _has_module(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _has_attr(module, attr):
    try:
        return hasattr(importlib.import_module(module), attr)
    except Exception:
        return False


def detect_capabilities():
    """Feature flags the translation depends on; tests pass their own dict."""
    caps = {"torch": None, "sdpa": False, "sdpa_kernel": False, "enable_gqa": False, "sac": False,
            "adafactor": False, "fused_adam": False, "fused_sgd": False, "compile": False,
            "post_accumulate_grad_hook": False, "cuda": False, "meta_device": False,
            "fake_pg": False, "fully_shard": False, "tensor_parallel": False}
    if torch is not None:
        import inspect
        caps["torch"] = torch.__version__
        caps["sdpa"] = hasattr(F, "scaled_dot_product_attention")
        caps["sdpa_kernel"] = importlib.util.find_spec("torch.nn.attention") is not None or \
            hasattr(torch.backends.cuda, "sdp_kernel")
        caps["enable_gqa"] = caps["sdpa"] and torch_at_least(2, 5)
        caps["sac"] = hasattr(torch.utils.checkpoint, "create_selective_checkpoint_contexts")
        caps["adafactor"] = hasattr(torch.optim, "Adafactor")
        caps["fused_adam"] = torch_at_least(2, 0)
        try:
            caps["fused_sgd"] = "fused" in inspect.signature(torch.optim.SGD.__init__).parameters
        except (TypeError, ValueError):
            caps["fused_sgd"] = False
        caps["compile"] = hasattr(torch, "compile")
        caps["post_accumulate_grad_hook"] = hasattr(torch.Tensor, "register_post_accumulate_grad_hook")
        caps["cuda"] = bool(torch.cuda.is_available())
        caps["meta_device"] = True
        # multi-rank layouts as rank 0 of a fake process group (torch/testing/_internal/distributed/fake_pg.py)
        caps["fake_pg"] = _has_module("torch.testing._internal.distributed.fake_pg")
        caps["fully_shard"] = _has_attr("torch.distributed.fsdp", "fully_shard")  # FSDP2, public in torch >= 2.6
        caps["tensor_parallel"] = _has_attr("torch.distributed.tensor.parallel", "parallelize_module")
    for name in ("transformers", "peft", "bitsandbytes", "liger_kernel", "pynvml"):
        caps[name] = _pkg_version(name)
    return caps


# What a current CUDA build of torch (>= 2.5) offers: a dry run assumes it when
# the local torch is missing or older, so the plan shows what the GPU machine runs.
MODERN_TORCH_CAPS = {"torch": ">= 2.5 (assumed for the dry run)", "sdpa": True, "sdpa_kernel": True,
                     "enable_gqa": True, "sac": True, "adafactor": True, "fused_adam": True,
                     "fused_sgd": True, "compile": True, "post_accumulate_grad_hook": True,
                     "fake_pg": True, "fully_shard": True, "tensor_parallel": True}
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
