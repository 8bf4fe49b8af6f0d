// .npy reading and writing.
#include "graph/npy.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "support/atomic_file.h"

namespace tessel {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

absl::StatusOr<DType> DTypeFromDescr(absl::string_view d, absl::string_view what) {
  if (d == "<f4") return DType::kF32;
  if (d == "<f2") return DType::kF16;
  if (d == "<f8") return DType::kF64;
  if (d == "|i1" || d == "<i1") return DType::kI8;
  if (d == "|u1" || d == "<u1") return DType::kU8;
  if (d == "<i4") return DType::kI32;
  if (d == "<i8") return DType::kI64;
  if (d == "<i2") return DType::kI16;
  if (d == "<u4") return DType::kU32;
  if (d == "<u8") return DType::kU64;
  if (d == "|b1") return DType::kBool;
  // numpy has no bfloat16: uint16 arrays hold bfloat16 bit patterns, as SerializeNpy writes them (a
  // caller that expects uint16 takes them as such).
  if (d == "<u2") return DType::kBF16;
  return absl::UnimplementedError(absl::StrCat(what, ": unsupported dtype '", d,
                                               "' (supported: float32, float64, float16, uint16 as bfloat16 bits, "
                                               "int8, uint8, int16, int32, uint32, int64, uint64, bool, little-endian)"));
}

absl::string_view DescrFromDType(DType t) {
  switch (t) {
    case DType::kF32: return "<f4";
    case DType::kF16: return "<f2";
    case DType::kF64: return "<f8";
    case DType::kI8: return "|i1";
    case DType::kU8: return "|u1";
    case DType::kI32: return "<i4";
    case DType::kI64: return "<i8";
    case DType::kBool: return "|b1";
    case DType::kBF16:  // numpy has no bfloat16: written as its raw bits
      return "<u2";
    case DType::kI4: return "|u1";
    case DType::kI16: return "<i2";
    case DType::kU16: return "<u2";
    case DType::kU32: return "<u4";
    case DType::kU64: return "<u8";
  }
  return "|u1";
}

// Finds the value text for 'key' in the header dict: "{'descr': '<f4', 'fortran_order': False, ...}".
absl::StatusOr<std::string> DictValue(absl::string_view header, absl::string_view key, absl::string_view what) {
  const std::string quoted = absl::StrCat("'", key, "'");
  size_t p = header.find(quoted);
  if (p == absl::string_view::npos) return absl::InvalidArgumentError(absl::StrCat(what, ": header lacks '", key, "'"));
  p = header.find(':', p + quoted.size());
  if (p == absl::string_view::npos) return absl::InvalidArgumentError(absl::StrCat(what, ": malformed header"));
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  if (p >= header.size()) return absl::InvalidArgumentError(absl::StrCat(what, ": malformed header"));
  size_t end;
  if (header[p] == '(') {
    end = header.find(')', p);
    if (end == absl::string_view::npos) return absl::InvalidArgumentError(absl::StrCat(what, ": malformed shape"));
    ++end;
  } else if (header[p] == '\'') {
    end = header.find('\'', p + 1);
    if (end == absl::string_view::npos) return absl::InvalidArgumentError(absl::StrCat(what, ": malformed header"));
    ++end;
  } else {
    end = header.find_first_of(",}", p);
    if (end == absl::string_view::npos) end = header.size();
  }
  return std::string(absl::StripAsciiWhitespace(header.substr(p, end - p)));
}

}  // namespace

absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes, absl::string_view what) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": not a .npy file (bad magic)"));
  }
  const uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return absl::InvalidArgumentError(absl::StrCat(what, ": truncated header"));
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(what, ": unsupported .npy format version ", major));
  }
  if (header_start + header_len > bytes.size()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": truncated header (", bytes.size(), " bytes)"));
  }
  absl::string_view header = bytes.substr(header_start, header_len);
  auto descr = DictValue(header, "descr", what);
  if (!descr.ok()) return descr.status();
  auto fortran = DictValue(header, "fortran_order", what);
  if (!fortran.ok()) return fortran.status();
  auto shape_text = DictValue(header, "shape", what);
  if (!shape_text.ok()) return shape_text.status();
  if (*fortran != "False") {
    return absl::UnimplementedError(absl::StrCat(what, ": Fortran-order arrays are not supported (save with np.ascontiguousarray)"));
  }
  std::string d = *descr;
  if (d.size() < 2 || d.front() != '\'' || d.back() != '\'') return absl::InvalidArgumentError(absl::StrCat(what, ": malformed descr"));
  auto dtype = DTypeFromDescr(d.substr(1, d.size() - 2), what);
  if (!dtype.ok()) return dtype.status();
  std::vector<int64_t> shape;
  absl::string_view s = *shape_text;
  s = absl::StripPrefix(absl::StripSuffix(s, ")"), "(");
  for (absl::string_view part : absl::StrSplit(s, ',', absl::SkipWhitespace())) {
    int64_t v;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &v) || v < 0) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": malformed shape '", *shape_text, "'"));
    }
    shape.push_back(v);
  }
  // Guard the element count against overflow, and the header's size against the data the file holds,
  // before allocating: a 100-byte file claiming shape (1000000000, 4) is truncated, not a 16 GB tensor.
  int64_t count = 1;
  for (int64_t v : shape) {
    if (v != 0 && count > (int64_t{1} << 40) / v) return absl::InvalidArgumentError(absl::StrCat(what, ": shape too large"));
    count *= v;
  }
  const size_t data_start = header_start + header_len;
  const size_t data_bytes = DTypeStorageBytes(*dtype, count);
  if (bytes.size() - data_start < data_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": truncated data: shape ", ShapeToString(shape), " needs ",
                                                   data_bytes, " bytes, file has ", bytes.size() - data_start));
  }
  Tensor t(*dtype, shape);
  if (data_bytes > 0) std::memcpy(t.raw_data(), bytes.data() + data_start, data_bytes);
  return t;
}

absl::StatusOr<Tensor> ReadNpy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::stringstream ss;
  ss << f.rdbuf();
  return ParseNpy(ss.str(), path);
}

std::string SerializeNpy(const Tensor& t) {
  std::string shape;
  for (int64_t d : t.shape()) absl::StrAppend(&shape, d, ",");
  if (t.rank() > 1) shape.pop_back();
  std::string header = absl::StrCat("{'descr': '", DescrFromDType(t.dtype()), "', 'fortran_order': False, 'shape': (",
                                    shape, "), }");
  // Pad so that the data starts 64-byte aligned, ending with '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::string out(kMagic, 6);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  out.append(static_cast<const char*>(t.raw_data()), t.byte_size());
  return out;
}

absl::Status WriteNpy(const std::string& path, const Tensor& t) {
  return WriteFileAtomically(path, SerializeNpy(t));
}

}  // namespace tessel
