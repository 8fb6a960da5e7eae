"""The error promise on ONNX's own operator tests with fuzzed attributes and initializers
(test-only; scripts/fuzz_onnx_attrs.sh runs it). Where tests/onnx_import.rs mutates model
bytes, this keeps every model well-formed and changes what an operator is given: integer
attributes to 0, -1, huge or negative values, lists to random lengths, floats to NaN,
infinity or negatives, an element of a tensor attribute or an initializer to an extreme.
Each model runs through `hwgen run --interp`; it must exit 0 or 1 (refused with a
message), never crash (a panic exits 101).

Usage: fuzz_onnx_attrs.py HWGEN CASES_DIR CASE_LIST PATTERNS [PER_CASE [SEED]]
CASES_DIR and CASE_LIST are what rtl-tests/ref/onnx_node_tests.py writes and prints;
PATTERNS is a comma-separated list of substrings of case names (empty: every case).
"""
import copy
import os
import random
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

INTS = [0, -1, 1, 2, 3, 7, 255, 1 << 20, 2**40, -(2**40), 2**62, -(2**62)]
FLOATS = [float("nan"), float("inf"), -1e30, 0.0, -1.0]


def mutate(m, rng):
    for node in m.graph.node:
        for a in node.attribute:
            r = rng.random()
            if a.type == onnx.AttributeProto.INT and r < 0.5:
                a.i = rng.choice(INTS)
            elif a.type == onnx.AttributeProto.INTS and r < 0.5:
                a.ints[:] = [rng.choice(INTS) for _ in range(rng.randint(0, 6))]
            elif a.type == onnx.AttributeProto.FLOAT and r < 0.5:
                a.f = rng.choice(FLOATS)
            elif a.type == onnx.AttributeProto.TENSOR and r < 0.3:
                arr = numpy_helper.to_array(a.t).copy()
                flat = arr.reshape(-1)
                if flat.size:
                    pick = [5, 100] if arr.dtype.kind in "iu" else [float("nan"), -5.0, 1e9]
                    try:
                        flat[rng.randrange(flat.size)] = rng.choice(pick)
                    except (OverflowError, ValueError, TypeError):
                        pass
                    a.t.CopyFrom(numpy_helper.from_array(arr, a.t.name))
    for init in m.graph.initializer:
        if rng.random() < 0.3:
            arr = numpy_helper.to_array(init).copy()
            flat = arr.reshape(-1)
            if flat.size and arr.dtype.kind in "iuf":
                try:
                    flat[rng.randrange(flat.size)] = rng.choice([-3, 0, 1, 2, 10**6, -(10**6)])
                except (OverflowError, ValueError):
                    pass
                init.CopyFrom(numpy_helper.from_array(arr, init.name))


def main():
    hwgen, cases_dir, case_list, patterns = sys.argv[1:5]
    per_case = int(sys.argv[5]) if len(sys.argv) > 5 else 25
    pats = [p for p in patterns.split(",") if p]
    names = open(case_list).read().split("\n")[0::2]
    names = [n for n in names if n and (not pats or any(p in n for p in pats))]
    rng = random.Random(int(sys.argv[6]) if len(sys.argv) > 6 else 7)
    runs, crashes = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.onnx")
        for name in names:
            d = os.path.join(cases_dir, name)
            x = os.path.join(d, "x.npy")
            if not os.path.exists(x):
                x = os.path.join(d, "x") if os.path.isdir(os.path.join(d, "x")) else "none"
            m0 = onnx.load(os.path.join(d, "model.onnx"))
            for _ in range(per_case):
                m = copy.deepcopy(m0)
                mutate(m, rng)
                onnx.save(m, model)
                out = os.path.join(tmp, "out%d" % runs)
                r = subprocess.run(
                    [hwgen, "run", "--config", "configs/16x16_uint8.toml", "--model", model,
                     "--input", x, "--output", out, "--interp"],
                    capture_output=True, text=True, timeout=120)
                runs += 1
                if r.returncode not in (0, 1):
                    keep = os.path.join(tempfile.gettempdir(), "fuzz_%s_%d.onnx" % (name, runs))
                    onnx.save(m, keep)
                    crashes.append("%s: exit %d (model kept in %s)\n%s" % (name, r.returncode, keep, r.stderr[-600:]))
                    break
    print("%d runs over %d cases, %d crashes" % (runs, len(names), len(crashes)))
    for c in crashes:
        print(c)
    sys.exit(1 if crashes else 0)


if __name__ == "__main__":
    main()
