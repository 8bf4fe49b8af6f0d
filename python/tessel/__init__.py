"""Tessel from Python: compile ONNX models (through the `tessel` command), run compiled artifacts and
Llama-family language models (through libtessel.so, the C API, with ctypes).

    import tessel
    model = tessel.compile("model.onnx")            # or ONNX bytes; quantize="int8", calibration=...
    outputs = model.run({"input": x})               # dict of numpy arrays
    llm = tessel.llm.load("model.gguf")
    for piece in llm.generate("Once upon a time", max_tokens=32, temperature=0):
        print(piece, end="")
"""
import ctypes
import os
import shutil
import subprocess
import tempfile

import numpy as np

from tessel import _capi
from tessel._capi import TesselError, check, lib

__all__ = ["TesselError", "compile", "load", "llm", "Model", "Session", "version"]

_DTYPES = {0: np.dtype(np.float32), 1: np.dtype(np.float16), 3: np.dtype(np.int8), 4: np.dtype(np.uint8),
           5: np.dtype(np.int32), 6: np.dtype(np.int64), 7: np.dtype(np.bool_)}
_CODES = {v: k for k, v in _DTYPES.items()}


def version():
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return lib.tessel_version_string().decode()


class TensorInfo:
    def __init__(self, info):
        self.name = info.name.decode()
        self.dtype = _DTYPES.get(info.dtype)
        self.shape = tuple(info.shape[i] for i in range(info.rank))

    def __repr__(self):
        return "TensorInfo(%r, %s, %s)" % (self.name, self.dtype, list(self.shape))


class Model:
    """A compiled artifact (.tsl), mapped and shared by its sessions."""

    def __init__(self, handle, keepalive=None):
        self._handle = handle
        self._keepalive = keepalive  # the image of a model loaded from memory
        n = ctypes.c_int32()
        info = _capi.TensorInfo()
        check(lib.tessel_model_num_inputs(handle, ctypes.byref(n)))
        self.inputs = []
        for i in range(n.value):
            check(lib.tessel_model_input_info(handle, i, ctypes.byref(info)))
            self.inputs.append(TensorInfo(info))
        check(lib.tessel_model_num_outputs(handle, ctypes.byref(n)))
        self.outputs = []
        for i in range(n.value):
            check(lib.tessel_model_output_info(handle, i, ctypes.byref(info)))
            self.outputs.append(TensorInfo(info))
        self._default_session = None

    def session(self, threads=1):
        """A new session (its own arena): one per thread that runs the model."""
        return Session(self, threads)

    def run(self, feeds, out=None):
        """Runs on a session of its own (created on first use); see Session.run."""
        if self._default_session is None:
            self._default_session = self.session()
        return self._default_session.run(feeds, out)

    def __del__(self):
        if getattr(self, "_handle", None):
            self._default_session = None
            lib.tessel_model_free(self._handle)
            self._handle = None


class Session:
    def __init__(self, model, threads=1):
        options = _capi.SessionOptions()
        lib.tessel_session_options_init(ctypes.byref(options))
        options.num_threads = threads
        handle = ctypes.c_void_p()
        check(lib.tessel_session_create(model._handle, ctypes.byref(options), ctypes.byref(handle)))
        self._handle = handle
        self._model = model  # the session keeps the model alive, and its tensor infos
        self._names = [i.name for i in model.inputs]

    def run(self, feeds, out=None):
        """feeds: {input name: ndarray}, each of the compiled dtype and shape. The run reads the arrays
        in place (bound, not converted); a non-contiguous array is made contiguous first. Returns
        {output name: ndarray}; `out` may give preallocated arrays for some outputs, which the run fills
        instead of allocating."""
        unknown = set(feeds) - set(self._names)
        if unknown:
            raise KeyError("no input named %s (inputs: %s)" % (", ".join(sorted(unknown)), ", ".join(self._names)))
        held = []
        for i, info in enumerate(self._model.inputs):
            if info.name not in feeds:
                raise KeyError("input '%s' is missing" % info.name)
            a = np.ascontiguousarray(feeds[info.name])
            held.append(a)
            code = _CODES.get(a.dtype, -1)
            shape = (ctypes.c_int64 * max(1, a.ndim))(*a.shape)
            check(lib.tessel_session_bind_input(self._handle, i, a.ctypes.data_as(ctypes.c_void_p), a.nbytes, code,
                                                shape, a.ndim))
        results = {}
        for i, info in enumerate(self._model.outputs):
            o = (out or {}).get(info.name)
            if o is None:
                o = np.empty(info.shape, info.dtype)
            elif not (isinstance(o, np.ndarray) and o.flags.c_contiguous and o.dtype == info.dtype
                      and o.shape == info.shape):
                raise ValueError("out['%s'] must be a C-contiguous %s array of shape %s" %
                                 (info.name, info.dtype, info.shape))
            check(lib.tessel_session_bind_output(self._handle, i, o.ctypes.data_as(ctypes.c_void_p), o.nbytes))
            results[info.name] = o
        check(lib.tessel_session_run(self._handle))
        return results

    def set_profiling(self, enabled=True):
        check(lib.tessel_session_set_profiling(self._handle, 1 if enabled else 0))

    def profile(self):
        """The last run's [(op name, kernel, milliseconds)] (after set_profiling)."""
        n = ctypes.c_int32()
        check(lib.tessel_session_num_profile_entries(self._handle, ctypes.byref(n)))
        rows = []
        p = _capi.OpProfile()
        for i in range(n.value):
            check(lib.tessel_session_profile_entry(self._handle, i, ctypes.byref(p)))
            rows.append((p.name.decode(), p.kernel.decode(), p.milliseconds))
        return rows

    def __del__(self):
        if getattr(self, "_handle", None):
            lib.tessel_session_free(self._handle)
            self._handle = None


def load(path_or_bytes):
    """A compiled artifact from a .tsl path or its bytes."""
    handle = ctypes.c_void_p()
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        # The runtime uses the image in place: keep an aligned copy alive with the model.
        data = bytes(path_or_bytes)
        image = np.empty(len(data) + 64, np.uint8)
        offset = (-image.ctypes.data) % 64
        image = image[offset:offset + len(data)]
        image[:] = np.frombuffer(data, np.uint8)
        check(lib.tessel_model_load_from_memory(image.ctypes.data_as(ctypes.c_void_p), len(data),
                                                ctypes.byref(handle)))
        return Model(handle, keepalive=image)
    check(lib.tessel_model_load(os.fsencode(path_or_bytes), ctypes.byref(handle)))
    return Model(handle)


def _cli():
    env = os.environ.get("TESSEL_CLI")
    if env:
        return env
    path = _capi.built_file("cli", "tessel")
    if path:
        return path
    found = shutil.which("tessel")
    if found:
        return found
    raise TesselError("TESSEL_NOT_FOUND", "tessel.compile: the tessel command was not found: set TESSEL_CLI, or "
                      "build it in the checkout (bazel build //cli:tessel, which ./setup.sh does)")


def compile(onnx, quantize=None, calibration=None, target="host", output=None, pipeline=None, extra_args=()):
    """Compiles an ONNX model (a path or the model's bytes) with `tessel compile` and loads the artifact.

    quantize: None or "int8". calibration (int8): a .npy path, a folder of them, or an ndarray (one
    sample or a stack [N, ...]) or a list of samples. target: "host", "aarch64-neon" or "aarch64-sve" (an
    aarch64 artifact cannot be loaded on an x86 host: give `output` to keep the file; the result is then
    the path). pipeline: a pass pipeline string instead of -O3."""
    with tempfile.TemporaryDirectory(prefix="tessel-compile-") as tmp:
        if isinstance(onnx, (bytes, bytearray, memoryview)):
            onnx_path = os.path.join(tmp, "model.onnx")
            with open(onnx_path, "wb") as f:
                f.write(bytes(onnx))
        else:
            onnx_path = os.fspath(onnx)
        out_path = os.fspath(output) if output else os.path.join(tmp, "model.tsl")
        cmd = [_cli(), "compile", onnx_path, "-o", out_path, "--target", target]
        if pipeline:
            cmd += ["--pipeline", pipeline]
        if quantize:
            cmd += ["--quantize", quantize]
        if calibration is not None:
            if isinstance(calibration, (list, tuple)):
                calibration = np.stack([np.asarray(c) for c in calibration])
            if isinstance(calibration, np.ndarray):
                cal_path = os.path.join(tmp, "calibration.npy")
                np.save(cal_path, calibration)
                calibration = cal_path
            cmd += ["--calibration", os.fspath(calibration)]
        cmd += list(extra_args)
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise TesselError("TESSEL_INVALID_ARGUMENT", "tessel compile failed:\n" + (done.stderr or done.stdout))
        if target != "host":
            if not output:
                raise ValueError("tessel.compile: target %s needs output=PATH (it does not load on this host)" % target)
            return out_path
        with open(out_path, "rb") as f:
            return load(f.read())


from tessel import llm  # noqa: E402  (the LLM half, tessel.llm.load)
