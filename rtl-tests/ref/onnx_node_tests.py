"""ONNX's own operator tests (onnx.backend.test.case.node, test-only reference), as models
`hwgen run` takes.

Usage: onnx_node_tests.py DIR
For every node test case whose data are plain tensors: DIR/NAME/model.onnx with the first
input as the graph input and the others folded into initializers (their values are the
test's), DIR/NAME/x.npy (the first input), and DIR/NAME/OUTPUT.npy for each graph output,
ONNX's expected value. Prints the case names, one per line, then for each case its output
names on the next line.
"""

import os
import sys
import warnings

import numpy as np
from onnx import TensorProto, numpy_helper, save
import onnx.backend.test.case.node as node_cases


def main():
    root = sys.argv[1]
    warnings.simplefilter("ignore")
    for case in node_cases.collect_testcases(None):
        if case.data_sets is None:
            continue
        model = case.model
        ins, outs = case.data_sets[0]
        g = model.graph
        # Some cases (the casts) give their data as TensorProtos: numpy arrays of the
        # tensor's type (ml_dtypes' for bfloat16 and the 8-, 4- and 2-bit types).
        ins, outs = [
            [numpy_helper.to_array(a) if isinstance(a, TensorProto) else a for a in part]
            for part in (ins, outs)
        ]
        try:
            tensors = [np.asarray(a) for a in list(ins) + list(outs)]
        except ValueError:  # sequences, optionals: not tensors
            continue
        if len(g.input) == 0 or any(t.dtype == object for t in tensors):
            continue
        try:
            inits = [numpy_helper.from_array(np.asarray(a), vi.name) for vi, a in list(zip(g.input, ins))[1:]]
        except Exception:  # a type numpy_helper cannot write: not a case for hwgen
            continue
        first = g.input[0]
        g.initializer.extend(inits)
        del g.input[:]
        g.input.append(first)
        d = os.path.join(root, case.name)
        os.makedirs(d, exist_ok=True)
        save(model, os.path.join(d, "model.onnx"))
        np.save(os.path.join(d, "x.npy"), np.array(ins[0], order="C"))
        names = [o.name for o in g.output]
        for name, o in zip(names, outs):
            np.save(os.path.join(d, "want_" + name + ".npy"), np.array(o, order="C"))
        print(case.name)
        print(" ".join(names))


if __name__ == "__main__":
    main()
