#!/usr/bin/env python3
"""A PyTorch memory snapshot as a compact series: allocated and reserved after every event.

    python3 probe/snapshot_to_json.py snapshot.pickle [-o out.json] [--points 2000] [--device 0]
    python3 probe/snapshot_to_json.py snapshot.pickle --trace [-o run.trace]

With --trace the output is the allocator trace that `llmem_trace_replay` reads instead
(every request, free and segment of the recording, in order; format in TRACE_FORMAT below).

The input is what `torch.cuda.memory._dump_snapshot(path)` writes after
`torch.cuda.memory._record_memory_history()` (a pickled dict: "segments" as they
are at the dump, "device_traces" one list of trace entries per device; see
torch/cuda/memory.py `_snapshot` and torch/csrc/cuda/memory_snapshot.cpp). No
torch is needed to read it.

Allocated follows the caching allocator's blocks: + size on "alloc", - size on
"free_completed" (a "free_requested" block stays allocated until its stream's
events complete, as c10/cuda/CUDACachingAllocator.cpp counts it). Reserved
follows the segments: + on "segment_alloc" / "segment_map", - on "segment_free" /
"segment_unmap" (expandable segments map and unmap pages). The trace starts
after memory already in use, so the baseline is recovered from the end state:
the segments at the dump minus the trace's net change. Entries carry "time_us"
(a wall-clock time in microseconds) where the torch that wrote them records it;
the series then carries t_us too.

A pickle can run code when it is loaded: convert only snapshots you made or trust.

Exit status: 0 ok, 2 for a file that cannot be read or is not a snapshot.
"""
from __future__ import annotations

import argparse
import json
import pickle
import sys

ALLOC, FREE = "alloc", "free_completed"
SEGMENT_UP = ("segment_alloc", "segment_map")
SEGMENT_DOWN = ("segment_free", "segment_unmap")
DEFAULT_POINTS = 2000


TRACE_FORMAT = """\
llmem-alloc-trace 1
# one event a line, in the allocator's order; bytes and addresses in decimal
baseline <allocated> <reserved>   what was held when the recording started (recovered from the end)
capacity <bytes>                  what the allocator could hold: free device memory + its reserve (optional)
stream <id> <cuda stream>         the small ids below, numbered in order of first use
mark <label>                      a phase of the run starts here (from the probe's marks); "mark
                                  empty_cache": torch.cuda.empty_cache() (the replay releases there too)
shift <count>                     (llmem's own traces) the live blocks' owners renamed <count> micro-batches
                                  on: the micro-batches of a repeating cycle passed over
a <addr> <bytes> <stream>         alloc: a request of <bytes> (before rounding)
r <addr> <bytes> <stream>         free requested (the block waits for other streams' work)
f <addr> <bytes> <stream>         free completed (the block is back in the cache)
s <addr> <bytes> <stream>         segment alloc (cudaMalloc)       x ...  segment free (cudaFree)
m <addr> <bytes> <stream>         pages mapped (expandable)        u ...  pages unmapped
o <addr> <bytes> <stream>         out of memory
end <allocated> <reserved>        the state at the snapshot"""

TRACE_CODES = {"alloc": "a", "free_requested": "r", "free_completed": "f", "segment_alloc": "s",
               "segment_free": "x", "segment_map": "m", "segment_unmap": "u", "oom": "o"}


class NotASnapshot(ValueError):
    pass


def _check(snapshot):
    if not isinstance(snapshot, dict) or not isinstance(snapshot.get("segments"), list) \
            or not isinstance(snapshot.get("device_traces"), list):
        raise NotASnapshot("not a PyTorch memory snapshot (expected a dict with 'segments' and 'device_traces', "
                           "as torch.cuda.memory._dump_snapshot writes)")


def end_state(snapshot, device):
    """Allocated and reserved bytes of `device` at the dump, from its segments."""
    reserved = allocated = 0
    for seg in snapshot["segments"]:
        if seg.get("device", 0) != device:
            continue
        reserved += int(seg["total_size"])
        for b in seg.get("blocks", []):
            if b.get("state") in ("active_allocated", "active_pending_free"):
                allocated += int(b["size"])
    return allocated, reserved


def _deltas(entry):
    action, size = entry.get("action"), int(entry.get("size", 0))
    if action == ALLOC:
        return size, 0
    if action == FREE:
        return -size, 0
    if action in SEGMENT_UP:
        return 0, size
    if action in SEGMENT_DOWN:
        return 0, -size
    return 0, 0


def recorded(snapshot, device=0):
    """The device's trace entries, what was held before them (allocated, reserved: the end state less the
    trace's net change) and the end state."""
    _check(snapshot)
    traces = snapshot["device_traces"]
    trace = traces[device] if device < len(traces) else []
    a_end, r_end = end_state(snapshot, device)
    a0 = a_end - sum(_deltas(e)[0] for e in trace)
    r0 = r_end - sum(_deltas(e)[1] for e in trace)
    return trace, (a0, r0), (a_end, r_end)


def series(snapshot, device=0):
    """Full-resolution lists: allocated and reserved after every trace entry (and t_us when recorded)."""
    trace, (a, r), _ = recorded(snapshot, device)
    out = {"allocated_bytes": [a], "reserved_bytes": [r], "t_us": [], "baseline": {"allocated_bytes": a, "reserved_bytes": r}}
    times = all("time_us" in e for e in trace) and bool(trace)
    if times:
        out["t_us"].append(trace[0]["time_us"])
    for e in trace:
        x, y = _deltas(e)
        a += x
        r += y
        out["allocated_bytes"].append(a)
        out["reserved_bytes"].append(r)
        if times:
            out["t_us"].append(e["time_us"])
    if not times:
        del out["t_us"]
    return out


def since(snapshot, t_us):
    """The snapshot with each device's trace cut to the entries at or after t_us (the segments kept: the
    baseline of what is left is recovered from them as before)."""
    _check(snapshot)
    cut = [[e for e in trace if e.get("time_us", t_us) >= t_us] for trace in snapshot["device_traces"]]
    return dict(snapshot, device_traces=cut)


def trace_text(snapshot, device=0, marks=(), header=(), capacity=None, max_entries=None):
    """The recording as llmem's allocator trace (TRACE_FORMAT): every event of `device` in order, the marks
    ({"t_us", "label"}) placed before the first event at or after their time, `header` lines as comments,
    the allocator's capacity when known. A recording that filled its `max_entries` lost its first events:
    the trace says so (its marks before the first event kept pile up there)."""
    trace, (a0, r0), (a_end, r_end) = recorded(snapshot, device)
    lines = [TRACE_FORMAT.splitlines()[0]] + ["# " + h for h in header]
    if max_entries and len(trace) >= max_entries:
        lines.append("# truncated: the recording kept its last %d entries; what came before them is lost" % max_entries)
    lines.append("baseline %d %d" % (a0, r0))
    if capacity is not None:
        lines.append("capacity %d" % capacity)
    timed = bool(trace) and all("time_us" in e for e in trace)
    pending = sorted(marks, key=lambda m: m["t_us"]) if timed else []
    if marks and not timed:
        lines.append("# the trace carries no times: its marks are left out")
    streams = {}
    for e in trace:
        code = TRACE_CODES.get(e.get("action"))
        if code is None:
            continue
        while pending and pending[0]["t_us"] <= e["time_us"]:
            lines.append("mark " + pending.pop(0)["label"])
        raw = e.get("stream", 0)
        if raw not in streams:
            streams[raw] = len(streams)
            lines.append("stream %d %s" % (streams[raw], raw))
        lines.append("%s %d %d %d" % (code, int(e.get("addr", 0)), int(e.get("size", 0)), streams[raw]))
    lines += ["mark " + m["label"] for m in pending]
    lines.append("end %d %d" % (a_end, r_end))
    return "\n".join(lines) + "\n"


def downsample(full, points=DEFAULT_POINTS):
    """At most `points` samples: per bucket the first, the highest allocated and the highest reserved (peaks are kept)."""
    n = len(full["allocated_bytes"])
    if n <= points:
        return {k: v for k, v in full.items() if k != "baseline"}
    keep = set([0, n - 1])
    per = max(1, (n + points // 3 - 1) // (points // 3))
    for start in range(0, n, per):
        idx = range(start, min(n, start + per))
        keep.add(start)
        keep.add(max(idx, key=lambda i: full["allocated_bytes"][i]))
        keep.add(max(idx, key=lambda i: full["reserved_bytes"][i]))
    order = sorted(keep)
    return {k: [v[i] for i in order] for k, v in full.items() if k != "baseline"}


def convert(snapshot, device=0, points=DEFAULT_POINTS, phases=None):
    full = series(snapshot, device)
    out = {"source": "torch.cuda.memory._snapshot", "device": device,
           "events": len(full["allocated_bytes"]) - 1, "baseline": full["baseline"],
           "peak_allocated_bytes": max(full["allocated_bytes"]), "peak_reserved_bytes": max(full["reserved_bytes"])}
    out.update(downsample(full, points))
    out["phases"] = list(phases or [])
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("snapshot", help="a pickle from torch.cuda.memory._dump_snapshot")
    ap.add_argument("-o", "--output", help="JSON file (default: standard output)")
    ap.add_argument("--points", type=int, default=DEFAULT_POINTS, help="most samples kept (default %(default)s)")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--trace", action="store_true", help="write the allocator trace llmem_trace_replay reads")
    args = ap.parse_args(argv)
    if args.points < 3:
        ap.error("--points must be at least 3")
    try:
        with open(args.snapshot, "rb") as f:
            snapshot = pickle.load(f)
        text = trace_text(snapshot, args.device) if args.trace else json.dumps(convert(snapshot, args.device, args.points))
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError) as e:
        print("snapshot_to_json: cannot read %s: %s" % (args.snapshot, e), file=sys.stderr)
        return 2
    except (NotASnapshot, KeyError, TypeError, ValueError) as e:
        print("snapshot_to_json: %s: %s" % (args.snapshot, e), file=sys.stderr)
        return 2
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
