// The weight quantizers' worker threads: one process-wide ThreadPool on every core (up to 16),
// for the calibration forward (LinearF32), the Hessians, GPTQ's group parameters and the ggml-type
// row quantization. Work is split into pieces whose boundaries never depend on the thread count, so
// a quantized file is the same on 1 core as on 16.
#ifndef TESSEL_QUANT_WEIGHT_PARALLEL_H_
#define TESSEL_QUANT_WEIGHT_PARALLEL_H_

#include <cstdint>
#include <utility>

#include "support/thread_pool.h"

namespace tessel::quant {

// Created on first use, with SetQuantThreads' count or else every core (up to 16). Not reentrant: never
// call ParallelFor from inside one of its tasks.
ThreadPool& QuantThreadPool();

// The pool's thread count (`tessel quantize --threads`); only a call before the pool's first use takes
// effect. True when the pool has `threads` threads afterwards.
bool SetQuantThreads(int threads);

// fn(i) for every i in [0, n), on QuantThreadPool's threads.
template <typename Fn>
void ParallelFor(int64_t n, Fn&& fn) {
  if (n <= 1) {
    if (n == 1) fn(int64_t{0});
    return;
  }
  QuantThreadPool().Run(n, [&fn](int64_t i, int) { fn(i); });
}

}  // namespace tessel::quant

#endif  // TESSEL_QUANT_WEIGHT_PARALLEL_H_
