#include "llm/matmul/weight_matrix.h"

#include <cstring>

#include "kernels/gemv/gemv.h"

namespace tessel::llm {
namespace {

GemvFormat Panel16Format(GgmlType type) { return type == GgmlType::kQ4_0 ? GemvFormat::kQ4_0 : GemvFormat::kQ8_0; }

// kernels/gemv's description of a Tessel group type's rows (ggml_types.h TesselGroupFormat, INT4 or
// INT3); false for every other type.
bool GroupRecords(const WeightMatrix& w, Int4GroupRecords* out) {
  TesselGroupFormat f;
  if (!GetTesselGroupFormat(w.type, &f)) return false;
  out->bits = f.bits;
  out->base = w.data;
  out->row_bytes = static_cast<int64_t>(w.row_bytes());
  out->scales_offset = f.ScalesOffset(w.cols);
  out->zeros_offset = f.ZerosOffset(w.cols);
  out->group_size = f.group;
  out->asymmetric = f.asymmetric;
  return true;
}

// 4, 5 or 6 (Q4_K, Q5_K, Q6_K): kernels/gemv's k-quant Panel16 layouts; 0 for every other type.
int KQuant(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_K: return 4;
    case GgmlType::kQ5_K: return 5;
    case GgmlType::kQ6_K: return 6;
    default: return 0;
  }
}

}  // namespace

size_t WeightMatrix::bytes() const {
  if (layout == WeightLayout::kPanel16) return Panel16Bytes(*this);
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
  if (const int kquant = KQuant(type)) {
    UnpackGemvPanel16KQuantRow(kquant, data, cols, r, scratch);
  } else if (Int4GroupRecords g; GroupRecords(*this, &g)) {
    UnpackGemvPanel16GroupRow(data, g, cols, r, scratch);
  } else if (type == GgmlType::kQ4_1) {
    UnpackGemvPanel16Q4_1Row(data, cols, r, scratch);
  } else {
    UnpackGemvPanel16Row(Panel16Format(type), data, cols, r, scratch);
  }
  return scratch;
}

bool Panel16Available(GgmlType type) {
  if (type == GgmlType::kQ4_0) return FastGemmQ8Panel16Kernel(GemvFormat::kQ4_0) != nullptr;
  if (type == GgmlType::kQ8_0) return FastGemmQ8Panel16Kernel(GemvFormat::kQ8_0) != nullptr;
  TesselGroupFormat f;
  if (GetTesselGroupFormat(type, &f) || type == GgmlType::kQ4_1 || KQuant(type) != 0) {
    return FastGemmQ8Panel16Kernel(GemvFormat::kInt4Group) != nullptr;
  }
  return false;
}

size_t Panel16Bytes(const WeightMatrix& w) {
  if (const int kquant = KQuant(w.type)) return static_cast<size_t>(GemvPanel16KQuantBytes(kquant, w.rows, w.cols));
  if (Int4GroupRecords g; GroupRecords(w, &g)) {
    return static_cast<size_t>(GemvPanel16GroupBytes(w.rows, w.cols, g.group_size, g.asymmetric, g.bits));
  }
  if (w.type == GgmlType::kQ4_1) return static_cast<size_t>(GemvPanel16Q4_1Bytes(w.rows, w.cols));
  return static_cast<size_t>(GemvPanel16Bytes(Panel16Format(w.type), w.rows, w.cols));
}

bool Panel16GroupShape(const WeightMatrix& w, GemmQ8Args* args) {
  if (const int kquant = KQuant(w.type)) {
    args->kquant = kquant;
    return true;
  }
  if (w.type == GgmlType::kQ4_1) {
    args->group_size = kQuantBlock;
    args->asymmetric = false;
    args->group_bits = 4;
    args->group_mins = true;
    return true;
  }
  Int4GroupRecords g;
  if (!GroupRecords(w, &g)) return false;
  args->group_size = g.group_size;
  args->asymmetric = g.asymmetric;
  args->group_bits = g.bits;
  args->group_mins = false;
  return true;
}

WeightMatrix RepackPanel16(const WeightMatrix& w, uint8_t* dst) {
  if (const int kquant = KQuant(w.type)) {
    PackGemvPanel16KQuant(kquant, w.data, w.rows, w.cols, dst);
  } else if (Int4GroupRecords g; GroupRecords(w, &g)) {
    PackGemvPanel16Group(g, w.rows, w.cols, dst);
  } else if (w.type == GgmlType::kQ4_1) {
    PackGemvPanel16Q4_1(w.data, w.rows, w.cols, dst);
  } else {
    PackGemvPanel16(Panel16Format(w.type), w.data, w.rows, w.cols, dst);
  }
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
