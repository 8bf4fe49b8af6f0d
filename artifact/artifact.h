// The deployable artifact (.tsl): a fixed header, a protobuf Plan (ops in order, chosen kernels,
// tensor offsets and shapes, quantization parameters, the pipeline and target that built it) and a
// 64-byte aligned weights section that the runtime maps with mmap and uses in place.
//
//   offset 0   header (64 bytes): magic "TESSELAR", format version, section offsets and sizes,
//              checksums of the plan and of the weights
//   64         plan bytes (artifact.proto Plan)
//   aligned    weights section (each tensor 64-byte aligned within it)
#ifndef TESSEL_ARTIFACT_ARTIFACT_H_
#define TESSEL_ARTIFACT_ARTIFACT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "artifact/artifact.pb.h"
#include "support/mapped_file.h"

namespace tessel {

inline constexpr char kArtifactMagic[8] = {'T', 'E', 'S', 'S', 'E', 'L', 'A', 'R'};
inline constexpr uint32_t kArtifactVersion = 1;

// The target this runtime was built for: "x86_64" or "aarch64" (artifacts name a variant such as
// "aarch64-neon" or "aarch64-sve"; the prefix must match).
absl::string_view RuntimeTargetFamily();

// A 64-bit checksum (fast, not cryptographic) used for both sections.
uint64_t ArtifactChecksum(const void* data, size_t bytes);

// Serializes plan + weights into an artifact file image.
absl::StatusOr<std::string> SerializeArtifact(const artifact::Plan& plan, absl::string_view weights);
absl::Status WriteArtifact(const std::string& path, const artifact::Plan& plan, absl::string_view weights);

struct ArtifactLoadOptions {
  // Checking the weights checksum touches every page once; skip it for the fastest start.
  bool verify_weights = true;
  // Refuse artifacts built for another CPU family.
  bool check_target = true;
};

// A loaded artifact. The weights stay in the mapped file (or the caller's buffer for FromBytes).
class Artifact {
 public:
  static absl::StatusOr<std::shared_ptr<Artifact>> Load(const std::string& path, const ArtifactLoadOptions& options = {});
  // Validates an in-memory image; `bytes` must outlive the artifact. `what` names it in errors.
  static absl::StatusOr<std::shared_ptr<Artifact>> FromBytes(absl::string_view bytes, const ArtifactLoadOptions& options = {},
                                                             absl::string_view what = "artifact");
  ~Artifact();
  Artifact(const Artifact&) = delete;
  Artifact& operator=(const Artifact&) = delete;

  const artifact::Plan& plan() const { return plan_; }
  const uint8_t* weights() const { return weights_; }
  size_t weights_bytes() const { return weights_bytes_; }
  size_t file_bytes() const { return file_bytes_; }

 private:
  Artifact() = default;
  artifact::Plan plan_;
  const uint8_t* weights_ = nullptr;
  size_t weights_bytes_ = 0;
  size_t file_bytes_ = 0;
  std::shared_ptr<const MappedFile> file_;  // null for FromBytes
};

}  // namespace tessel

#endif  // TESSEL_ARTIFACT_ARTIFACT_H_
