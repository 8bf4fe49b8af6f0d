// Test helper: a compile result's artifact written to the test's temporary directory and loaded back,
// the path `tessel compile` then `tessel run` take.
#ifndef TESSEL_RUNTIME_TESTING_WRITE_AND_LOAD_H_
#define TESSEL_RUNTIME_TESTING_WRITE_AND_LOAD_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "codegen/compiler.h"
#include "runtime/executor.h"

namespace tessel {

// Writes `result` as TEST_TMPDIR/NAME.tsl and loads it; the write's or the load's error otherwise.
absl::StatusOr<std::shared_ptr<const CompiledModel>> WriteAndLoadArtifact(const CompileResult& result,
                                                                          const std::string& name);

}  // namespace tessel

#endif  // TESSEL_RUNTIME_TESTING_WRITE_AND_LOAD_H_
