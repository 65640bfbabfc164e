"""Measurement: memory readers (CUDA counters, NVML, the allocator's event history), the
measured steps with their phase peaks, the environment, and run_probe (translate, build, measure)."""
from __future__ import annotations

import datetime
import importlib.util
import math
import os
import platform
import sys
import time

from ._torch import require_torch, torch
from .capabilities import detect_capabilities
from .config import PROBE_DIR, PROBE_VERSION, ProbeError
from .run import PHASES, _optimizer_has_state, build_run, train_step
from .translate import translate


def _snapshot_to_json():
    """probe/snapshot_to_json.py, imported from the probe folder wherever the probe was started."""
    mod = sys.modules.get("snapshot_to_json")
    if mod is None:
        path = os.path.join(PROBE_DIR, "snapshot_to_json.py")
        spec = importlib.util.spec_from_file_location("snapshot_to_json", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules["snapshot_to_json"] = mod
    return mod


# --------------------------------------------------------------------------
# Memory readers (injected so the step loop runs on CPU in the tests)
# --------------------------------------------------------------------------

class CudaMemory:
    """torch.cuda counters, plus NVML (pynvml) or cudaMemGetInfo for the device-wide reading."""

    def __init__(self, device):
        self.device = torch.device(device)
        self._nvml = None
        self.nvml_error = None
        try:
            import pynvml
            pynvml.nvmlInit()
            self._nvml = (pynvml, self._nvml_handle(pynvml))
        except Exception as e:
            self.nvml_error = "%s: %s" % (type(e).__name__, e)
            self._nvml = None

    def _nvml_handle(self, pynvml):
        idx = self.device.index or 0
        try:
            uuid = str(torch.cuda.get_device_properties(idx).uuid)
            return pynvml.nvmlDeviceGetHandleByUUID(uuid if uuid.startswith("GPU-") else "GPU-" + uuid)
        except Exception:
            vis = os.environ.get("CUDA_VISIBLE_DEVICES", "")
            ids = [v.strip() for v in vis.split(",") if v.strip()]
            if ids and ids[min(idx, len(ids) - 1)].isdigit():
                idx = int(ids[min(idx, len(ids) - 1)])
            return pynvml.nvmlDeviceGetHandleByIndex(idx)

    def synchronize(self):
        torch.cuda.synchronize(self.device)

    def reset_peak(self):
        torch.cuda.reset_peak_memory_stats(self.device)

    def allocated(self):
        return int(torch.cuda.memory_allocated(self.device))

    def reserved(self):
        return int(torch.cuda.memory_reserved(self.device))

    def peak_allocated(self):
        return int(torch.cuda.max_memory_allocated(self.device))

    def peak_reserved(self):
        return int(torch.cuda.max_memory_reserved(self.device))

    def stats(self):
        """Allocator counters that explain a reserved reading (retries mean fragmentation near capacity)."""
        st = torch.cuda.memory_stats(self.device)
        return {k: int(st.get(k, 0)) for k in ("num_alloc_retries", "num_ooms", "num_device_alloc",
                                                "active_bytes.all.peak", "inactive_split_bytes.all.peak")}

    # the last step's events (a few per tensor); a trace from the build on holds every step's
    HISTORY_ENTRIES = 2000000
    TRACE_ENTRIES = 10000000

    def start_history(self, entries=HISTORY_ENTRIES):
        """Record every allocator event (torch.cuda.memory._record_memory_history; no stack contexts, to keep it cheap)."""
        rec = torch.cuda.memory._record_memory_history
        self.history_entries = entries
        try:
            rec(enabled="all", context=None, max_entries=entries)
        except TypeError:  # older signature
            rec(True)

    def capacity(self):
        """What the allocator could hold now: the device's free memory plus its own reserve."""
        free, _total = torch.cuda.mem_get_info(self.device)
        return int(free) + self.reserved()

    def snapshot(self):
        """The allocator's recorded events and its segments now (torch.cuda.memory._snapshot)."""
        return torch.cuda.memory._snapshot()

    def stop_recording(self):
        try:
            torch.cuda.memory._record_memory_history(enabled=None)
        except TypeError:
            torch.cuda.memory._record_memory_history(False)

    def stop_history(self, phases):
        """The recorded events as the compact series of probe/snapshot_to_json.py, with the phase marks."""
        snap = self.snapshot()
        self.stop_recording()
        return _snapshot_to_json().convert(snap, self.device.index or 0, phases=phases)

    def device_used(self):
        if self._nvml is not None:
            pynvml, handle = self._nvml
            own = self._nvml_process_used(pynvml, handle)
            if own is not None:  # this process alone: right even while other processes share the GPU
                return own, "nvml (this process)"
            return int(pynvml.nvmlDeviceGetMemoryInfo(handle).used), "nvml"
        free, total = torch.cuda.mem_get_info(self.device)
        return int(total - free), "torch.cuda.mem_get_info (total - free)"

    @staticmethod
    def _nvml_process_used(pynvml, handle):
        try:
            for proc in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
                if proc.pid == os.getpid() and proc.usedGpuMemory:
                    return int(proc.usedGpuMemory)
        except Exception:
            pass
        return None

    def driver(self):
        if self._nvml is not None:
            v = self._nvml[0].nvmlSystemGetDriverVersion()
            return v.decode() if isinstance(v, bytes) else v
        try:
            with open("/proc/driver/nvidia/version") as f:
                for word in f.readline().split():
                    if word[:1].isdigit() and "." in word:
                        return word
        except OSError:
            pass
        return None


def nvml_used_before_cuda():
    """Device memory in use before this process creates its CUDA context (NVML only)."""
    try:
        import pynvml
        pynvml.nvmlInit()
        vis = [v for v in os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",") if v.strip()]
        idx = int(vis[0]) if vis and vis[0].strip().isdigit() else 0
        return int(pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(idx)).used)
    except Exception:
        return None



# --------------------------------------------------------------------------
# The measured steps
# --------------------------------------------------------------------------

def _now_us():
    return time.time_ns() // 1000


def _traced(mark, step, trace_marks):
    """mark(phase), and with a trace the phase's start as a trace mark ("step 2 forward 0")."""
    if trace_marks is None:
        return mark
    forwards = [0]

    def both(phase):
        if phase is not None:
            label = "step %d %s" % (step, phase)
            if phase == "forward":
                label += " %d" % forwards[0]
                forwards[0] += 1
            trace_marks.append({"t_us": _now_us(), "label": label})
        mark(phase)
    return both


def measure(run, reader, steps=3, warmup=2, timer=time.perf_counter, profile_kernels=False, trace_marks=None):
    """Warm-up steps, then measured steps; phase peaks come from the last measured step. With
    profile_kernels, one more step under torch.profiler gives the GPU time by kernel class. With
    trace_marks (a list; the reader records since before the model was built), every step's phases are
    marked there and the whole recording comes back as the allocator trace (key "_allocator_trace")."""
    if steps < 1:
        raise ProbeError("--steps must be >= 1")
    null_mark = lambda phase: None  # noqa: E731
    tracing = trace_marks is not None
    losses = []
    for i in range(warmup):
        losses.append(float(train_step(run, _traced(null_mark, i + 1, trace_marks))))
    if warmup and run.plan["optimizer"]["name"] != "sgd" and not _optimizer_has_state(run):
        raise ProbeError("the optimizer kept no state after %d warm-up steps (a skipped step?)" % warmup)
    reader.synchronize()
    reader.reset_peak()
    seconds = []
    peak_alloc = peak_res = 0
    resident = None
    timeline = None
    phases = {p: {"peak_allocated_bytes": 0, "peak_reserved_bytes": 0} for p in PHASES}
    for step in range(steps):
        last = step == steps - 1
        if last:
            reader.synchronize()
            peak_alloc = max(peak_alloc, reader.peak_allocated())
            peak_res = max(peak_res, reader.peak_reserved())
            resident = reader.allocated()
            state = {"phase": None, "forward": 0}
            # the last step's allocator events, with phase marks placed by wall-clock time: trace
            # entries carry time_us, unix time in microseconds (torch/csrc/cuda/memory_snapshot.cpp)
            history = hasattr(reader, "start_history")
            marks = []
            if history and not tracing:  # a trace records already
                reader.start_history()

            def mark(phase):
                reader.synchronize()
                if history and phase is not None:
                    m = {"phase": phase, "t_us": time.time_ns() // 1000}
                    if phase == "forward":
                        m["micro_batch"] = state["forward"]
                        state["forward"] += 1
                    marks.append(m)
                cur = state["phase"]
                if cur is not None:
                    ph = phases[cur]
                    ph["peak_allocated_bytes"] = max(ph["peak_allocated_bytes"], reader.peak_allocated())
                    ph["peak_reserved_bytes"] = max(ph["peak_reserved_bytes"], reader.peak_reserved())
                reader.reset_peak()
                state["phase"] = phase
        else:
            mark = lambda phase: None  # noqa: E731
        last_start_us = _now_us()
        t0 = timer()
        losses.append(float(train_step(run, _traced(mark, warmup + step + 1, trace_marks))))
        reader.synchronize()
        seconds.append(timer() - t0)
        if last and tracing:
            timeline, allocator_trace = _trace_and_timeline(reader, marks, trace_marks, last_start_us)
        elif last and history:
            timeline = reader.stop_history(marks)
    for ph in phases.values():
        peak_alloc = max(peak_alloc, ph["peak_allocated_bytes"])
        peak_res = max(peak_res, ph["peak_reserved_bytes"])
    used, source = reader.device_used()
    rt = getattr(run.inner, "rt", None)
    out = {
        "peak_allocated_bytes": int(peak_alloc),
        "peak_reserved_bytes": int(peak_res),
        "device_used_bytes": None if used is None else int(used),
        "device_used_source": source,
        "phases": phases,
        "step_seconds": sum(seconds) / len(seconds),
        "step_seconds_each": seconds,
        "resident_bytes": None if resident is None else int(resident),
        "steps": steps,
        "warmup": warmup,
        # None when not finite: the fake process group's all-gathers return unwritten memory (JSON has no NaN)
        "loss": losses[-1] if losses and math.isfinite(losses[-1]) else None,
        "params": {"total": int(run.params_total), "trainable": int(run.params_trainable)},
    }
    if hasattr(reader, "stats"):
        out["allocator_stats"] = reader.stats()
    if timeline is not None:
        out["timeline"] = timeline
    if tracing:
        out["_allocator_trace"] = allocator_trace
    if profile_kernels:
        from .kernels import profile_step
        out["kernel_time"] = profile_step(lambda: train_step(run, lambda phase: None), reader.synchronize, timer)
    if rt is not None:
        out["attention_path"] = {"kind": rt.kind, "gqa": rt.gqa_path or "none"}
        if getattr(rt, "gqa_fallback_reason", None):
            out["attention_path"]["gqa_fallback_reason"] = rt.gqa_fallback_reason
    return out


def _trace_and_timeline(reader, marks, trace_marks, last_start_us):
    """One snapshot of a recording started before the model was built: the last step's series (as
    stop_history gives it) and the whole recording as an allocator trace."""
    S = _snapshot_to_json()
    device = getattr(getattr(reader, "device", None), "index", None) or 0
    snap = reader.snapshot()
    capacity = reader.capacity() if hasattr(reader, "capacity") else None
    reader.stop_recording()
    timeline = S.convert(S.since(snap, last_start_us), device, phases=marks)
    header = ["recorded by the llmem probe from before the model was built to the end of the last step",
              "torch %s" % (getattr(torch, "__version__", None) if torch is not None else None),
              "PYTORCH_CUDA_ALLOC_CONF %s" % (os.environ.get("PYTORCH_CUDA_ALLOC_CONF") or "")]
    return timeline, S.trace_text(snap, device, trace_marks, header, capacity=capacity,
                                  max_entries=getattr(reader, "history_entries", None))


def _write_trace(path, text):
    """The trace, gzip-compressed when the path ends in .gz; its file name and event count for the result."""
    import gzip
    data = text.encode()
    with (gzip.open(path, "wb") if path.endswith(".gz") else open(path, "wb")) as f:
        f.write(data)
    events = sum(1 for line in text.splitlines() if line[:2] in ("a ", "r ", "f ", "s ", "x ", "m ", "u ", "o "))
    return {"file": os.path.basename(path), "events": events}


def collect_environment(device, caps, reader=None):
    env = {"device": str(device), "gpu": None, "capability": None, "total_memory_bytes": None,
           "driver": None, "cuda": None, "cudnn": None, "torch": caps.get("torch"),
           "transformers": caps.get("transformers"), "peft": caps.get("peft"),
           "bitsandbytes": caps.get("bitsandbytes"), "liger_kernel": caps.get("liger_kernel"),
           "pynvml": caps.get("pynvml"), "python": platform.python_version(),
           "platform": platform.platform(),
           "pytorch_cuda_alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF")}
    if torch is not None:
        env["cuda"] = torch.version.cuda
        try:
            env["cudnn"] = torch.backends.cudnn.version()
        except Exception:
            pass
        dev = torch.device(device)
        if dev.type == "cuda" and torch.cuda.is_available():
            props = torch.cuda.get_device_properties(dev.index or 0)
            env["gpu"] = props.name
            env["capability"] = "%d.%d" % (props.major, props.minor)
            env["total_memory_bytes"] = int(props.total_memory)
    if reader is not None and hasattr(reader, "driver"):
        env["driver"] = reader.driver()
    return env


def run_probe(config, steps=3, warmup=2, device="cuda", reader=None, caps=None, catalog=None,
              catalog_path=None, impl="reference", seed=0, plan=None, profile_kernels=False, trace_path=None):
    """Translate, build, measure; the result object (Refusal / ProbeError raised). With trace_path, the
    allocator's every event from before the model is built to the end of the last step is written there
    (gzip, the trace format of probe/snapshot_to_json.py) for llmem_trace_replay."""
    caps = detect_capabilities() if caps is None else caps
    plan = plan or translate(config, caps, catalog, catalog_path, impl)
    require_torch()
    conf = plan.get("alloc_conf") or ("expandable_segments:True" if plan["expandable_segments"] else "")
    if conf:  # before the first CUDA allocation (both names: torch < / >= 2.9)
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = conf
        os.environ["PYTORCH_ALLOC_CONF"] = conf
    dev = torch.device(device)
    baseline = None
    if reader is None:
        if dev.type != "cuda" or not torch.cuda.is_available():
            raise ProbeError("measuring needs a CUDA device (none here); --dry-run prints the plan")
        baseline = nvml_used_before_cuda()
        if conf:
            try:
                torch.cuda.memory._set_allocator_settings(conf)
            except Exception:
                pass
        reader = CudaMemory(dev)
    trace_marks = None
    if trace_path:
        if not hasattr(reader, "snapshot"):
            raise ProbeError("--trace-allocator needs the allocator's event history (torch.cuda.memory)")
        if isinstance(reader, CudaMemory):
            reader.start_history(CudaMemory.TRACE_ENTRIES)
        else:
            reader.start_history()
        trace_marks = [{"t_us": _now_us(), "label": "build"}]
    run = build_run(plan, device, seed)
    if plan.get("empty_cache_after_init") and dev.type == "cuda":
        if trace_marks is not None:
            trace_marks.append({"t_us": _now_us(), "label": "empty_cache"})
        torch.cuda.empty_cache()  # what set-up left cached goes back to the driver
    try:
        measured = measure(run, reader, steps, warmup, profile_kernels=profile_kernels, trace_marks=trace_marks)
    finally:
        if run.process_group:
            import torch.distributed as dist
            dist.destroy_process_group()
    measured["device_used_before_bytes"] = baseline
    if trace_path:
        measured["allocator_trace"] = _write_trace(trace_path, measured.pop("_allocator_trace"))
    if getattr(reader, "nvml_error", None) and not measured["device_used_source"].startswith("nvml"):
        measured["device_used_note"] = "NVML unavailable: %s" % reader.nvml_error
    return {
        "ok": True,
        "config": config,
        "measured": measured,
        "environment": collect_environment(dev, caps, reader),
        "probe": {"version": PROBE_VERSION, "impl": plan["impl"], "applied": plan["applied"],
                  "notes": plan["notes"], "params": plan["params"], "layout": plan.get("layout"),
                  "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")},
    }
