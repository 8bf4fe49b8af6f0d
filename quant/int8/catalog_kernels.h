// Calibration and sensitivity runs on the kernels `tessel compile` chooses from: a KernelOverride that
// runs each node on the cheapest legal entry of the operator-kernel catalog (OpKernels()) for this CPU,
// falling back to the reference kernel where none is legal. The reference convolution computes about
// 0.6 G multiply-adds/s, so calibrating ResNet-18 on 300 photo crops took minutes on it.
#ifndef TESSEL_QUANT_INT8_CATALOG_KERNELS_H_
#define TESSEL_QUANT_INT8_CATALOG_KERNELS_H_

#include "quant/int8/runner.h"

namespace tessel {

// The override for `threads` threads (0: one per core). It owns its thread pool; copies share it. f32
// results differ from the reference by rounding (Winograd's included), far below the calibration's
// resolution; integer results equal the reference's, except that XNNPACK's fp32 requantization (chosen
// where the CPU lacks VNNI) may round an output one step away, as in the compiled artifact.
// TESSEL_FORCE_BACKEND applies as in `tessel compile` ("reference": every node on the reference kernel).
KernelOverride CatalogKernelOverride(int threads = 0);

}  // namespace tessel

#endif  // TESSEL_QUANT_INT8_CATALOG_KERNELS_H_
