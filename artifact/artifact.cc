// Artifact writing, mapping and validation.
#include "artifact/artifact.h"

#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "support/atomic_file.h"
#include "support/mapped_file.h"

namespace tessel {
namespace {

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t flags;
  uint64_t plan_offset;
  uint64_t plan_bytes;
  uint64_t weights_offset;
  uint64_t weights_bytes;
  uint64_t plan_checksum;
  uint64_t weights_checksum;
};
static_assert(sizeof(Header) == 64, "the header is one 64-byte block");

constexpr uint64_t kAlign = 64;
uint64_t AlignUp(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

constexpr int kMaxDType = static_cast<int>(DType::kU64);  // the last DType

// Checks that every index and byte range in the plan is inside the artifact.
absl::Status ValidatePlan(const artifact::Plan& plan, uint64_t weights_bytes, absl::string_view what) {
  const int num_tensors = plan.tensors_size();
  for (int i = 0; i < num_tensors; ++i) {
    const artifact::Tensor& t = plan.tensors(i);
    const std::string where = absl::StrCat(what, ": tensor ", i, " ('", t.name(), "')");
    if (t.dtype() < 0 || t.dtype() > kMaxDType) return absl::DataLossError(absl::StrCat(where, " has unknown dtype ", t.dtype()));
    if (t.storage() == artifact::Tensor::HEAP) {  // allocated as its op runs: open extents (-1), no bytes
      for (int64_t d : t.shape()) {
        if (d < -1 || d > (int64_t{1} << 40)) return absl::DataLossError(absl::StrCat(where, " has an invalid shape"));
      }
      if (t.bytes() != 0 || t.offset() != 0 || !t.dynamic()) {
        return absl::DataLossError(
            absl::StrCat(where, " is allocated as it runs but has bytes, an offset or no dynamic flag"));
      }
      continue;
    }
    if (t.storage() != artifact::Tensor::ARENA && t.storage() != artifact::Tensor::WEIGHTS) {
      return absl::DataLossError(absl::StrCat(where, " has unknown storage ", static_cast<int>(t.storage())));
    }
    int64_t count = 1;
    for (int64_t d : t.shape()) {
      if (d < 0 || (d > 0 && count > (int64_t{1} << 40) / d)) {
        return absl::DataLossError(absl::StrCat(where, " has an invalid shape"));
      }
      count *= d;
    }
    if (t.bytes() != DTypeStorageBytes(static_cast<DType>(t.dtype()), count)) {
      return absl::DataLossError(absl::StrCat(where, " says ", t.bytes(), " bytes but its shape needs ",
                                              DTypeStorageBytes(static_cast<DType>(t.dtype()), count)));
    }
    const uint64_t limit = t.storage() == artifact::Tensor::WEIGHTS ? weights_bytes : plan.arena_bytes();
    if (t.offset() % kAlign != 0 || t.offset() > limit || t.bytes() > limit - t.offset()) {
      return absl::DataLossError(absl::StrCat(where, " lies outside its ",
                                              t.storage() == artifact::Tensor::WEIGHTS ? "weights section" : "arena",
                                              " (offset ", t.offset(), ", ", t.bytes(), " bytes, section ", limit, ")"));
    }
  }
  auto check_index = [&](int idx, bool allow_missing, const std::string& where) -> absl::Status {
    if ((allow_missing && idx == -1) || (idx >= 0 && idx < num_tensors)) return absl::OkStatus();
    return absl::DataLossError(absl::StrCat(where, " refers to tensor ", idx, " of ", num_tensors));
  };
  for (int i = 0; i < plan.ops_size(); ++i) {
    const artifact::Op& op = plan.ops(i);
    const std::string where = absl::StrCat(what, ": op ", i, " ('", op.name(), "')");
    for (int idx : op.inputs()) {
      if (absl::Status s = check_index(idx, true, where); !s.ok()) return s;
    }
    for (int idx : op.outputs()) {
      if (absl::Status s = check_index(idx, false, where); !s.ok()) return s;
    }
    for (const artifact::Attribute& a : op.attributes()) {
      if (a.has_tensor()) {
        const artifact::TensorRef& r = a.tensor();
        if (r.offset() > weights_bytes || r.bytes() > weights_bytes - r.offset()) {
          return absl::DataLossError(absl::StrCat(where, " attribute '", a.name(), "' lies outside the weights section"));
        }
      }
    }
  }
  for (int idx : plan.inputs()) {
    if (absl::Status s = check_index(idx, false, absl::StrCat(what, ": graph input")); !s.ok()) return s;
  }
  for (int idx : plan.outputs()) {
    if (absl::Status s = check_index(idx, false, absl::StrCat(what, ": graph output")); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view RuntimeTargetFamily() {
#if defined(__aarch64__)
  return "aarch64";
#else
  return "x86_64";
#endif
}

uint64_t ArtifactChecksum(const void* data, size_t bytes) {
  // Four independent multiply-xor lanes over 8-byte words: several GB/s, and any flipped bit changes it.
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint64_t h[4] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull, 0x27d4eb2f165667c5ull};
  size_t i = 0;
  for (; i + 32 <= bytes; i += 32) {
    for (int l = 0; l < 4; ++l) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * l, 8);
      h[l] = (h[l] ^ w) * 0x100000001b3ull;
      h[l] ^= h[l] >> 29;
    }
  }
  uint64_t tail = bytes;
  for (; i < bytes; ++i) tail = (tail ^ p[i]) * 0x100000001b3ull;
  uint64_t out = tail;
  for (int l = 0; l < 4; ++l) out = (out ^ h[l]) * 0x9e3779b97f4a7c15ull ^ (out >> 31);
  return out;
}

namespace {

// The artifact's bytes before its weights: the header, the plan and the padding that aligns the weights.
absl::StatusOr<std::string> ArtifactPrefix(const artifact::Plan& plan, absl::string_view weights) {
  std::string plan_bytes;
  if (!plan.SerializeToString(&plan_bytes)) return absl::InternalError("cannot serialize the plan");
  Header h;
  std::memcpy(h.magic, kArtifactMagic, 8);
  h.version = kArtifactVersion;
  h.flags = 0;
  h.plan_offset = sizeof(Header);
  h.plan_bytes = plan_bytes.size();
  h.weights_offset = AlignUp(h.plan_offset + h.plan_bytes);
  h.weights_bytes = weights.size();
  h.plan_checksum = ArtifactChecksum(plan_bytes.data(), plan_bytes.size());
  h.weights_checksum = ArtifactChecksum(weights.data(), weights.size());
  absl::Status s = ValidatePlan(plan, h.weights_bytes, "plan");
  if (!s.ok()) return s;
  std::string out(h.weights_offset, '\0');
  std::memcpy(out.data(), &h, sizeof(h));
  std::memcpy(out.data() + h.plan_offset, plan_bytes.data(), plan_bytes.size());
  return out;
}

}  // namespace

absl::StatusOr<std::string> SerializeArtifact(const artifact::Plan& plan, absl::string_view weights) {
  absl::StatusOr<std::string> out = ArtifactPrefix(plan, weights);
  if (!out.ok()) return out.status();
  out->append(weights.data(), weights.size());
  return out;
}

// The prefix and the weights go to the file as they are: a copy of the whole artifact in memory would
// double the peak memory of compiling a large model and cost a page-faulting pass over it.
absl::Status WriteArtifact(const std::string& path, const artifact::Plan& plan, absl::string_view weights) {
  absl::StatusOr<std::string> prefix = ArtifactPrefix(plan, weights);
  if (!prefix.ok()) return prefix.status();
  const absl::string_view pieces[] = {*prefix, weights};
  return WriteFileAtomically(path, absl::MakeConstSpan(pieces));
}

absl::StatusOr<std::shared_ptr<Artifact>> Artifact::FromBytes(absl::string_view bytes, const ArtifactLoadOptions& options,
                                                              absl::string_view what) {
  if (bytes.size() < sizeof(Header)) {
    return absl::DataLossError(absl::StrCat(what, ": truncated (", bytes.size(), " bytes; the header alone is 64)"));
  }
  Header h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  if (std::memcmp(h.magic, kArtifactMagic, 8) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": not a Tessel artifact (bad magic; compile one with `tessel compile`)"));
  }
  if (h.version != kArtifactVersion) {
    return absl::FailedPreconditionError(absl::StrCat(what, ": artifact format version ", h.version, ", this runtime reads version ",
                                                      kArtifactVersion, "; recompile the model"));
  }
  const uint64_t size = bytes.size();
  if (h.plan_offset != sizeof(Header) || h.plan_bytes > size - h.plan_offset) {
    return absl::DataLossError(absl::StrCat(what, ": plan section [", h.plan_offset, ", +", h.plan_bytes,
                                            ") is outside the file (", size, " bytes): truncated or corrupt"));
  }
  if (h.weights_offset % kAlign != 0 || h.weights_offset < h.plan_offset + h.plan_bytes || h.weights_offset > size ||
      h.weights_bytes > size - h.weights_offset) {
    return absl::DataLossError(absl::StrCat(what, ": weights section [", h.weights_offset, ", +", h.weights_bytes,
                                            ") is outside the file (", size, " bytes): truncated or corrupt"));
  }
  const char* plan_data = bytes.data() + h.plan_offset;
  if (ArtifactChecksum(plan_data, h.plan_bytes) != h.plan_checksum) {
    return absl::DataLossError(absl::StrCat(what, ": plan checksum mismatch (corrupt file)"));
  }
  std::shared_ptr<Artifact> a(new Artifact());
  if (!a->plan_.ParseFromArray(plan_data, static_cast<int>(h.plan_bytes))) {
    return absl::DataLossError(absl::StrCat(what, ": plan does not parse"));
  }
  const uint8_t* weights = reinterpret_cast<const uint8_t*>(bytes.data()) + h.weights_offset;
  if (options.verify_weights && ArtifactChecksum(weights, h.weights_bytes) != h.weights_checksum) {
    return absl::DataLossError(absl::StrCat(what, ": weights checksum mismatch (corrupt file)"));
  }
  if (options.check_target && !absl::StartsWith(a->plan_.target(), RuntimeTargetFamily())) {
    return absl::FailedPreconditionError(absl::StrCat(what, ": built for target '", a->plan_.target(), "', this runtime is ",
                                                      RuntimeTargetFamily(), "; recompile with --target"));
  }
  absl::Status s = ValidatePlan(a->plan_, h.weights_bytes, what);
  if (!s.ok()) return s;
  a->weights_ = weights;
  a->weights_bytes_ = h.weights_bytes;
  a->file_bytes_ = size;
  return a;
}

absl::StatusOr<std::shared_ptr<Artifact>> Artifact::Load(const std::string& path, const ArtifactLoadOptions& options) {
  absl::StatusOr<std::shared_ptr<const MappedFile>> file = MappedFile::Open(path, FileLoad::kMap);
  if (!file.ok()) return file.status();
  absl::StatusOr<std::shared_ptr<Artifact>> a = FromBytes((*file)->bytes(), options, path);
  if (!a.ok()) return a.status();
  (*a)->file_ = *std::move(file);  // the weights stay in the mapping, which lives as long as the artifact
  return a;
}

Artifact::~Artifact() = default;

}  // namespace tessel
