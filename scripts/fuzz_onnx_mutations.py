"""Mutated ONNX models through hwgen (scripts/fuzz_onnx_mutations.sh).

Usage: fuzz_onnx_mutations.py HWGEN WORK N SEED SEEDDIR...
Each SEEDDIR holds a valid quantized model.onnx and its xr.npy
(rtl-tests/ref/onnx_quantized.py). N times, a seed model is mutated once:

  bytes      random byte flips, a truncation, bytes inserted or deleted, or a
             length-delimited field's varint length made huge;
  structure  an input dimension 0, negative, 2^31 or 2^62; an initializer removed; an
             initializer's data type changed (its data left as it was); a cycle (a node
             reading its own or a later node's output); an If nested 1000 deep; an
             initializer's data moved to external data outside the model's folder, at an
             absolute path, or past the end of a file; a node duplicated; a node's output
             renamed to an existing name; an opset or IR version ONNX does not define.

then run through `hwgen import` and `hwgen run --interp` (a 60 s limit each). Each must
exit 0, or 1 with an error that names a rule and a fix ("rule:" and "fix:"); a panic, an
abort or other signal, a hang, or a refusal without rule and fix is a failure: printed,
the model kept in WORK/failures/. Prints the counts; exits 1 on any failure.
"""

import os
import random
import re
import shutil
import subprocess
import sys

import onnx
from onnx import TensorProto, helper


def read_varint(data, i):
    """The varint at `i` and the offset after it."""
    v, shift = 0, 0
    while i < len(data):
        b = data[i]
        v |= (b & 0x7F) << shift
        i += 1
        shift += 7
        if b < 0x80:
            break
    return v, i


def varint_positions(data):
    """Offsets of length-delimited fields' length varints at the top level of `data`."""
    out, i = [], 0
    while i < len(data):
        key, j = read_varint(data, i)
        wire = key & 7
        if wire == 2:
            out.append(j)
            n, j = read_varint(data, j)
            i = j + n
        elif wire == 0:
            i = read_varint(data, j)[1]
        elif wire == 1:
            i = j + 8
        elif wire == 5:
            i = j + 4
        else:
            break
    return out


def mutate_bytes(data, rng):
    d = bytearray(data)
    kind = rng.randrange(4)
    if kind == 0:
        for _ in range(rng.randint(1, 8)):
            d[rng.randrange(len(d))] ^= 1 << rng.randrange(8)
        return bytes(d), "flip"
    if kind == 1:
        return bytes(d[: rng.randrange(len(d))]), "truncate"
    if kind == 2:
        at = rng.randrange(len(d))
        if rng.random() < 0.5:
            d[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        else:
            del d[at : at + rng.randint(1, 16)]
        return bytes(d), "insert/delete"
    pos = varint_positions(data)
    if not pos:
        return bytes(d), "varint (none)"
    at = rng.choice(pos)
    huge = rng.choice([b"\xff\xff\xff\xff\x0f", b"\xff\xff\xff\xff\xff\xff\xff\xff\x7f", b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01"])
    j = at
    while j < len(d) and d[j] >= 0x80:
        j += 1
    d[at : j + 1] = huge
    return bytes(d), "varint length"


def field(number, payload):
    """A length-delimited protobuf field."""
    def varint(v):
        out = bytearray()
        while True:
            b = v & 0x7F
            v >>= 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)
    return varint((number << 3) | 2) + varint(len(payload)) + payload


def deep_if_bytes(depth):
    """GraphProto bytes of an If nested `depth` deep, its innermost branch a Constant (written
    by hand: Python's protobuf refuses to nest messages past 100 levels)."""
    out = helper.make_tensor_value_info("o", TensorProto.FLOAT, [1]).SerializeToString()
    leaf = helper.make_graph(
        [helper.make_node("Constant", [], ["o"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))],
        "leaf",
        [],
        [helper.make_tensor_value_info("o", TensorProto.FLOAT, [1])],
    ).SerializeToString()
    g = leaf
    for k in range(depth):
        attrs = b""
        for name, sub in (("then_branch", g), ("else_branch", leaf)):
            # AttributeProto: name (1), g (6), type (20) = GRAPH (5).
            attrs += field(5, field(1, name.encode()) + field(6, sub) + bytes([0xA0, 0x01, 5]))
        node = field(1, b"cond") + field(2, b"o") + field(4, b"If") + attrs
        g = field(1, node) + field(2, f"g{k}".encode()) + field(12, out)
    return g


def mutate_structure(m, rng, folder):
    g = m.graph
    kind = rng.randrange(11)
    if kind == 0 and g.input:
        dims = g.input[0].type.tensor_type.shape.dim
        if dims:
            dims[rng.randrange(len(dims))].dim_value = rng.choice([0, -1, -7, 2**31, 2**62])
        return "input dim"
    if kind == 1 and g.initializer:
        del g.initializer[rng.randrange(len(g.initializer))]
        return "initializer removed"
    if kind == 2 and g.initializer:
        t = g.initializer[rng.randrange(len(g.initializer))]
        t.data_type = rng.choice([1, 2, 3, 5, 6, 7, 9, 10, 11, 16, 17, 8, 14, 99, 0])
        return "initializer type"
    if kind == 3 and len(g.node) > 1:
        a = rng.randrange(len(g.node))
        b = rng.randrange(a, len(g.node))
        n = g.node[a]
        if n.input:
            n.input[rng.randrange(len(n.input))] = g.node[b].output[0]
        return "cycle"
    if kind == 4:
        # Marked here, spliced in as bytes by main: the graph gains an If 1000 deep whose
        # output is a graph output, and its condition.
        g.initializer.append(helper.make_tensor("cond", TensorProto.BOOL, [], [True]))
        g.output.append(helper.make_tensor_value_info("o", TensorProto.FLOAT, [1]))
        return "if 1000 deep"
    if kind == 5 and g.initializer:
        t = g.initializer[rng.randrange(len(g.initializer))]
        raw = t.raw_data or b"\0" * 16
        t.ClearField("raw_data")
        del t.float_data[:]
        del t.int32_data[:]
        del t.int64_data[:]
        t.data_location = TensorProto.EXTERNAL
        where = rng.choice(["../../../etc/passwd", "/etc/passwd", "sub/../../x.bin", "data.bin", "missing.bin", "."])
        if where == "data.bin":
            with open(os.path.join(folder, "data.bin"), "wb") as f:
                f.write(raw)
        entries = [("location", where)]
        if rng.random() < 0.5:
            entries.append(("offset", str(rng.choice([0, 8, 2**40, -1]))))
        if rng.random() < 0.5:
            entries.append(("length", str(rng.choice([0, 1, len(raw), 2**62, -5]))))
        for k, v in entries:
            e = t.external_data.add()
            e.key, e.value = k, v
        return f"external data {where}"
    if kind == 6 and g.node:
        g.node.append(g.node[rng.randrange(len(g.node))])
        return "node duplicated"
    if kind == 7 and len(g.node) > 1:
        a, b = rng.sample(range(len(g.node)), 2)
        g.node[a].output[0] = g.node[b].output[0]
        return "output renamed"
    if kind == 8:
        m.opset_import[0].version = rng.choice([0, 1, 9, 29, 99, -3])
        return "opset"
    if kind == 9:
        m.ir_version = rng.choice([0, 2, 15, 99, 2**62])
        return "ir version"
    if g.node:
        n = g.node[rng.randrange(len(g.node))]
        n.op_type = rng.choice(["NoSuchOp", "Conv", "Loop", "QuantizeLinear", "Reshape", ""])
        return "op type"
    return "none"


def onnx_first_node(graph_bytes):
    """The payload of the first field (field 1, a node) of GraphProto bytes."""
    n, i = read_varint(graph_bytes, 1)
    return graph_bytes[i : i + n]


def run(cmd, cwd):
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "hang", ""
    err = r.stderr
    if r.returncode == 0:
        return "accepted", err
    if r.returncode == 1 and "panicked" not in err:
        # The shape every refusal has (hwgen::refusal::Refusal), without Rust debug text.
        # Notes and warnings may come first; from the first `error:` line on, every block
        # is an error with its rule and fix.
        at = err.find("error: ")
        blocks = re.split(r"(?m)^(?=error: )", err[at:]) if at >= 0 and (at == 0 or err[at - 1] == "\n") else []
        shaped = bool(blocks) and all("\n  rule: " in b and "\n  fix:  " in b for b in blocks if b)
        if shaped and "Some(" not in err and not re.search(r"\b[A-Z]\w* \{ [a-z_]+: ", err):
            return "refused", err
        return "terse", err
    return f"crash (exit {r.returncode})", err


def main():
    hwgen, work, n, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    seeds = sys.argv[5:]
    rng = random.Random(seed)
    os.makedirs(os.path.join(work, "failures"), exist_ok=True)
    counts, failures = {}, 0
    for case in range(n):
        src = rng.choice(seeds)
        folder = os.path.join(work, "case")
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        shutil.copy(os.path.join(src, "xr.npy"), folder)
        path = os.path.join(folder, "model.onnx")
        data = open(os.path.join(src, "model.onnx"), "rb").read()
        if rng.random() < 0.4:
            data, what = mutate_bytes(data, rng)
            open(path, "wb").write(data)
        else:
            m = onnx.load_from_string(data)
            what = mutate_structure(m, rng, folder)
            data = m.SerializeToString()
            if what == "if 1000 deep":
                # The deep If as one more node of the graph (field 7 of the model, repeated
                # field 1 of the graph: appended fields join the message).
                graph = m.graph.SerializeToString()
                deep = deep_if_bytes(1000)
                # The outermost graph's node field, re-wrapped as a node of the model's graph.
                node_bytes = onnx_first_node(deep)
                m.ClearField("graph")
                data = m.SerializeToString() + field(7, graph + field(1, node_bytes))
            open(path, "wb").write(data)
        for cmd in (
            [hwgen, "import", "model.onnx", "-o", "out/model.toml"],
            [hwgen, "run", "-c", CONFIG, "--interp", "-m", "model.onnx", "-i", "xr.npy", "-o", "y.npy"],
        ):
            verdict, err = run(cmd, folder)
            counts[verdict] = counts.get(verdict, 0) + 1
            if os.environ.get("FUZZ_VERBOSE"):
                print(f"case {case} ({what}) {cmd[1]}: {verdict}: {err.strip().splitlines()[-2:] if err.strip() else ''}")
            if verdict in ("accepted", "refused"):
                continue
            failures += 1
            keep = os.path.join(work, "failures", f"{case}_{cmd[1]}.onnx")
            shutil.copy(path, keep)
            print(f"{verdict.upper()}: case {case} ({what}) {cmd[1]}, kept as {keep}:\n{err[-1500:]}")
    print(f"{n} mutated models ({seed=}), {2 * n} commands: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    sys.exit(1 if failures else 0)


CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "configs", "8x8_int8.toml")

main()
