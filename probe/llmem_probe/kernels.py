"""GPU time by kernel class over one profiled step (torch.profiler): the step-time model's
operation classes, measured (core/steptime.c; llmem estimate prints the model's parts).

Kernels are told apart by name: cuBLAS / cuBLASLt / CUTLASS GEMMs (sm80_xmma, sm90_xmma, nvjet, cutlass,
gemm, wgmma), FlashAttention and cuDNN / efficient attention (flash, fmha, attention), NCCL collectives,
copies and fills (Memcpy, Memset), and every other kernel (elementwise, reductions, norms, the loss, the
optimizer's foreach kernels) as memory-bound."""
from __future__ import annotations

KERNEL_CLASSES = ("matmuls", "attention", "memory_bound", "communication", "copies")

_ATTENTION = ("flash", "fmha", "attention", "attn")
_GEMM = ("gemm", "xmma", "nvjet", "cutlass", "wgmma", "cublas")


def kernel_class(name):
    """The class of a CUDA kernel by its name (attention before GEMMs: FlashAttention kernels use CUTLASS)."""
    n = name.lower()
    if "nccl" in n:
        return "communication"
    if n.startswith("memcpy") or n.startswith("memset") or "memcpy" in n:
        return "copies"
    if any(k in n for k in _ATTENTION):
        return "attention"
    if any(k in n for k in _GEMM):
        return "matmuls"
    return "memory_bound"


def _device_us(avg):
    """Self device time of a profiler average in microseconds (torch >= 2.4: self_device_time_total)."""
    for attr in ("self_device_time_total", "self_cuda_time_total"):
        v = getattr(avg, attr, None)
        if v is not None:
            return float(v)
    return 0.0


def kernel_seconds(averages):
    """Seconds of device time by class over profiler averages (prof.key_averages()): CUDA entries only."""
    out = {c: 0.0 for c in KERNEL_CLASSES}
    count = 0
    for a in averages:
        if not str(getattr(a, "device_type", "")).endswith("CUDA"):
            continue
        us = _device_us(a)
        if us <= 0:
            continue
        out[kernel_class(a.key)] += us / 1e6
        count += int(getattr(a, "count", 1))
    total = sum(out.values())
    return {"source": "torch.profiler (one step after the measured ones)", "seconds": out,
            "kernel_seconds_total": total, "kernels": count}


def profile_step(step, synchronize, timer):
    """Run step() once under torch.profiler (CUDA activity); its wall time and device time by class.
    A profiler that fails leaves the measurement as it was: the error is recorded instead."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    try:
        synchronize()
        t0 = timer()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            step()
            synchronize()
        wall = timer() - t0
        out = kernel_seconds(prof.key_averages())
        out["step_seconds"] = wall
        out["torch"] = torch.__version__
        return out
    except Exception as e:  # the memory readings stand without it
        return {"error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:300] if str(e) else "")}
