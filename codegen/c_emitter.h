// The AOT C emitter: turns a compiled plan into standalone C99 (a header, a source and the weights as a
// linked blob) that calls the portable kernels of kernels/portable/ and cross-compiles with
// aarch64-linux-gnu-gcc.
#ifndef TESSEL_CODEGEN_C_EMITTER_H_
#define TESSEL_CODEGEN_C_EMITTER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "artifact/artifact.h"
#include "artifact/artifact.pb.h"

namespace tessel {

struct EmitCOptions {
  // kIncbin: NAME_weights.bin plus NAME_weights.S (`.incbin`; assemble with the output folder on the
  // include path, e.g. -Wa,-I,DIR). kCArray: NAME_weights.c holding a const byte array (any C
  // compiler, slow to compile for large models).
  enum class Weights { kIncbin, kCArray };
  Weights weights = Weights::kIncbin;
};

// Writes into `out_dir` (which must exist):
//   NAME.h          int NAME_run(const float* <input>..., float* <output>...), tensor sizes
//   NAME.c          a static 64-byte aligned arena of the planned size plus one scratch buffer, and
//                   one block per op calling the tsl_f32_* kernels (elementwise ops as inline loops)
//   NAME_weights.*  the weights, repacked for the kernels, 64-byte aligned
// Build: cc -std=c99 -O3 -fopenmp-simd -fno-trapping-math -ffp-contract=fast -I kernels/portable
//          NAME.c NAME_weights.S kernels/portable/*.c -Wa,-I,DIR -lm
// Generated code is not reentrant (one static arena). `name` must be a C identifier. Ops the emitter
// does not support (or supports only in some forms) fail with UnimplementedError naming op and node.
absl::Status EmitC(const artifact::Plan& plan, absl::string_view weights, const std::string& out_dir,
                   const std::string& name, const EmitCOptions& options = {});
absl::Status EmitC(const Artifact& artifact, const std::string& out_dir, const std::string& name,
                   const EmitCOptions& options = {});

}  // namespace tessel

#endif  // TESSEL_CODEGEN_C_EMITTER_H_
