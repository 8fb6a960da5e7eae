"""The exact, machine-independent reference for quantized ONNX graphs (test-only).

ONNX Runtime's integer kernels depend on the CPU (without AVX-512 VNNI its uint8 x int8
path saturates 16-bit pair sums), and its fused and unfused sessions differ from each
other, so the tests take their expected values from here instead:

- ONNX's own reference implementation (`onnx.reference.ReferenceEvaluator`, numpy):
  QuantizeLinear and DequantizeLinear in float32 as the operator definitions say (each
  step one IEEE operation, the same on every CPU), and QLinearConv and QLinearMatMul as
  the exact integer sum times the float32 multiplier (numpy's integer matmul is exact);
- the float operators whose result depends on the order of a sum or on a SIMD `exp`
  (Conv, ConvTranspose, Gemm, MatMul, the average pools, Softmax) computed in float64 on
  the float32 inputs and rounded once to float32: the operator's value correctly rounded
  (up to float64's own last bit), where numpy's float32 BLAS and exp kernels differ
  between CPUs;
- ONNX Runtime's quantized contrib operators (domain com.microsoft, which the reference
  implementation does not have) as the QDQ graphs they fuse, each step as above:
  QLinearAdd, QLinearMul, QLinearConcat, QLinearSoftmax, QLinearAveragePool and
  QLinearGlobalAveragePool are DequantizeLinear, the float operator, QuantizeLinear;
  QGemm is computed as the reference computes QLinearMatMul (the exact integer sum, with
  its int32 bias, times the float32 multiplier).

`run(model_path, feeds)` returns the graph outputs as a list of numpy arrays.
"""

from __future__ import annotations

import numpy as np
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun
from onnx.reference.ops.op_average_pool import AveragePool_19
from onnx.reference.ops.op_conv import Conv as _Conv
from onnx.reference.ops.op_conv_transpose import ConvTranspose as _ConvTranspose
from onnx.reference.ops.op_dequantize_linear import DequantizeLinear_25
from onnx.reference.ops.op_gemm import Gemm_7
from onnx.reference.ops.op_global_average_pool import GlobalAveragePool as _GlobalAveragePool
from onnx.reference.ops.op_matmul import MatMul as _MatMul
from onnx.reference.ops.op_softmax import Softmax as _Softmax


def _wide(a):
    return a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype == np.float32 else a


def _rounded_once(base):
    """`base` computed in float64 on float32 inputs, each output rounded once to float32."""

    class Op(base):
        def _run(self, *args, **kwargs):
            narrow = any(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in args)
            out = base._run(self, *(_wide(a) for a in args), **kwargs)
            if not narrow:
                return out
            return tuple(o.astype(np.float32) if isinstance(o, np.ndarray) else o for o in out)

    return Op


def _named(cls, name, domain=""):
    return type(name, (cls,), {"op_domain": domain})


# ONNX's reference implementation has DequantizeLinear from opset 19 only; for int8 and
# uint8 tensors, per tensor or per axis, opset 13's operator is the same.
QDQ_OPS = [_named(DequantizeLinear_25, "DequantizeLinear")]

FLOAT_OPS = [
    _named(_rounded_once(b), n)
    for b, n in [
        (_Conv, "Conv"),
        (_ConvTranspose, "ConvTranspose"),
        (Gemm_7, "Gemm"),
        (_MatMul, "MatMul"),
        (AveragePool_19, "AveragePool"),
        (_GlobalAveragePool, "GlobalAveragePool"),
        (_Softmax, "Softmax"),
    ]
]


def _scalar(v, dtype=np.float32):
    return np.asarray(v, dtype=dtype).reshape(-1)[0] if v is not None else dtype(0)


def dequantize(x, scale, zero):
    """DequantizeLinear (per tensor) as ONNX's reference computes it: (x - zero) * scale,
    each in float32."""
    return (x.astype(np.float32) - np.float32(_scalar(zero, np.int64))) * np.float32(_scalar(scale))


def quantize(v, scale, zero, dtype):
    """QuantizeLinear (per tensor) as ONNX's reference computes it: v / scale in float32,
    rounded half to even, plus zero, saturated to `dtype`."""
    q = np.rint(v.astype(np.float32) / np.float32(_scalar(scale))).astype(np.int64) + int(_scalar(zero, np.int64))
    info = np.iinfo(dtype)
    return np.clip(q, info.min, info.max).astype(dtype)


def _out_type(zero, x):
    return np.asarray(zero).dtype if zero is not None else x.dtype


class _Contrib(OpRun):
    op_domain = "com.microsoft"


class QLinearAdd(_Contrib):
    """DequantizeLinear of both, Add in float32, QuantizeLinear (the QDQ graph it fuses)."""

    def _run(self, a, sa, za, b, sb, zb, sc, zc=None):
        return (quantize(dequantize(a, sa, za) + dequantize(b, sb, zb), sc, zc, _out_type(zc, a)),)


class QLinearMul(_Contrib):
    """DequantizeLinear of both, Mul in float32, QuantizeLinear."""

    def _run(self, a, sa, za, b, sb, zb, sc, zc=None):
        return (quantize(dequantize(a, sa, za) * dequantize(b, sb, zb), sc, zc, _out_type(zc, a)),)


class QLinearConcat(_Contrib):
    """DequantizeLinear of each input, Concat, QuantizeLinear."""

    def _run(self, sy, zy, *inputs, axis=None):
        parts = [dequantize(*inputs[k : k + 3]) for k in range(0, len(inputs), 3)]
        return (quantize(np.concatenate(parts, axis=axis), sy, zy, np.asarray(zy).dtype),)


class QLinearSoftmax(_Contrib):
    """DequantizeLinear, Softmax along `axis` (opset 13 and later; before, over the axes
    from `axis` on) in float64 rounded once to float32, QuantizeLinear."""

    def _run(self, x, sx, zx, sy, zy=None, axis=None, opset=None):
        axis = -1 if axis is None else axis
        v = dequantize(x, sx, zx).astype(np.float64)
        shape = v.shape
        if opset is not None and opset < 13:
            v = v.reshape(int(np.prod(shape[:axis])), -1)
            axis = 1
        e = np.exp(v - v.max(axis=axis, keepdims=True))
        y = (e / e.sum(axis=axis, keepdims=True)).reshape(shape).astype(np.float32)
        return (quantize(y, sy, zy, _out_type(zy, x)),)


class QLinearAveragePool(_Contrib):
    """DequantizeLinear, AveragePool with the padding counted (count_include_pad = 1; the
    only form these tests make) in float64 rounded once to float32, QuantizeLinear."""

    def _run(
        self,
        x,
        sx,
        zx,
        sy,
        zy=None,
        auto_pad=None,
        ceil_mode=None,
        channels_last=None,
        count_include_pad=None,
        kernel_shape=None,
        pads=None,
        strides=None,
    ):
        if channels_last or ceil_mode or auto_pad not in (None, "NOTSET"):
            raise NotImplementedError("QLinearAveragePool: channels_last, ceil_mode, auto_pad")
        top, left, bottom, right = pads if pads else (0, 0, 0, 0)
        if (top or left or bottom or right) and not count_include_pad:
            raise NotImplementedError("QLinearAveragePool: padding without count_include_pad")
        (kh, kw), (sh, sw) = kernel_shape, strides if strides else (1, 1)
        v = np.pad(dequantize(x, sx, zx).astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)))
        oh, ow = (v.shape[2] - kh) // sh + 1, (v.shape[3] - kw) // sw + 1
        y = np.zeros(v.shape[:2] + (oh, ow))
        for i in range(oh):
            for j in range(ow):
                y[:, :, i, j] = v[:, :, i * sh : i * sh + kh, j * sw : j * sw + kw].sum(axis=(2, 3)) / (kh * kw)
        return (quantize(y.astype(np.float32), sy, zy, _out_type(zy, x)),)


class QLinearGlobalAveragePool(_Contrib):
    """DequantizeLinear, GlobalAveragePool in float64 rounded once to float32,
    QuantizeLinear."""

    def _run(self, x, sx, zx, sy, zy=None, channels_last=None):
        if channels_last:
            raise NotImplementedError("QLinearGlobalAveragePool: channels_last")
        v = dequantize(x, sx, zx).astype(np.float64)
        y = v.mean(axis=tuple(range(2, x.ndim)), keepdims=True).astype(np.float32)
        return (quantize(y, sy, zy, _out_type(zy, x)),)


class QGemm(_Contrib):
    """As ONNX's reference computes QLinearMatMul: the exact integer sum of (A - za)(B - zb)
    plus the int32 bias C (at scale sa sb), times the float32 multiplier alpha sa sb / sy,
    rounded half to even, plus zy, saturated; without y_scale, that sum times alpha sa sb
    in float32."""

    def _run(self, a, sa, za, b, sb, zb, c=None, sy=None, zy=None, alpha=None, transA=None, transB=None):
        A = a.astype(np.int64) - int(_scalar(za, np.int64))
        B = b.astype(np.int64)
        if transA:
            A = A.T
        if transB:
            B = B.T
        # b_zero_point and b_scale: one per tensor or one per output column.
        B = B - np.asarray(zb if zb is not None else 0, dtype=np.int64).reshape(1, -1)
        acc = A @ B
        if c is not None:
            acc = acc + c.astype(np.int64)
        scale = np.float32(1.0 if alpha is None else alpha) * np.asarray(sa, np.float32).reshape(-1)[0]
        scale = scale * np.asarray(sb, np.float32).reshape(1, -1)
        if sy is None:
            return ((acc * scale).astype(np.float32),)
        d = acc * (scale / np.float32(_scalar(sy))) + int(_scalar(zy, np.int64))
        dtype = _out_type(zy, a)
        info = np.iinfo(dtype)
        return (np.clip(np.rint(d), info.min, info.max).astype(dtype),)


CONTRIB_OPS = [QLinearAdd, QLinearMul, QGemm, QLinearAveragePool, QLinearGlobalAveragePool, QLinearConcat, QLinearSoftmax]


def run(model_path, feeds):
    """The graph outputs of the model at `model_path` for `feeds` (name -> array)."""
    session = ReferenceEvaluator(model_path, new_ops=QDQ_OPS + FLOAT_OPS + CONTRIB_OPS)
    return session.run(None, feeds)
