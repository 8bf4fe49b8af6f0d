"""Llama-family language models (GGUF or a Hugging Face safetensors folder) through the C API."""
import ctypes
import os

import numpy as np

from tessel import _capi
from tessel._capi import check, lib

__all__ = ["load", "LanguageModel", "Sequence"]


def _sampler(temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n, seed):
    c = _capi.SamplerConfig()
    lib.tessel_sampler_config_init(ctypes.byref(c))
    c.temperature, c.top_k, c.top_p, c.min_p = temperature, top_k, top_p, min_p
    c.repeat_penalty, c.repeat_last_n, c.seed = repeat_penalty, repeat_last_n, seed
    return c


class Sequence:
    """A sequence of a model: its KV cache slot, history and last logits."""

    def __init__(self, model):
        handle = ctypes.c_void_p()
        check(lib.tessel_sequence_create(model._handle, ctypes.byref(handle)))
        self._handle = handle
        self._model = model

    def prefill(self, tokens):
        a = np.ascontiguousarray(tokens, dtype=np.int32)
        check(lib.tessel_sequence_prefill(self._handle, a.ctypes.data_as(_capi.c_int32_p), a.size))

    def decode(self, temperature=0.8, top_k=40, top_p=0.95, min_p=0.05, repeat_penalty=1.0, repeat_last_n=64,
               seed=0):
        """Samples the next token from the current logits, appends and runs it; returns its id."""
        config = _sampler(temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n, seed)
        token = ctypes.c_int32()
        check(lib.tessel_sequence_decode(self._handle, ctypes.byref(config), ctypes.byref(token)))
        return token.value

    @property
    def logits(self):
        """A copy of the logits after the last prefill / decode, float32 [vocab]."""
        p = _capi.c_float_p()
        n = ctypes.c_int32()
        check(lib.tessel_sequence_logits(self._handle, ctypes.byref(p), ctypes.byref(n)))
        return np.ctypeslib.as_array(p, shape=(n.value,)).copy()

    def __len__(self):
        n = ctypes.c_int32()
        check(lib.tessel_sequence_length(self._handle, ctypes.byref(n)))
        return n.value

    def close(self):
        if getattr(self, "_handle", None):
            check(lib.tessel_sequence_free(self._handle))
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_handle", None):
            lib.tessel_sequence_free(self._handle)
            self._handle = None


class LanguageModel:
    def __init__(self, path, threads=1, max_context=0, max_sequences=1, max_batch=64, kv_f32=False, mmap=False):
        options = _capi.LlmOptions()
        lib.tessel_llm_options_init(ctypes.byref(options))
        options.threads, options.max_context, options.max_sequences = threads, max_context, max_sequences
        options.max_batch, options.kv_f32, options.mmap = max_batch, int(kv_f32), int(mmap)
        handle = ctypes.c_void_p()
        check(lib.tessel_llm_load(os.fsencode(path), ctypes.byref(options), ctypes.byref(handle)))
        self._handle = handle
        n = ctypes.c_int32()
        check(lib.tessel_llm_vocab_size(handle, ctypes.byref(n)))
        self.vocab_size = n.value
        check(lib.tessel_llm_context_length(handle, ctypes.byref(n)))
        self.context_length = n.value
        bos, eos = ctypes.c_int32(), ctypes.c_int32()
        check(lib.tessel_llm_special_tokens(handle, ctypes.byref(bos), ctypes.byref(eos)))
        self.bos, self.eos = bos.value, eos.value

    def tokenize(self, text, add_special=True):
        data = text.encode() if isinstance(text, str) else bytes(text)
        count = ctypes.c_int32()
        capacity = len(data) + 8
        while True:
            buf = (ctypes.c_int32 * capacity)()
            status = lib.tessel_llm_tokenize(self._handle, data, len(data), int(add_special), buf, capacity,
                                             ctypes.byref(count))
            if status == 3 and count.value > capacity:  # TESSEL_OUT_OF_RANGE: a larger buffer
                capacity = count.value
                continue
            check(status)
            return list(buf[:count.value])

    def detokenize(self, tokens):
        a = np.ascontiguousarray(tokens, dtype=np.int32)
        length = ctypes.c_size_t()
        status = lib.tessel_llm_detokenize(self._handle, a.ctypes.data_as(_capi.c_int32_p), a.size, None, 0,
                                           ctypes.byref(length))
        if status not in (0, 3):
            check(status)
        buf = ctypes.create_string_buffer(length.value + 1)
        check(lib.tessel_llm_detokenize(self._handle, a.ctypes.data_as(_capi.c_int32_p), a.size, buf,
                                        length.value + 1, ctypes.byref(length)))
        return buf.raw[:length.value].decode(errors="replace")

    def _piece(self, token, buf):
        length = ctypes.c_size_t()
        check(lib.tessel_llm_token_piece(self._handle, token, buf, len(buf), ctypes.byref(length)))
        return buf.raw[:length.value]

    def sequence(self):
        return Sequence(self)

    def logits(self, prompt, all_positions=False):
        """Logits after `prompt` (text, BOS added as the vocabulary asks, or token ids): float32 [vocab], or
        [tokens, vocab] with all_positions (one forward pass per token then)."""
        tokens = self.tokenize(prompt) if isinstance(prompt, str) else list(prompt)
        with self.sequence() as seq:
            if not all_positions:
                seq.prefill(tokens)
                return seq.logits
            rows = []
            for t in tokens:
                seq.prefill([t])
                rows.append(seq.logits)
            return np.stack(rows)

    def generate(self, prompt, max_tokens=128, temperature=0.8, top_k=40, top_p=0.95, min_p=0.05,
                 repeat_penalty=1.0, repeat_last_n=64, seed=0):
        """Yields the continuation of `prompt` piece by piece (str; a UTF-8 character split across tokens
        comes out whole). Stops at end-of-text, after max_tokens, or when the context is full."""
        tokens = self.tokenize(prompt)
        config = _sampler(temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n, seed)
        buf = ctypes.create_string_buffer(256)
        pending = b""
        with self.sequence() as seq:
            seq.prefill(tokens)
            length = len(tokens)
            token = ctypes.c_int32()
            for _ in range(max_tokens):
                if length >= self.context_length:
                    break
                # decode samples the token and runs it: its logits are then ready for the next one.
                check(lib.tessel_sequence_decode(seq._handle, ctypes.byref(config), ctypes.byref(token)))
                length += 1
                if token.value == self.eos:
                    break
                pending += self._piece(token.value, buf)
                try:
                    text = pending.decode()
                except UnicodeDecodeError:
                    continue
                pending = b""
                yield text
            if pending:
                yield pending.decode(errors="replace")

    def close(self):
        if getattr(self, "_handle", None):
            check(lib.tessel_llm_free(self._handle))
            self._handle = None

    def __del__(self):
        if getattr(self, "_handle", None):
            lib.tessel_llm_free(self._handle)
            self._handle = None


def load(path, **options):
    """A GGUF file or a Hugging Face folder; options: threads, max_context, max_sequences, max_batch,
    kv_f32, mmap."""
    return LanguageModel(path, **options)
