"""ctypes declarations of libtessel.so (include/tessel/tessel.h) and the error type. The library is found
through $TESSEL_LIBRARY, else in the checkout this package lies in: the host's Bazel output
(bazel-out/k8-opt/bin, which an aarch64 build does not replace), then bazel-bin."""
import ctypes
import os
import platform

_HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(_HERE))

# The header version these declarations follow (TESSEL_VERSION_NUMBER).
VERSION_NUMBER = 100

c_int32_p = ctypes.POINTER(ctypes.c_int32)
c_int64_p = ctypes.POINTER(ctypes.c_int64)
c_float_p = ctypes.POINTER(ctypes.c_float)


class TesselError(RuntimeError):
    """A failed C API call: `status` is the tessel_status name ("TESSEL_INVALID_ARGUMENT", ...)."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 8), ("bytes", ctypes.c_uint64)]


class SessionOptions(ctypes.Structure):
    _fields_ = [("num_threads", ctypes.c_int32), ("spin_workers", ctypes.c_int32),
                ("force_reference", ctypes.c_int32)]


class OpProfile(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kernel", ctypes.c_char_p), ("milliseconds", ctypes.c_double),
                ("bytes", ctypes.c_uint64)]


class LlmOptions(ctypes.Structure):
    _fields_ = [("threads", ctypes.c_int32), ("max_context", ctypes.c_int32), ("max_sequences", ctypes.c_int32),
                ("max_batch", ctypes.c_int32), ("kv_f32", ctypes.c_int32), ("mmap", ctypes.c_int32)]


class SamplerConfig(ctypes.Structure):
    _fields_ = [("temperature", ctypes.c_float), ("top_k", ctypes.c_int32), ("top_p", ctypes.c_float),
                ("min_p", ctypes.c_float), ("repeat_penalty", ctypes.c_float), ("repeat_last_n", ctypes.c_int32),
                ("seed", ctypes.c_uint64)]


def built_file(*parts):
    """A file of the checkout's host build (None when absent)."""
    cpu = {"x86_64": "k8", "aarch64": "aarch64"}.get(platform.machine(), platform.machine())
    for root in (os.path.join(CHECKOUT, "bazel-out", cpu + "-opt", "bin"), os.path.join(CHECKOUT, "bazel-bin")):
        path = os.path.join(root, *parts)
        if os.path.exists(path):
            return path
    return None


def _find_library():
    env = os.environ.get("TESSEL_LIBRARY")
    if env:
        return env
    path = built_file("capi", "libtessel.so")
    if path:
        return path
    raise ImportError("tessel: libtessel.so not found: set TESSEL_LIBRARY, or build it in the checkout "
                      "(bazel build //capi:libtessel.so, which ./setup.sh does)")


lib = ctypes.CDLL(_find_library())

_P = ctypes.c_void_p
_S = ctypes.c_int  # tessel_status
_SIGNATURES = {
    "tessel_version": (ctypes.c_int32, []),
    "tessel_version_string": (ctypes.c_char_p, []),
    "tessel_status_name": (ctypes.c_char_p, [ctypes.c_int]),
    "tessel_last_error": (ctypes.c_char_p, []),
    "tessel_model_load": (_S, [ctypes.c_char_p, ctypes.POINTER(_P)]),
    "tessel_model_load_from_memory": (_S, [_P, ctypes.c_size_t, ctypes.POINTER(_P)]),
    "tessel_model_free": (_S, [_P]),
    "tessel_model_num_inputs": (_S, [_P, c_int32_p]),
    "tessel_model_num_outputs": (_S, [_P, c_int32_p]),
    "tessel_model_input_info": (_S, [_P, ctypes.c_int32, ctypes.POINTER(TensorInfo)]),
    "tessel_model_output_info": (_S, [_P, ctypes.c_int32, ctypes.POINTER(TensorInfo)]),
    "tessel_session_options_init": (None, [ctypes.POINTER(SessionOptions)]),
    "tessel_session_create": (_S, [_P, ctypes.POINTER(SessionOptions), ctypes.POINTER(_P)]),
    "tessel_session_free": (_S, [_P]),
    "tessel_session_bind_input": (_S, [_P, ctypes.c_int32, _P, ctypes.c_size_t, ctypes.c_int, c_int64_p,
                                       ctypes.c_int32]),
    "tessel_session_bind_output": (_S, [_P, ctypes.c_int32, _P, ctypes.c_size_t]),
    "tessel_session_run": (_S, [_P]),
    "tessel_session_set_profiling": (_S, [_P, ctypes.c_int32]),
    "tessel_session_num_profile_entries": (_S, [_P, c_int32_p]),
    "tessel_session_profile_entry": (_S, [_P, ctypes.c_int32, ctypes.POINTER(OpProfile)]),
    "tessel_llm_options_init": (None, [ctypes.POINTER(LlmOptions)]),
    "tessel_sampler_config_init": (None, [ctypes.POINTER(SamplerConfig)]),
    "tessel_llm_load": (_S, [ctypes.c_char_p, ctypes.POINTER(LlmOptions), ctypes.POINTER(_P)]),
    "tessel_llm_free": (_S, [_P]),
    "tessel_llm_vocab_size": (_S, [_P, c_int32_p]),
    "tessel_llm_context_length": (_S, [_P, c_int32_p]),
    "tessel_llm_special_tokens": (_S, [_P, c_int32_p, c_int32_p]),
    "tessel_llm_tokenize": (_S, [_P, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int32, c_int32_p, ctypes.c_int32,
                                 c_int32_p]),
    "tessel_llm_detokenize": (_S, [_P, c_int32_p, ctypes.c_int32, ctypes.c_char_p, ctypes.c_size_t,
                                   ctypes.POINTER(ctypes.c_size_t)]),
    "tessel_llm_token_piece": (_S, [_P, ctypes.c_int32, ctypes.c_char_p, ctypes.c_size_t,
                                    ctypes.POINTER(ctypes.c_size_t)]),
    "tessel_sequence_create": (_S, [_P, ctypes.POINTER(_P)]),
    "tessel_sequence_free": (_S, [_P]),
    "tessel_sequence_prefill": (_S, [_P, c_int32_p, ctypes.c_int32]),
    "tessel_sequence_decode": (_S, [_P, ctypes.POINTER(SamplerConfig), c_int32_p]),
    "tessel_sequence_logits": (_S, [_P, ctypes.POINTER(c_float_p), c_int32_p]),
    "tessel_sequence_length": (_S, [_P, c_int32_p]),
}
for _name, (_res, _args) in _SIGNATURES.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args

if lib.tessel_version() // 100 != VERSION_NUMBER // 100:
    raise ImportError("tessel: libtessel.so is version %s; this package expects %d.%d" % (
        lib.tessel_version_string().decode(), VERSION_NUMBER // 10000, VERSION_NUMBER // 100 % 100))


def check(status):
    """Raises TesselError for a non-zero tessel_status."""
    if status != 0:
        raise TesselError(lib.tessel_status_name(status).decode(), lib.tessel_last_error().decode(errors="replace"))
