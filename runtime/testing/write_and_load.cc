#include "runtime/testing/write_and_load.h"

#include "absl/strings/str_cat.h"
#include "artifact/artifact.h"
#include "gtest/gtest.h"

namespace tessel {

absl::StatusOr<std::shared_ptr<const CompiledModel>> WriteAndLoadArtifact(const CompileResult& result,
                                                                          const std::string& name) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/", name, ".tsl");
  if (absl::Status s = WriteArtifact(path, result.plan, result.weights); !s.ok()) return s;
  return CompiledModel::Load(path);
}

}  // namespace tessel
