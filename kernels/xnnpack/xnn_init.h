// XNNPACK's one-time initialization for every Tessel kernel that calls it, with Tessel's allocator:
// XNNPACK's packed weights (the Winograd kernel's per-point matrices, its convolutions' and fully
// connected layers') come from AllocateBuffer (support/memory.h), so the large ones sit on 2 MiB pages
// like Tessel's own packed weights. XNNPACK keeps the allocator of the first xnn_initialize in the
// process, so every Tessel call site goes through here.
#ifndef TESSEL_KERNELS_XNNPACK_XNN_INIT_H_
#define TESSEL_KERNELS_XNNPACK_XNN_INIT_H_

#include "absl/status/status.h"

namespace tessel {

// OK once XNNPACK is initialized; Unavailable (naming TESSEL_FORCE_BACKEND=reference) on a CPU it
// does not support.
absl::Status InitXnnpack();

// Whether XNNPACK's f32 GEMM microkernels (its fully connected and convolution operators, and the GEMMs
// of Tessel's Winograd and fused depthwise + pointwise kernels) run at about half the speed of Tessel's
// AVX2 GEMM on this CPU: x86-64 without AVX-512 (as CpuSupports sees it), where Debian's libXNNPACK
// runs its FMA3 5x16 kernel as built with one of its ten accumulators on the stack, a store and a
// reload in the dependency chain of every K step. Zen 4 with AVX-512 hidden from XNNPACK
// (lab/cpuinfo_avx2_only.c) and Tessel capped at AVX2, 2026-11-29: MobileNetV2's 320 -> 1280 1x1
// convolution (7x7) 0.98 ms on XNNPACK, 0.50 ms on Tessel's AVX2 GEMM, 0.44 ms on XNNPACK's AVX-512 one.
// Kernels that would call XNNPACK's f32 GEMM take Tessel's PackedGemmF32 instead, and the XNNPACK
// operators' costs say so.
bool XnnpackF32GemmIsSlow();

}  // namespace tessel

#endif  // TESSEL_KERNELS_XNNPACK_XNN_INIT_H_
