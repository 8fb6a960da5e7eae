"""ONNX's own operator tests (onnx.backend.test.case.node, test-only reference), as models
`hwgen run` takes.

Usage: onnx_node_tests.py DIR
For every node test case whose data are tensors (the first input and the outputs may also
be sequences): DIR/NAME/model.onnx with the first input as the graph input and the others
folded into initializers (their values are the test's), DIR/NAME/x.npy (the first input;
a sequence as the directory DIR/NAME/x of 0.npy, 1.npy, ...; an empty optional as
nothing), and DIR/NAME/want_OUTPUT.npy (or the directory want_OUTPUT) for each graph
output, ONNX's expected value. Prints the case names, one per line, then for each case its output
names on the next line.
"""

import os
import sys
import warnings

import numpy as np
from onnx import TensorProto, numpy_helper
from onnx import save as onnx_save
import onnx.backend.test.case.node as node_cases


def save(base, a):
    """A tensor as BASE.npy; a sequence (a list) as the directory BASE holding 0.npy, ..."""
    if isinstance(a, list):
        os.makedirs(base, exist_ok=True)
        for k, t in enumerate(a):
            np.save(os.path.join(base, "%d.npy" % k), np.array(t, order="C"))
    else:
        np.save(base + ".npy", np.array(a, order="C"))


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
        conv = lambda a: numpy_helper.to_array(a) if isinstance(a, TensorProto) else a
        ins, outs = [[conv(a) for a in part] for part in (ins, outs)]
        # The first input may be a sequence (a list of tensors) or an empty optional
        # (None, written as nothing: hwgen run takes `none`); the other inputs become
        # initializers, so must be tensors; outputs are tensors or sequences.
        def plain(a):
            return not isinstance(a, list) and a is not None and np.asarray(a).dtype != object
        first_ok = ins and (ins[0] is None or plain(ins[0]) or
                            (isinstance(ins[0], list) and all(plain(t) for t in ins[0])))
        outs_ok = all(plain(o) or (isinstance(o, list) and all(plain(t) for t in o)) for o in outs)
        if len(g.input) == 0 or not first_ok or not outs_ok or not all(plain(a) for a in ins[1:]):
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
        onnx_save(model, os.path.join(d, "model.onnx"))
        if ins[0] is not None:
            save(os.path.join(d, "x"), ins[0])
        names = [o.name for o in g.output]
        for name, o in zip(names, outs):
            save(os.path.join(d, "want_" + name), o)
        print(case.name)
        print(" ".join(names))


if __name__ == "__main__":
    main()
