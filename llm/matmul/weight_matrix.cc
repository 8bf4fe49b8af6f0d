#include "llm/matmul/weight_matrix.h"

#include <cstring>

#include "kernels/gemv/gemv.h"

namespace tessel::llm {
namespace {

GemvFormat Panel16Format(GgmlType type) { return type == GgmlType::kQ4_0 ? GemvFormat::kQ4_0 : GemvFormat::kQ8_0; }

}  // namespace

size_t WeightMatrix::bytes() const {
  if (layout == WeightLayout::kPanel16) return static_cast<size_t>(GemvPanel16Bytes(Panel16Format(type), rows, cols));
  return row_bytes() * static_cast<size_t>(rows);
}

const uint8_t* WeightMatrix::RowBlocks(int64_t r, uint8_t* scratch) const {
  if (layout == WeightLayout::kRows) return row(r);
  if (layout == WeightLayout::kColumnBlocks) {
    for (int64_t b = 0; b < column_blocks(); ++b) {
      const WeightMatrix block = ColumnBlock(b);
      std::memcpy(scratch + GgmlRowBytes(type, b * kColumnBlockCols), block.row(r), block.row_bytes());
    }
    return scratch;
  }
  UnpackGemvPanel16Row(Panel16Format(type), data, cols, r, scratch);
  return scratch;
}

bool Panel16Available(GgmlType type) {
  if (type == GgmlType::kQ4_0) return FastGemmQ8Panel16Kernel(GemvFormat::kQ4_0) != nullptr;
  if (type == GgmlType::kQ8_0) return FastGemmQ8Panel16Kernel(GemvFormat::kQ8_0) != nullptr;
  return false;
}

size_t Panel16Bytes(const WeightMatrix& w) {
  return static_cast<size_t>(GemvPanel16Bytes(Panel16Format(w.type), w.rows, w.cols));
}

WeightMatrix RepackPanel16(const WeightMatrix& w, uint8_t* dst) {
  PackGemvPanel16(Panel16Format(w.type), w.data, w.rows, w.cols, dst);
  WeightMatrix out = w;
  out.data = dst;
  out.layout = WeightLayout::kPanel16;
  return out;
}

WeightMatrix RepackColumnBlocks(const WeightMatrix& w, uint8_t* dst) {
  WeightMatrix out = w;
  out.data = dst;
  out.layout = WeightLayout::kColumnBlocks;
  for (int64_t b = 0; b < out.column_blocks(); ++b) {
    const WeightMatrix block = out.ColumnBlock(b);
    uint8_t* block_dst = dst + (block.data - out.data);
    const size_t offset = GgmlRowBytes(w.type, b * kColumnBlockCols);  // of the block's columns in a row
    for (int64_t r = 0; r < w.rows; ++r) {
      std::memcpy(block_dst + r * block.row_bytes(), w.row(r) + offset, block.row_bytes());
    }
  }
  return out;
}

}  // namespace tessel::llm
