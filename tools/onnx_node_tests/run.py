#!/usr/bin/python3
"""ONNX's own backend node tests (the cases in onnx.backend.test.case.node, shipped with Debian's
python3-onnx) through `tessel run` on the reference interpreter, or compiled with --compiled.

Prints one line per failing case (with --verbose, every case) and a summary: pass rate over all cases,
over the cases whose operators Tessel registers, and over the cases of opsets below 11 (imported
through the ONNX version converter). Usage:
  bazel build //cli:tessel && tools/onnx_node_tests/run.py [--tessel bazel-bin/cli/tessel]
      [--filter SUBSTRING] [--compiled] [--json OUT.json]
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

# onnx 1.12's test-case generators use aliases that numpy 1.24 removed.
for alias, value in (("float", float), ("int", int), ("bool", bool), ("object", object)):
    if not hasattr(np, alias) or alias in ("float", "int", "bool", "object"):
        setattr(np, alias, value)
import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402
from onnx.backend.test.case import node  # noqa: E402


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def default_opset(model):
    versions = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    return versions[0] if versions else 0


def run_case(tessel, case, work, compiled):
    """('pass' | 'fail' | 'unsupported' | 'error', detail)."""
    model_path = os.path.join(work, "model.onnx")
    onnx.save(case.model, model_path)
    graph = case.model.graph
    inits = {i.name for i in graph.initializer}
    inputs = [i for i in graph.input if i.name not in inits]
    for data_index, (in_values, out_values) in enumerate(case.data_sets):
        args = []
        for info, value in zip(inputs, in_values):
            if isinstance(value, np.generic):
                value = np.asarray(value)
            if not isinstance(value, np.ndarray):
                return "error", "non-tensor input (sequence or optional)"
            path = os.path.join(work, "in_%s.npy" % sanitize(info.name))
            np.save(path, value)
            args += ["--input", "%s=%s" % (info.name, path)]
        out_dir = os.path.join(work, "out%d" % data_index)
        target = model_path
        if compiled:
            target = os.path.join(work, "model.tsl")
            c = subprocess.run([tessel, "compile", model_path, "-o", target], capture_output=True, text=True)
            if c.returncode != 0:
                return classify(c.stderr)
        r = subprocess.run([tessel, "run", target, "--output-dir", out_dir] + args, capture_output=True, text=True)
        if r.returncode != 0:
            return classify(r.stderr)
        for info, want in zip(graph.output, out_values):
            if isinstance(want, np.generic):
                want = np.asarray(want)
            if not isinstance(want, np.ndarray):
                return "error", "non-tensor output"
            path = os.path.join(out_dir, sanitize(info.name) + ".npy")
            if not os.path.exists(path):
                return "fail", "no output %s" % info.name
            got = np.load(path)
            if got.shape != want.shape:
                return "fail", "%s: shape %s, want %s" % (info.name, got.shape, want.shape)
            if got.dtype != want.dtype:
                return "fail", "%s: dtype %s, want %s" % (info.name, got.dtype, want.dtype)
            if want.dtype.kind in "fc":
                ok = np.allclose(got, want, rtol=case.rtol, atol=case.atol, equal_nan=True)
            else:
                ok = np.array_equal(got, want)
            if not ok:
                diff = np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))) if want.size else 0
                return "fail", "%s: max |diff| %.3g" % (info.name, diff)
    return "pass", ""


def classify(stderr):
    line = stderr.strip().splitlines()[-1] if stderr.strip() else "(no message)"
    if "unsupported operator type" in line:
        return "unsupported", line
    return "error", line


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tessel", default="bazel-bin/cli/tessel")
    parser.add_argument("--filter", default="", help="only cases whose name contains this")
    parser.add_argument("--compiled", action="store_true", help="compile each case and run the artifact")
    parser.add_argument("--json", help="write every case's outcome here")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    if not os.access(args.tessel, os.X_OK):
        sys.exit("run.py: %s is not an executable (bazel build //cli:tessel first, or --tessel)" % args.tessel)
    cases = [c for c in node.collect_testcases(None) if args.filter in c.name]
    outcomes = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(cases):
            work = os.path.join(tmp, str(i))
            os.makedirs(work)
            status, detail = run_case(args.tessel, case, work, args.compiled)
            ops = sorted({n.op_type for n in case.model.graph.node})
            outcomes[case.name] = {"status": status, "detail": detail, "ops": ops,
                                   "opset": default_opset(case.model)}
            if args.verbose or status != "pass":
                print("%-11s %-60s %s" % (status, case.name, detail[:160]), flush=True)
    count = collections.Counter(o["status"] for o in outcomes.values())
    registered = [o for o in outcomes.values() if o["status"] != "unsupported"]
    old = [o for o in outcomes.values() if o["opset"] < 11]
    rate = lambda xs: (100.0 * sum(o["status"] == "pass" for o in xs) / len(xs)) if xs else 0.0
    print("%d cases: %s" % (len(outcomes), ", ".join("%s %d" % kv for kv in sorted(count.items()))))
    print("pass rate: %.1f%% of all cases, %.1f%% of the %d cases whose operators import, %.1f%% of the %d "
          "opset < 11 cases" % (rate(list(outcomes.values())), rate(registered), len(registered), rate(old), len(old)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(outcomes, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
