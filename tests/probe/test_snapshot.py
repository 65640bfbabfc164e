"""probe/snapshot_to_json.py on synthetic snapshots in torch's format (no GPU, no torch)."""
import json
import os
import pickle
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, "..", "..", "probe")
sys.path.insert(0, PROBE)
import snapshot_to_json as S  # noqa: E402

MIB = 2 ** 20


def snapshot():
    """Before recording: one 20 MiB segment with a 4 MiB block live. Then: alloc 8 MiB, a new 2 MiB segment
    with a 1 MiB block, free the 8 MiB block (requested, then completed), free the new segment's block and
    release the segment."""
    trace = [
        {"action": "alloc", "addr": 100, "size": 8 * MIB, "stream": 0, "time_us": 10},
        {"action": "segment_alloc", "addr": 500, "size": 2 * MIB, "stream": 0, "time_us": 11},
        {"action": "alloc", "addr": 500, "size": 1 * MIB, "stream": 0, "time_us": 12},
        {"action": "free_requested", "addr": 100, "size": 8 * MIB, "stream": 0, "time_us": 13},
        {"action": "free_completed", "addr": 100, "size": 8 * MIB, "stream": 0, "time_us": 14},
        {"action": "free_completed", "addr": 500, "size": 1 * MIB, "stream": 0, "time_us": 15},
        {"action": "segment_free", "addr": 500, "size": 2 * MIB, "stream": 0, "time_us": 16},
    ]
    segments = [{"device": 0, "address": 0, "total_size": 20 * MIB, "stream": 0, "segment_type": "large",
                 "blocks": [{"size": 4 * MIB, "state": "active_allocated"}, {"size": 16 * MIB, "state": "inactive"}]},
                {"device": 1, "address": 0, "total_size": 2 * MIB, "blocks": []}]
    return {"segments": segments, "device_traces": [trace, []]}


class Snapshot(unittest.TestCase):
    def test_series_follows_blocks_and_segments_from_the_recovered_baseline(self):
        s = S.series(snapshot())
        self.assertEqual(s["baseline"], {"allocated_bytes": 4 * MIB, "reserved_bytes": 20 * MIB})
        self.assertEqual([x // MIB for x in s["allocated_bytes"]], [4, 12, 12, 13, 13, 5, 4, 4])
        self.assertEqual([x // MIB for x in s["reserved_bytes"]], [20, 20, 22, 22, 22, 22, 22, 20])
        self.assertEqual(s["t_us"], [10, 10, 11, 12, 13, 14, 15, 16])

    def test_convert_reports_peaks_and_keeps_them_when_downsampling(self):
        snap = snapshot()
        base = snap["device_traces"][0]
        big = []
        for i in range(3000):  # a saw-tooth; one spike in the middle
            size = (64 if i == 1501 else 1) * MIB
            big.append({"action": "alloc", "addr": i, "size": size, "time_us": 100 + 2 * i})
            big.append({"action": "free_completed", "addr": i, "size": size, "time_us": 101 + 2 * i})
        snap["device_traces"][0] = base + big
        out = S.convert(snap, points=300)
        self.assertLessEqual(len(out["allocated_bytes"]), 300)
        self.assertEqual(out["peak_allocated_bytes"], 4 * MIB + 64 * MIB)
        self.assertIn(out["peak_allocated_bytes"], out["allocated_bytes"])
        self.assertEqual(len(out["t_us"]), len(out["allocated_bytes"]))
        self.assertEqual(out["events"], len(base) + 6000)

    def test_without_time_stamps_the_series_has_no_t_us(self):
        snap = snapshot()
        for e in snap["device_traces"][0]:
            del e["time_us"]
        self.assertNotIn("t_us", S.convert(snap))

    def test_cli_writes_json_and_refuses_what_is_not_a_snapshot(self):
        with tempfile.TemporaryDirectory() as d:
            good, bad, out = os.path.join(d, "s.pickle"), os.path.join(d, "x.pickle"), os.path.join(d, "o.json")
            with open(good, "wb") as f:
                pickle.dump(snapshot(), f)
            with open(bad, "wb") as f:
                pickle.dump([1, 2, 3], f)
            script = os.path.join(PROBE, "snapshot_to_json.py")
            r = subprocess.run([sys.executable, script, good, "-o", out], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                self.assertEqual(json.load(f)["peak_reserved_bytes"], 22 * MIB)
            r = subprocess.run([sys.executable, script, bad], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("not a PyTorch memory snapshot", r.stderr)
            r = subprocess.run([sys.executable, script, os.path.join(d, "missing.pickle")], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertNotIn("Traceback", r.stderr)

    def test_trace_lists_every_event_with_streams_numbered_and_marks_placed_by_time(self):
        snap = snapshot()
        snap["device_traces"][0][2]["stream"] = 77  # the block of the new segment on a second stream
        snap["device_traces"][0].insert(3, {"action": "snapshot", "addr": 0, "size": 0, "stream": 0, "time_us": 12})
        marks = [{"t_us": 11, "label": "step 1 forward 0"}, {"t_us": 5, "label": "build"},
                 {"t_us": 99, "label": "late"}]
        lines = S.trace_text(snap, marks=marks, header=["torch test"]).splitlines()
        self.assertEqual(lines, [
            "llmem-alloc-trace 1", "# torch test", "baseline %d %d" % (4 * MIB, 20 * MIB),
            "mark build", "stream 0 0", "a 100 %d 0" % (8 * MIB),
            "mark step 1 forward 0", "s 500 %d 0" % (2 * MIB),
            "stream 1 77", "a 500 %d 1" % MIB,
            "r 100 %d 0" % (8 * MIB), "f 100 %d 0" % (8 * MIB), "f 500 %d 0" % MIB, "x 500 %d 0" % (2 * MIB),
            "mark late", "end %d %d" % (4 * MIB, 20 * MIB)])

    def test_trace_carries_the_capacity_and_says_when_the_recording_was_cut(self):
        snap = snapshot()
        full = S.trace_text(snap, capacity=80 * MIB, max_entries=len(snap["device_traces"][0]))
        self.assertIn("capacity %d\n" % (80 * MIB), full)
        self.assertIn("# truncated: the recording kept its last 7 entries", full)
        self.assertNotIn("truncated", S.trace_text(snap, max_entries=1000))
        self.assertNotIn("capacity", S.trace_text(snap))

    def test_trace_without_times_leaves_its_marks_out_and_says_so(self):
        snap = snapshot()
        for e in snap["device_traces"][0]:
            del e["time_us"]
        text = S.trace_text(snap, marks=[{"t_us": 1, "label": "build"}])
        self.assertNotIn("mark build", text)
        self.assertIn("# the trace carries no times", text)

    def test_since_cuts_the_trace_and_keeps_the_baseline_consistent(self):
        cut = S.series(S.since(snapshot(), 14))
        self.assertEqual(cut["baseline"], {"allocated_bytes": 13 * MIB, "reserved_bytes": 22 * MIB})
        self.assertEqual([x // MIB for x in cut["allocated_bytes"]], [13, 5, 4, 4])

    def test_cli_writes_the_trace(self):
        with tempfile.TemporaryDirectory() as d:
            good, out = os.path.join(d, "s.pickle"), os.path.join(d, "o.trace")
            with open(good, "wb") as f:
                pickle.dump(snapshot(), f)
            script = os.path.join(PROBE, "snapshot_to_json.py")
            r = subprocess.run([sys.executable, script, good, "--trace", "-o", out], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                text = f.read()
            self.assertTrue(text.startswith("llmem-alloc-trace 1\n"))
            self.assertEqual(sum(1 for line in text.splitlines() if line[:2] in ("a ", "f ", "s ", "x ", "r ")), 7)


if __name__ == "__main__":
    unittest.main()
