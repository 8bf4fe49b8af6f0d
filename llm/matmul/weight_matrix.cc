#include "llm/matmul/weight_matrix.h"

#include <cstring>

#include "kernels/gemv/gemv.h"
#include "llm/matmul/row_dot.h"

namespace tessel::llm {
namespace {

// Which of kernels/gemv's Panel16 layouts a type takes, named once for the functions below.
struct Panel16Kind {
  enum Family { kNone, kBlocks, kQ4_1, kQ5, kGroup, kKQuant } family = kNone;
  GemvFormat format = GemvFormat::kQ8_0;  // kBlocks: Q4_0 or Q8_0
  Int4GroupRecords group;                 // kGroup: a Tessel group type's row records
  int kquant = 0;                         // kKQuant: 2 to 6 (Q2_K ... Q6_K) or kKQuantIQ4_XS
  bool mins = false;                      // kQ5: Q5_1 (else Q5_0)
  bool nonlinear = false;                 // kBlocks: IQ4_NL, Q4_0's bytes with level codes
};

Panel16Kind KindOf(const WeightMatrix& w) {
  Panel16Kind k;
  switch (w.type) {
    case GgmlType::kQ4_0:
    case GgmlType::kQ8_0:
      k.family = Panel16Kind::kBlocks;
      k.format = w.type == GgmlType::kQ4_0 ? GemvFormat::kQ4_0 : GemvFormat::kQ8_0;
      return k;
    case GgmlType::kIQ4_NL:
      k.family = Panel16Kind::kBlocks;
      k.format = GemvFormat::kQ4_0;
      k.nonlinear = true;
      return k;
    case GgmlType::kIQ4_XS: k.family = Panel16Kind::kKQuant; k.kquant = kKQuantIQ4_XS; return k;
    case GgmlType::kQ4_1: k.family = Panel16Kind::kQ4_1; return k;
    case GgmlType::kQ5_0: k.family = Panel16Kind::kQ5; return k;
    case GgmlType::kQ5_1: k.family = Panel16Kind::kQ5; k.mins = true; return k;
    case GgmlType::kQ2_K: k.family = Panel16Kind::kKQuant; k.kquant = 2; return k;
    case GgmlType::kQ3_K: k.family = Panel16Kind::kKQuant; k.kquant = 3; return k;
    case GgmlType::kQ4_K: k.family = Panel16Kind::kKQuant; k.kquant = 4; return k;
    case GgmlType::kQ5_K: k.family = Panel16Kind::kKQuant; k.kquant = 5; return k;
    case GgmlType::kQ6_K: k.family = Panel16Kind::kKQuant; k.kquant = 6; return k;
    default: break;
  }
  // kernels/gemv's description of a Tessel group type's rows (ggml_types.h TesselGroupFormat).
  TesselGroupFormat f;
  if (!GetTesselGroupFormat(w.type, &f)) return k;
  k.family = Panel16Kind::kGroup;
  k.group.bits = f.bits;
  k.group.base = w.data;
  k.group.row_bytes = static_cast<int64_t>(w.row_bytes());
  k.group.scales_offset = f.ScalesOffset(w.cols);
  k.group.zeros_offset = f.ZerosOffset(w.cols);
  k.group.group_size = f.group;
  k.group.asymmetric = f.asymmetric;
  return k;
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
  const Panel16Kind k = KindOf(*this);
  switch (k.family) {
    case Panel16Kind::kBlocks: UnpackGemvPanel16Row(k.format, data, cols, r, scratch); break;
    case Panel16Kind::kQ4_1: UnpackGemvPanel16Q4_1Row(data, cols, r, scratch); break;
    case Panel16Kind::kQ5: UnpackGemvPanel16Q5Row(data, cols, k.mins, r, scratch); break;
    case Panel16Kind::kGroup: UnpackGemvPanel16GroupRow(data, k.group, cols, r, scratch); break;
    case Panel16Kind::kKQuant: UnpackGemvPanel16KQuantRow(k.kquant, data, cols, r, scratch); break;
    case Panel16Kind::kNone: break;  // never repacked
  }
  return scratch;
}

const GemmQ8Kernel* Panel16Kernel(GgmlType type) {
  WeightMatrix probe;
  probe.type = type;
  const Panel16Kind k = KindOf(probe);
  switch (k.family) {
    case Panel16Kind::kBlocks: return FastGemmQ8Panel16Kernel(k.format);  // IQ4_NL: Q4_0's
    case Panel16Kind::kKQuant:
      if (const GemmQ8Kernel* e = FastGemmQ8Panel16KQuantKernel(k.kquant)) return e;
      return FastGemmQ8Panel16Kernel(GemvFormat::kInt4Group);
    case Panel16Kind::kQ4_1:
    case Panel16Kind::kQ5:
    case Panel16Kind::kGroup: return FastGemmQ8Panel16Kernel(GemvFormat::kInt4Group);
    case Panel16Kind::kNone: break;
  }
  return nullptr;
}

bool Panel16Available(GgmlType type) { return Panel16Kernel(type) != nullptr; }

size_t Panel16Bytes(const WeightMatrix& w) {
  const Panel16Kind k = KindOf(w);
  switch (k.family) {
    case Panel16Kind::kBlocks: return static_cast<size_t>(GemvPanel16Bytes(k.format, w.rows, w.cols));
    case Panel16Kind::kQ4_1: return static_cast<size_t>(GemvPanel16Q4_1Bytes(w.rows, w.cols));
    case Panel16Kind::kQ5: return static_cast<size_t>(GemvPanel16Q5Bytes(w.rows, w.cols, k.mins));
    case Panel16Kind::kGroup:
      return static_cast<size_t>(
          GemvPanel16GroupBytes(w.rows, w.cols, k.group.group_size, k.group.asymmetric, k.group.bits));
    case Panel16Kind::kKQuant: return static_cast<size_t>(GemvPanel16KQuantBytes(k.kquant, w.rows, w.cols));
    case Panel16Kind::kNone: break;
  }
  return 0;
}

bool Panel16GroupShape(const WeightMatrix& w, GemmQ8Args* args) {
  const Panel16Kind k = KindOf(w);
  args->nonlinear = k.nonlinear;
  switch (k.family) {
    case Panel16Kind::kQ4_1:
    case Panel16Kind::kQ5:
      args->group_size = kQuantBlock;
      args->asymmetric = false;
      args->group_bits = k.family == Panel16Kind::kQ5 ? 5 : 4;
      args->group_mins = k.family == Panel16Kind::kQ4_1 || k.mins;
      return true;
    case Panel16Kind::kGroup:
      args->group_size = k.group.group_size;
      args->asymmetric = k.group.asymmetric;
      args->group_bits = k.group.bits;
      args->group_mins = false;
      return true;
    case Panel16Kind::kKQuant: args->kquant = k.kquant; return true;
    case Panel16Kind::kBlocks:
    case Panel16Kind::kNone: break;
  }
  return false;
}

WeightMatrix RepackPanel16(const WeightMatrix& w, uint8_t* dst) {
  const Panel16Kind k = KindOf(w);
  switch (k.family) {
    case Panel16Kind::kBlocks: PackGemvPanel16(k.format, w.data, w.rows, w.cols, dst); break;
    case Panel16Kind::kQ4_1: PackGemvPanel16Q4_1(w.data, w.rows, w.cols, dst); break;
    case Panel16Kind::kQ5: PackGemvPanel16Q5(w.data, w.rows, w.cols, k.mins, dst); break;
    case Panel16Kind::kGroup: PackGemvPanel16Group(k.group, w.rows, w.cols, dst); break;
    case Panel16Kind::kKQuant: PackGemvPanel16KQuant(k.kquant, w.data, w.rows, w.cols, dst); break;
    case Panel16Kind::kNone: return w;  // callers check Panel16Available
  }
  WeightMatrix out = w;
  out.data = dst;
  out.layout = WeightLayout::kPanel16;
  return out;
}

std::optional<WeightLayout> DecodeLayout(const WeightMatrix& m) {
  if (m.layout != WeightLayout::kRows) return std::nullopt;
  if (Panel16Available(m.type)) return WeightLayout::kPanel16;
  if (ColumnBlocksAvailable(m.type)) {
    return m.cols > kColumnBlockCols ? WeightLayout::kColumnBlocks : WeightLayout::kRows;
  }
  return std::nullopt;
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
