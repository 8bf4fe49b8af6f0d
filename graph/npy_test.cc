// .npy parsing against bytes written by numpy 1.24 (np.save), round trips and malformed inputs.
#include "graph/npy.h"

#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace tessel {
namespace {

// np.save(f, np.array([[1.5, -2.0, 3.25]], dtype=np.float32))
std::string NumpyF32() {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }";
  header.append(0x76 - header.size() - 1, ' ');
  header.push_back('\n');
  return std::string("\x93NUMPY\x01\x00\x76\x00", 10) + header +
         std::string("\x00\x00\xc0\x3f\x00\x00\x00\xc0\x00\x00\x50\x40", 12);
}

TEST(NpyTest, ParsesNumpyOutput) {
  const std::string bytes = NumpyF32();
  ASSERT_EQ(bytes.size(), 140u);  // numpy's file size
  absl::StatusOr<Tensor> t = ParseNpy(bytes);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DType::kF32);
  EXPECT_EQ(t->shape(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(t->data<float>()[0], 1.5f);
  EXPECT_EQ(t->data<float>()[1], -2.0f);
  EXPECT_EQ(t->data<float>()[2], 3.25f);
}

TEST(NpyTest, RoundTripsEveryDType) {
  for (DType d : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8, DType::kU8, DType::kI16,
                  DType::kI32, DType::kU32, DType::kI64, DType::kU64, DType::kBool}) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{}, {5}, {2, 3}, {2, 0, 4}}) {
      Tensor t(d, shape);
      for (size_t i = 0; i < t.byte_size(); ++i) static_cast<uint8_t*>(t.raw_data())[i] = d == DType::kBool ? i % 2 : i * 7 + 1;
      const std::string bytes = SerializeNpy(t);
      EXPECT_EQ((bytes.size() - t.byte_size()) % 64, 0u) << "data should start 64-byte aligned";
      absl::StatusOr<Tensor> back = ParseNpy(bytes);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(back->dtype(), d);
      EXPECT_EQ(back->shape(), shape);
      EXPECT_EQ(0, std::memcmp(back->raw_data(), t.raw_data(), t.byte_size()));
    }
  }
}

TEST(NpyTest, RejectsMalformedInput) {
  const std::string good = NumpyF32();
  EXPECT_EQ(ParseNpy("hello").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(ParseNpy(good.substr(0, good.size() - 1)).status().message().find("truncated data"), std::string::npos);
  EXPECT_FALSE(ParseNpy(good.substr(0, 50)).ok());
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_EQ(ParseNpy(fortran).status().code(), absl::StatusCode::kUnimplemented);
  std::string big_endian = good;
  big_endian.replace(big_endian.find("<f4"), 3, ">f4");
  EXPECT_EQ(ParseNpy(big_endian).status().code(), absl::StatusCode::kUnimplemented);
  std::string bad_shape = good;
  bad_shape.replace(bad_shape.find("(1, 3)"), 6, "(1, x)");
  EXPECT_EQ(ParseNpy(bad_shape).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadNpy("/nonexistent/x.npy").status().code(), absl::StatusCode::kNotFound);
  // Every prefix fails cleanly or parses: never crashes.
  for (size_t n = 0; n < good.size(); ++n) EXPECT_FALSE(ParseNpy(good.substr(0, n)).ok()) << n;
}

TEST(NpyTest, ChecksTheHeaderShapeAgainstTheDataBeforeAllocating) {
  // 16 bytes of data under a header claiming 16 GB: truncated, said before anything is allocated.
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 4), }\n";
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header;
  bytes.append(16, '\0');
  absl::StatusOr<Tensor> t = ParseNpy(bytes, "big.npy");
  EXPECT_EQ(t.status().message(),
            "big.npy: truncated data: shape [1000000000,4] needs 16000000000 bytes, file has 16");
}

}  // namespace
}  // namespace tessel
