#!/usr/bin/env python3
"""Run the llmem probe over probe/matrix.json and write measured cases.

    python3 probe/run_matrix.py                      # every entry; tests/measured/<id>.json
    python3 probe/run_matrix.py --skip-existing --budget-seconds 540 --bundle $OUT/measured.json
    python3 probe/run_matrix.py --only probe-h200-llama-3.2-1b-mixed-adamw-s4096-b2
    python3 probe/run_matrix.py --plan-only          # translate every entry; no GPU needed
    python3 probe/run_matrix.py --unbundle measured.json   # split a bundle into tests/measured/

Each entry runs in its own process (python3 probe/llmem_probe.py ... -o ...), so
one run's caching allocator, CUDA context or crash cannot touch the next. A
measured run becomes a case in the shape of tests/accuracy/measurements.json
({id, category "measured", confidence "high", source, config, expect, assumptions,
environment, seconds, ...}); an out-of-memory run becomes a lower bound
(relation "ge" on what was allocated when it failed); refused and failed runs are
only reported. tests/accuracy.ts reads tests/measured/*.json (one case or a list).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import llmem_probe as P  # noqa: E402
from llmem_probe.layout import FAKE_PG_LABEL  # noqa: E402

DEFAULT_MATRIX = os.path.join(HERE, "matrix.json")
DEFAULT_OUT = os.path.join(ROOT, "tests", "measured")
GIB = 2 ** 30


def load_matrix(path=DEFAULT_MATRIX):
    with open(path) as f:
        entries = json.load(f)
    if not isinstance(entries, list):
        raise ValueError("%s: the matrix is a JSON list of entries" % path)
    seen = set()
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or not isinstance(e.get("id"), str) or not isinstance(e.get("config"), dict):
            raise ValueError("%s: entry %d needs an id (string) and a config (object)" % (path, i))
        if e["id"] in seen:
            raise ValueError("%s: duplicate id %s" % (path, e["id"]))
        if not all(c.isalnum() or c in "._-" for c in e["id"]):
            raise ValueError("%s: id %s: use letters, digits, '.', '_' and '-'" % (path, e["id"]))
        seen.add(e["id"])
    return entries


def missing_requirements(entry, caps):
    return [r for r in entry.get("requires", []) if not caps.get(r)]


def _gib(x):
    return "n/a" if x is None else "%.2f GiB" % (x / GIB)


def _run_date(result):
    date = (result.get("probe") or {}).get("date")
    return (date or datetime.datetime.now(datetime.timezone.utc).isoformat())[:10]


def assumptions_for(entry, result):
    env = result.get("environment") or {}
    ms = result.get("measured") or {}
    probe = result.get("probe") or {}
    out = ["measured by probe/llmem_probe.py (probe v%s, impl %s) on %s (compute capability %s, %s), "
           "driver %s, CUDA %s, torch %s, transformers %s, peft %s, bitsandbytes %s" % (
               probe.get("version"), probe.get("impl"), env.get("gpu"), env.get("capability"),
               _gib(env.get("total_memory_bytes")), env.get("driver"), env.get("cuda"), env.get("torch"),
               env.get("transformers"), env.get("peft"), env.get("bitsandbytes"))]
    if ms:
        out.append("peak_allocated_bytes = torch.cuda.max_memory_allocated() over %s measured steps after %s "
                   "warm-up steps (optimizer states already allocated); random weights, random token ids"
                   % (ms.get("steps"), ms.get("warmup")))
        out.append("peak_reserved_bytes = torch.cuda.max_memory_reserved() over the same steps; phases: "
                   "reset_peak_memory_stats at forward (incl. loss) / backward / optimizer of the last step")
        out.append("device_used_bytes from %s after the last step (CUDA context, cuBLAS workspace and anything "
                   "else on the GPU; %s in use before the probe created its context)"
                   % (ms.get("device_used_source"), _gib(ms.get("device_used_before_bytes"))))
        if ms.get("allocator_trace"):
            out.append("allocator events recorded from the model's build on (%s, %s events): memory as untraced, "
                       "step time carries the recording's cost" % (ms["allocator_trace"].get("file"),
                                                                    ms["allocator_trace"].get("events")))
        ap = ms.get("attention_path")
        if ap:
            out.append("attention path seen: %s, GQA %s" % (ap.get("kind"), ap.get("gqa")))
    out.extend(probe.get("applied") or [])
    out.extend("note: " + n for n in probe.get("notes") or [])
    if entry.get("note"):
        out.append("matrix: " + entry["note"])
    return out


def kv_repeat_seen(config, ms):
    """The config the run followed: SDPA with enable_gqa may find no kernel at run time (fp32 on the efficient
    kernel); the model then repeats K/V to every head (llmem_probe/model.py Attention.core), which the
    estimate must be told (training.repeat_kv). Returns the assumption that says so, or None."""
    ap = ms.get("attention_path") or {}
    tr = config.setdefault("training", {})
    if ap.get("kind") != "flash" or ap.get("gqa") != "repeat_kv" or tr.get("repeat_kv") is not None:
        return None
    tr["repeat_kv"] = True
    return ("attention path seen: enable_gqa found no kernel (%s), so the model repeated K/V to every head "
            "-> training.repeat_kv true" % (ap.get("gqa_fallback_reason") or "no reason recorded"))


def make_case(entry, result, seconds):
    """A measured case in the shape of tests/accuracy/measurements.json."""
    ms = result["measured"]
    repeated = kv_repeat_seen(result["config"], ms)
    env = result.get("environment") or {}
    layout = (result.get("probe") or {}).get("layout")
    conc = ms.get("concurrent_processes") or 0
    case = {
        "id": entry["id"],
        "category": "measured",
        "confidence": "high",
        "source": "llmem probe%s on %s %s" % (
            " (%s, rank 0 of %d)" % (FAKE_PG_LABEL, layout["world"]) if layout else "",
            env.get("gpu") or "unknown GPU", _run_date(result)),
        "config": result["config"],
        "expect": {"metric": "peak_allocated_bytes", "bytes": ms["peak_allocated_bytes"], "relation": "eq"},
        "expect_alt": [
            {"metric": "peak_reserved_bytes", "bytes": ms["peak_reserved_bytes"], "relation": "eq",
             "note": "same run: torch.cuda.max_memory_reserved()"},
        ],
        "assumptions": assumptions_for(entry, result),
        "v1_gaps": [],
        "record_measurement": {"value": ms["peak_allocated_bytes"], "unit": "bytes",
                               "metric": "torch.cuda.max_memory_allocated() over the measured steps"},
        "environment": env,
        "seconds": round(seconds, 2),
        "measured": ms,
    }
    if layout:
        case["fake_process_group"] = True
    if repeated:
        case["assumptions"].append(repeated)
    if conc:
        case["assumptions"].append(
            "run beside up to %d other probe processes on the same GPU: allocated and reserved are this "
            "process's own counters; its step time was shared with them" % conc)
    device_used_own = ms.get("device_used_source") == "nvml (this process)" or not conc
    if ms.get("device_used_bytes") is not None and not device_used_own:
        case["assumptions"].append("device_used_bytes (%s) is left out: it read the whole GPU while other "
                                   "runs shared it" % ms.get("device_used_source"))
    elif ms.get("device_used_bytes") is not None:
        case["expect_alt"].append({"metric": "device_used_bytes", "bytes": ms["device_used_bytes"],
                                   "relation": "eq", "note": "same run: %s" % ms.get("device_used_source")})
    return case


def make_oom_case(entry, result, seconds):
    """Out of memory: the run needed at least what was allocated when it failed (a lower bound)."""
    err = result.get("error") or {}
    got = err.get("peak_allocated_bytes_until_oom")
    if not got:
        return None
    env = result.get("environment") or {}
    return {
        "id": entry["id"],
        "category": "measured",
        "confidence": "high",
        "source": "llmem probe on %s %s (out of memory)" % (env.get("gpu") or "unknown GPU", _run_date(result)),
        "config": result["config"],
        "expect": {"metric": "peak_allocated_bytes", "bytes": got, "relation": "ge"},
        "assumptions": ["the run failed with CUDA out of memory; torch.cuda.max_memory_allocated() when it failed "
                        "is a lower bound of the peak (device total %s)" % _gib(err.get("total_memory_bytes")),
                        err.get("message", "")] + ([("matrix: " + entry["note"])] if entry.get("note") else []),
        "v1_gaps": [],
        "environment": env,
        "seconds": round(seconds, 2),
    }


class Job:
    """One probe process (python3 probe/llmem_probe.py ... -o ...) of one matrix entry."""

    def __init__(self, entry, python, steps, warmup, workdir, profile_kernels=False, trace_dir=None):
        self.entry = entry
        self.cfg_path = os.path.join(workdir, entry["id"] + ".config.json")
        self.out_path = os.path.join(workdir, entry["id"] + ".result.json")
        self.err_path = os.path.join(workdir, entry["id"] + ".stderr")
        with open(self.cfg_path, "w") as f:
            json.dump(entry["config"], f)
        self.cmd = [python, os.path.join(HERE, "llmem_probe.py"), self.cfg_path, "-o", self.out_path,
                    "--steps", str(entry.get("steps", steps)), "--warmup", str(entry.get("warmup", warmup)),
                    "--impl", entry.get("impl", "reference")] + (["--profile-kernels"] if profile_kernels else [])
        if trace_dir:
            self.cmd += ["--trace-allocator", os.path.join(trace_dir, entry["id"] + ".trace.gz")]
        self.proc = None
        self.t0 = None
        self.others = 0  # the most other probe processes on the GPU at any time during this one

    def start(self):
        if os.path.exists(self.out_path):
            os.unlink(self.out_path)
        self.t0 = time.monotonic()
        with open(self.err_path, "w") as err:
            self.proc = subprocess.Popen(self.cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=ROOT,
                                         env=dict(os.environ, PYTHONUNBUFFERED="1"))

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def outcome(self, timed_out=False):
        """(status, result-or-None, seconds, stderr tail)."""
        seconds = time.monotonic() - self.t0
        rc = None if timed_out else self.proc.returncode
        with open(self.err_path) as f:
            tail = f.read()[-2000:]
        if timed_out:
            tail = "timed out after %.0f s; %s" % (seconds, tail[-1000:])
        result = None
        if os.path.exists(self.out_path):
            try:
                with open(self.out_path) as f:
                    result = json.load(f)
            except ValueError:
                result = None
        status = {0: "ok", P.EXIT_REFUSED: "refused", P.EXIT_OOM: "oom", None: "timeout"}.get(rc, "error")
        if status == "ok" and not (result and result.get("ok")):
            status = "error"
        return status, result, seconds, tail


def hint_bytes(entry):
    """What the scheduler sets aside on the GPU for an entry: its "hint_gib" (llmem's reserved estimate
    plus the CUDA context, written into the matrix beforehand), never a measurement."""
    return float(entry.get("hint_gib", 40)) * GIB


def write_case(case, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, case["id"] + ".json")
    with open(path, "w") as f:
        json.dump(case, f, indent=1)
        f.write("\n")
    return path


def _write_json(path, data):
    """Written whole or not at all (a run stopped at its limit leaves the last complete file)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def unbundle(bundle, out_dir):
    with open(bundle) as f:
        cases = json.load(f)
    for c in cases if isinstance(cases, list) else [cases]:
        print(write_case(c, out_dir))
    return 0


def plan_only(entries, caps):
    rc = 0
    for e in entries:
        miss = missing_requirements(e, caps)
        try:
            plan = P.translate(e["config"], caps, impl=e.get("impl", "reference"))
            status = "ok   %s params" % "{:,}".format(plan["params"]["total"])
        except P.Refusal as r:
            status, rc = "REFUSED %s" % r, 1
        print("%-58s %s%s" % (e["id"], status, "  (needs %s here)" % ", ".join(miss) if miss else ""))
    return rc


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--matrix", default=DEFAULT_MATRIX)
    ap.add_argument("--out", default=DEFAULT_OUT, help="folder for <id>.json cases (default tests/measured)")
    ap.add_argument("--only", default="", help="comma-separated ids")
    ap.add_argument("--skip-existing", action="store_true", help="skip ids whose case file exists in --out")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--profile-kernels", action="store_true",
                    help="each probe profiles one more step: GPU time by kernel class (alone on the GPU to mean much)")
    ap.add_argument("--trace-dir", default=None,
                    help="write each entry's allocator trace (<id>.trace.gz, every event from the model's build on) here")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per entry")
    ap.add_argument("--budget-seconds", type=float, default=0,
                    help="start no new entry after this many seconds (0: no budget)")
    ap.add_argument("--deadline-seconds", type=float, default=0,
                    help="stop every running entry after this many seconds (0: none)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="probe processes at once on the one GPU (memory counters are per process; step "
                         "times of rows run beside others are recorded with concurrent_processes)")
    ap.add_argument("--gpu-gib", type=float, default=130,
                    help="with --jobs > 1: start an entry only while the running entries' hint_gib sum stays "
                         "under this")
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs the probe")
    ap.add_argument("--bundle", help="also write every case of this run into one JSON list here")
    ap.add_argument("--summary", help="write the per-entry status list (JSON) here")
    ap.add_argument("--plan-only", action="store_true", help="translate every entry and stop (no GPU)")
    ap.add_argument("--assume", action="append", default=[], choices=P.OPTIONAL_PACKAGES + ("all",),
                    help="with --plan-only: plan as if this optional package were installed")
    ap.add_argument("--unbundle", help="split a --bundle file into --out and stop")
    args = ap.parse_args(argv)
    if args.trace_dir:
        args.trace_dir = os.path.abspath(args.trace_dir)
        os.makedirs(args.trace_dir, exist_ok=True)

    if args.unbundle:
        return unbundle(args.unbundle, args.out)
    entries = load_matrix(args.matrix)
    if args.only:
        want = [x.strip() for x in args.only.split(",") if x.strip()]
        unknown = [x for x in want if x not in {e["id"] for e in entries}]
        if unknown:
            ap.error("--only: unknown ids %s" % ", ".join(unknown))
        entries = [e for e in entries if e["id"] in want]
    caps = P.detect_capabilities()
    if args.plan_only:
        return plan_only(entries, P.dry_run_capabilities(caps, args.assume))

    start = time.monotonic()
    rows, cases = {}, []
    order = [e["id"] for e in entries]
    todo = []
    for e in entries:
        if args.skip_existing and os.path.exists(os.path.join(args.out, e["id"] + ".json")):
            rows[e["id"]] = {"id": e["id"], "status": "exists"}
        elif missing_requirements(e, caps):
            rows[e["id"]] = {"id": e["id"], "status": "skipped: needs %s" % ", ".join(missing_requirements(e, caps))}
        else:
            todo.append(e)

    def save():
        ordered = [rows[i] for i in order if i in rows]
        if args.bundle:
            _write_json(args.bundle, sorted(cases, key=lambda c: order.index(c["id"])))
        if args.summary:
            _write_json(args.summary, ordered)

    def finish(job, timed_out=False):
        e = job.entry
        status, result, seconds, tail = job.outcome(timed_out)
        if status == "oom" and job.others and not e.get("_alone"):
            todo.append(dict(e, _alone=True))  # maybe only because others held the GPU: again, alone, at the end
            print("%-58s oom beside %d other runs: again alone at the end" % (e["id"], job.others), flush=True)
            return
        row = {"id": e["id"], "status": status, "seconds": round(seconds, 1), "concurrent_processes": job.others}
        case = None
        if status == "ok":
            result["measured"]["concurrent_processes"] = job.others
            case = make_case(e, result, seconds)
            ms = result["measured"]
            row.update(peak_allocated_bytes=ms["peak_allocated_bytes"], peak_reserved_bytes=ms["peak_reserved_bytes"],
                       device_used_bytes=ms["device_used_bytes"], step_seconds=ms["step_seconds"])
        elif status == "oom" and result:
            case = make_oom_case(e, result, seconds)
            row["message"] = (result.get("error") or {}).get("message")
        else:
            row["message"] = ((result or {}).get("error") or {}).get("message") or tail.strip()[-600:]
        if case:
            row["case"] = write_case(case, args.out)
            cases.append(case)
        rows[e["id"]] = row
        print("%-58s %-8s %s" % (row["id"], row["status"], "  ".join(
            "%s %s" % (k.replace("_bytes", ""), _gib(row[k])) for k in
            ("peak_allocated_bytes", "peak_reserved_bytes", "device_used_bytes") if k in row)
            + ("  %.3f s/step, %.0f s, %d beside" % (row["step_seconds"], row["seconds"], job.others)
               if "step_seconds" in row else ("  " + str(row.get("message", ""))[:400] if row.get("message") else ""))),
            flush=True)
        save()

    capacity = args.gpu_gib * GIB
    running = []
    with tempfile.TemporaryDirectory(prefix="llmem-matrix-") as work:
        while todo or running:
            now = time.monotonic() - start
            if args.deadline_seconds and now > args.deadline_seconds:
                for job in running:
                    job.kill()
                    finish(job, timed_out=True)
                running = []
                break
            open_ = not (args.budget_seconds and now > args.budget_seconds)
            alone = any(j.entry.get("_alone") for j in running)
            while open_ and todo and len(running) < args.jobs and not alone:
                held = sum(hint_bytes(j.entry) for j in running)
                pick = next((e for e in todo if (not running or held + hint_bytes(e) <= capacity)
                             and not (e.get("_alone") and running)), None)
                if pick is None:
                    break
                todo.remove(pick)
                job = Job(pick, args.python, args.steps, args.warmup, work, args.profile_kernels, args.trace_dir)
                job.start()
                running.append(job)
                alone = bool(pick.get("_alone"))
            for j in running:
                j.others = max(j.others, len(running) - 1)
            if not open_ and not running:
                break
            time.sleep(0.2)
            for job in list(running):
                if job.proc.poll() is not None:
                    running.remove(job)
                    finish(job)
                elif time.monotonic() - job.t0 > args.timeout:
                    job.kill()
                    running.remove(job)
                    finish(job, timed_out=True)
        for e in todo:
            rows.setdefault(e["id"], {"id": e["id"], "status": "not run (budget)"})
    save()
    rows = [rows[i] for i in order if i in rows]
    done = sum(1 for r in rows if r["status"] == "ok")
    print("%d of %d entries measured in %.0f s" % (done, len(rows), time.monotonic() - start))
    return 0 if all(r["status"] in ("ok", "exists", "not run (budget)") or r["status"].startswith("skipped")
                    for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
