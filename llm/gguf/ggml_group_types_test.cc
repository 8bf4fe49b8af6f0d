// Tessel's group-wise INT4/INT3 GGUF types: the byte layout against hand-packed rows, the type table,
// and GGUF files that carry them (loading, unknown ids, truncation).
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "support/mapped_file.h"
#include "llm/gguf/ggml_types.h"
#include "llm/gguf/gguf.h"
#include "llm/gguf/gguf_writer.h"

namespace tessel::llm {
namespace {

TEST(GgmlGroupTypesTest, TableAndNames) {
  absl::StatusOr<GgmlType> t = TesselGroupType(3, 128, true);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, GgmlType::kTesselI3G128A);
  EXPECT_EQ(GgmlTypeName(*t), "TESSEL_I3G128_A");
  EXPECT_EQ(*ParseGgmlType("tessel_i4g64"), GgmlType::kTesselI4G64);
  // 128 elements: 48 code bytes + 2 scale bytes + zero byte + padding byte.
  EXPECT_EQ(GgmlRowBytes(GgmlType::kTesselI3G128A, 256), 2u * 52u);
  EXPECT_EQ(GgmlRowBytes(GgmlType::kTesselI4G32, 64), 2u * 18u);
  EXPECT_FALSE(TesselGroupType(2, 128, false).ok());
  EXPECT_FALSE(TesselGroupType(4, 96, false).ok());
  TesselGroupFormat f;
  EXPECT_FALSE(GetTesselGroupFormat(GgmlType::kQ4_0, &f));
  for (int bits : {3, 4}) {
    for (int group : {32, 64, 128}) {
      for (bool asym : {false, true}) {
        ASSERT_TRUE(GetTesselGroupFormat(*TesselGroupType(bits, group, asym), &f));
        EXPECT_EQ(f.bits, bits);
        EXPECT_EQ(f.group, group);
        EXPECT_EQ(f.asymmetric, asym);
      }
    }
  }
}

TEST(GgmlGroupTypesTest, Int4LayoutByHand) {
  // One group of 32, asymmetric: codes c_j = j % 16, scale 0.5, zero 3.
  std::vector<uint8_t> codes(32);
  for (int j = 0; j < 32; ++j) codes[j] = static_cast<uint8_t>(j % 16);
  const float scale = 0.5f;
  const uint8_t zero = 3;
  std::vector<uint8_t> row(GgmlRowBytes(GgmlType::kTesselI4G32A, 32));
  ASSERT_EQ(row.size(), 20u);
  PackTesselGroupRow(GgmlType::kTesselI4G32A, codes.data(), &scale, &zero, 32, row.data());
  // Byte j: element j low, element j + 16 high (Int4Group's order); then half 0.5 = 0x3800; zero; pad.
  for (int j = 0; j < 16; ++j) EXPECT_EQ(row[j], static_cast<uint8_t>((j % 16) | ((j + 16) % 16) << 4)) << j;
  EXPECT_EQ(row[16], 0x00);
  EXPECT_EQ(row[17], 0x38);
  EXPECT_EQ(row[18], 3);
  EXPECT_EQ(row[19], 0);
  float out[32];
  DequantizeRow(GgmlType::kTesselI4G32A, row.data(), out, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(out[j], (j % 16 - 3) * 0.5f) << j;
}

TEST(GgmlGroupTypesTest, Int3LayoutByHand) {
  // One symmetric group of 32 (zero 4): low bit pairs of element k*8 + j in byte j at bits 2k; the
  // high bit of element k*4 + j in byte 8 + j at bit k.
  std::vector<uint8_t> codes(32);
  for (int j = 0; j < 32; ++j) codes[j] = static_cast<uint8_t>((j * 5) % 8);
  const float scale = 2.0f;
  std::vector<uint8_t> row(GgmlRowBytes(GgmlType::kTesselI3G32, 32));
  ASSERT_EQ(row.size(), 14u);
  PackTesselGroupRow(GgmlType::kTesselI3G32, codes.data(), &scale, nullptr, 32, row.data());
  for (int j = 0; j < 8; ++j) {
    uint8_t want = 0;
    for (int k = 0; k < 4; ++k) want |= static_cast<uint8_t>((codes[k * 8 + j] & 3) << (2 * k));
    EXPECT_EQ(row[j], want) << j;
  }
  for (int j = 0; j < 4; ++j) {
    uint8_t want = 0;
    for (int k = 0; k < 8; ++k) want |= static_cast<uint8_t>((codes[k * 4 + j] >> 2) << k);
    EXPECT_EQ(row[8 + j], want) << j;
  }
  EXPECT_EQ(row[12], 0x00);
  EXPECT_EQ(row[13], 0x40);  // half 2.0
  float out[32];
  DequantizeRow(GgmlType::kTesselI3G32, row.data(), out, 32);
  for (int j = 0; j < 32; ++j) {
    EXPECT_EQ(out[j], (codes[j] - 4) * 2.0f) << j;
    EXPECT_EQ(TesselGroupCode(TesselGroupFormat{3, 32, false}, row.data(), j), codes[j]);
  }
}

// Offset of tensor `name`'s type id in a serialized file.
size_t TypeOffset(const std::string& file, const std::string& name, int ndims) {
  return file.find(name) + name.size() + 4 + 8 * ndims;
}

TEST(GgmlGroupTypesTest, GgufFilesWithGroupTypes) {
  const int64_t rows = 2, cols = 128;
  std::vector<float> w(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) w[i] = static_cast<float>((i * 37) % 23) / 10.0f - 1.0f;
  std::string q(GgmlRowBytes(GgmlType::kTesselI4G128, cols) * rows, '\0');
  for (int64_t r = 0; r < rows; ++r) {
    QuantizeRow(GgmlType::kTesselI4G128, &w[r * cols], &q[r * GgmlRowBytes(GgmlType::kTesselI4G128, cols)], cols);
  }
  GgufWriter writer;
  ASSERT_TRUE(writer.AddTensor("m", GgmlType::kTesselI4G128, {cols, rows}, q).ok());
  EXPECT_EQ(writer.AddTensor("bad", GgmlType::kTesselI4G128, {cols, rows}, q.substr(1)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(writer.AddTensor("bad", GgmlType::kTesselI4G128, {96, rows}, q).code(),
            absl::StatusCode::kInvalidArgument);
  const std::string file = writer.Serialize();
  absl::StatusOr<std::unique_ptr<GgufFile>> g = GgufFile::Parse(MappedFile::FromBytes(file, "g.gguf"));
  ASSERT_TRUE(g.ok()) << g.status();
  const GgufTensorInfo* t = (*g)->FindTensor("m");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->type, GgmlType::kTesselI4G128);
  EXPECT_EQ(t->size_bytes, q.size());
  EXPECT_EQ(std::memcmp(t->data, q.data(), q.size()), 0);

  std::string unknown = file;
  const uint32_t id = 99;  // between ggml's ids and Tessel's
  std::memcpy(&unknown[TypeOffset(file, "m", 2)], &id, 4);
  absl::StatusOr<std::unique_ptr<GgufFile>> u = GgufFile::Parse(MappedFile::FromBytes(unknown, "u.gguf"));
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().message().find("unknown ggml type id 99"), std::string::npos) << u.status();

  // 40 bytes: past the alignment padding after the tensor (132 bytes padded to 160).
  absl::StatusOr<std::unique_ptr<GgufFile>> cut =
      GgufFile::Parse(MappedFile::FromBytes(file.substr(0, file.size() - 40), "cut.gguf"));
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kOutOfRange) << cut.status();
  EXPECT_NE(cut.status().message().find("TESSEL_I4G128"), std::string::npos) << cut.status();
}

}  // namespace
}  // namespace tessel::llm
