"""Fuzzed quantized graphs through hwgen (scripts/fuzz_onnx_graphs.sh).

Usage: fuzz_onnx_graphs.py HWGEN DIR N SEED
DIR holds model.onnx and xr.npy (rtl-tests/ref/onnx_quantized.py). N times, one to three
mutations (a Reshape's shape, a Transpose's perm, a Softmax/LayerNormalization/ReduceMean
axis or epsilon, an input dimension, a scale, a zero point, a node's two inputs swapped),
then `hwgen import` and `hwgen run --interp --json` on the row design: each must exit 0 or
1 (refused with a message), never crash. Prints each crash (the graph kept in
target/fuzz-crashes/) and a summary; exits 1 on any.
"""

import copy
import os
import random
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def mutate(m, rng):
    g = m.graph
    inits = lambda suffix: [t for t in g.initializer if t.name.endswith(suffix)]
    kind = rng.randint(0, 6)
    if kind == 0 and inits("shape"):
        t = rng.choice(inits("shape"))
        a = numpy_helper.to_array(t).copy()
        a[rng.randrange(len(a))] = rng.choice([0, -1, -2, 1, 2, 3, 7, 16, 32, 10**12])
        t.CopyFrom(numpy_helper.from_array(a, t.name))
    elif kind == 1:
        ns = [x for x in g.node if x.op_type == "Transpose"]
        if ns:
            x = rng.choice(ns)
            p = list(x.attribute[0].ints)
            rng.shuffle(p)
            if rng.random() < 0.3:
                p = p[:-1]
            if rng.random() < 0.2:
                p[0] = 9
            del x.attribute[:]
            x.attribute.append(helper.make_attribute("perm", p))
    elif kind == 2:
        ns = [x for x in g.node if x.op_type in ("Softmax", "LayerNormalization", "ReduceMean")]
        if ns:
            for a in rng.choice(ns).attribute:
                if a.name == "axis":
                    a.i = rng.choice([-3, -2, -1, 0, 1, 2, 5])
                if a.name == "axes":
                    a.ints[:] = [rng.choice([-1, 0, 1, 2, 7])]
                if a.name == "epsilon":
                    a.f = rng.choice([0.0, -1.0, 1e30, float("nan")])
    elif kind == 3:
        d = g.input[0].type.tensor_type.shape.dim
        d[rng.randrange(len(d))].dim_value = rng.choice([0, 1, 2, 3, 16, 17, 1000])
    elif kind == 4 and inits("scale"):
        t = rng.choice(inits("scale"))
        a = numpy_helper.to_array(t).copy()
        a.flat[0] = rng.choice([0.0, -1.0, 1e-30, 1e30, float("inf"), float("nan")])
        t.CopyFrom(numpy_helper.from_array(a, t.name))
    elif kind == 5:
        x = rng.choice(list(g.node))
        if len(x.input) >= 2:
            x.input[0], x.input[1] = x.input[1], x.input[0]
    elif inits("zero_point"):
        t = rng.choice(inits("zero_point"))
        a = numpy_helper.to_array(t).copy()
        a.flat[0] = rng.choice([-128, 127, 0, 5])
        t.CopyFrom(numpy_helper.from_array(a, t.name))


def main():
    hwgen, d, n, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    base = onnx.load(f"{d}/model.onnx")
    rng = random.Random(seed)
    crashes = 0
    for k in range(n):
        m = copy.deepcopy(base)
        for _ in range(rng.randint(1, 3)):
            mutate(m, rng)
        path = f"{d}/mutated.onnx"
        onnx.save(m, path)
        for cmd in (
            ["import", path, "-o", f"{d}/mutated.toml"],
            ["run", "-c", "rtl-tests/configs/8x8_int8_rows.toml", "-m", path, "-i", f"{d}/xr.npy",
             "-o", f"{d}/y.npy", "--interp", "--json"],
        ):
            r = subprocess.run([hwgen] + cmd, capture_output=True, text=True, timeout=600)
            if r.returncode not in (0, 1) or "panicked" in r.stderr:
                crashes += 1
                os.makedirs("target/fuzz-crashes", exist_ok=True)
                keep = f"target/fuzz-crashes/{os.path.basename(d)}_{seed}_{k}.onnx"
                onnx.save(m, keep)
                print(f"CRASH {keep} ({cmd[0]}), exit {r.returncode}:\n{r.stderr[-2000:]}")
    print(f"{os.path.basename(d)}: {n} mutated graphs, {crashes} crashes")
    sys.exit(1 if crashes else 0)


if __name__ == "__main__":
    main()
