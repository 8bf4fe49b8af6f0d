// AOT C emitter: one block of C per planned op, reading and writing the planned arena offsets.
#include "codegen/c_emitter.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "artifact/plan_graph.h"
#include "graph/dtype.h"
#include "graph/graph.h"
#include "graph/ops/nn_params.h"
#include "support/atomic_file.h"

namespace tessel {
namespace {

constexpr size_t kAlign = 64;

bool IsIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

std::string Sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "t_" + out;
  return out;
}

// A float as a C literal; infinities through math.h's INFINITY.
std::string F(float v) {
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  std::string s = absl::StrFormat("%.9g", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + "f";
}

int64_t Product(const std::vector<int64_t>& s, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = from; i < s.size() && i < to; ++i) p *= s[i];
  return p;
}

// The clamp bounds of a fused activation and the activation applied by a separate pass after it.
struct Act {
  float lo = -INFINITY;
  float hi = INFINITY;
  std::string post;  // "", "hardswish", "sigmoid" or "silu"
};

// out[j * rows + i] = in[i * cols + j]: 1x1 convolution weights [M, C] as a GEMM's B [C][M], depthwise
// weights [C, KH * KW] tap-major.
void TransposeInto(const std::vector<float>& in, int64_t rows, int64_t cols, float* out) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) out[j * rows + i] = in[i * cols + j];
}

absl::StatusOr<Act> ReadAct(const Node& node, const std::string& prefix) {
  const std::string kind = node.GetString(prefix + "activation", "none");
  Act a;
  if (kind == "none") return a;
  if (kind == "relu") {
    a.lo = 0.0f;
  } else if (kind == "clip") {
    a.lo = node.GetFloat(prefix + "clip_min", -INFINITY);
    a.hi = node.GetFloat(prefix + "clip_max", INFINITY);
  } else if (kind == "hardswish" || kind == "sigmoid" || kind == "silu") {
    a.post = kind;
  } else {
    return absl::UnimplementedError(absl::StrCat("activation '", kind, "'"));
  }
  return a;
}

class Emitter {
 public:
  Emitter(const artifact::Plan& plan, absl::string_view weights, std::string name)
      : plan_(plan), weights_(weights), name_(std::move(name)) {}

  absl::Status Build();
  std::string Header() const;
  std::string Source() const;
  const std::string& blob() const { return blob_; }

 private:
  const artifact::Tensor& T(int i) const { return plan_.tensors(i); }
  std::vector<int64_t> Shape(int i) const { return {T(i).shape().begin(), T(i).shape().end()}; }
  int64_t Numel(int i) const { return Product(Shape(i)); }
  bool IsWeight(int i) const { return T(i).storage() == artifact::Tensor::WEIGHTS; }

  absl::Status CheckTensor(int i) const;
  absl::StatusOr<std::vector<float>> Values(int i) const;
  size_t AddBlob(const void* data, size_t bytes);
  size_t AddBlob(const std::vector<float>& v) { return AddBlob(v.data(), v.size() * sizeof(float)); }
  // A C expression for the base of tensor i (arena, or the weights blob after copying it there).
  absl::StatusOr<std::string> Ptr(int i);
  std::string Packed(const std::vector<float>& v) { return absl::StrCat("W(", AddBlob(v), ")"); }
  std::string Window(const WindowParams& p, int64_t h, int64_t w, int64_t oh, int64_t ow);
  void Need(int64_t floats) { scratch_floats_ = std::max<int64_t>(scratch_floats_, floats); }
  void L(const std::string& line) { absl::StrAppend(&body_, "  ", line, "\n"); }
  bool Overlaps(int a, int b) const;

  absl::Status EmitOp(const artifact::Op& op, const Node& node);
  absl::Status EmitConv(const artifact::Op& op, const Node& node, bool nhwc);
  absl::Status EmitDwPw(const artifact::Op& op, const Node& node);
  absl::Status EmitPool(const artifact::Op& op, const Node& node, bool nhwc);
  absl::Status EmitGemm(const artifact::Op& op, const Node& node);
  absl::Status EmitMatMul(const artifact::Op& op);
  absl::Status EmitBinary(const artifact::Op& op, const std::string& c_op);
  absl::Status EmitUnary(const artifact::Op& op, const Node& node);
  absl::Status EmitCopy(const artifact::Op& op);
  absl::Status EmitSoftmax(const artifact::Op& op, const Node& node);
  absl::Status EmitTranspose(const artifact::Op& op, const Node& node);
  absl::Status EmitConcat(const artifact::Op& op, const Node& node);
  void EmitPostAct(const std::string& kind, const std::string& y, int64_t n);

  const artifact::Plan& plan_;
  absl::string_view weights_;
  std::string name_;
  std::string blob_;
  std::map<int, size_t> weight_offsets_;  // plan tensor -> offset in blob_
  std::string globals_;                   // file-scope tables (windows, shapes)
  std::string body_;                      // the statements of NAME_run
  int64_t scratch_floats_ = 0;
  int counter_ = 0;
  std::vector<std::string> input_params_, output_params_;
};

absl::Status Emitter::CheckTensor(int i) const {
  if (i < 0 || i >= plan_.tensors_size()) {
    return absl::InvalidArgumentError(absl::StrCat("tensor index ", i, " is out of range (", plan_.tensors_size(),
                                                   " tensors); the plan is corrupt"));
  }
  if (static_cast<DType>(T(i).dtype()) != DType::kF32) {
    return absl::UnimplementedError(absl::StrCat("tensor '", T(i).name(), "' has dtype ",
                                                 DTypeName(static_cast<DType>(T(i).dtype())),
                                                 "; the C emitter handles f32 tensors only"));
  }
  if (static_cast<uint64_t>(Numel(i)) * sizeof(float) != T(i).bytes()) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", T(i).name(), "' has ", T(i).bytes(),
                                                   " bytes for shape [", absl::StrJoin(Shape(i), ","), "]"));
  }
  const uint64_t limit = IsWeight(i) ? weights_.size() : plan_.arena_bytes();
  if (T(i).offset() > limit || T(i).bytes() > limit - T(i).offset()) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", T(i).name(), "' at byte offset ", T(i).offset(), " (",
                                                   T(i).bytes(), " bytes) runs past its section (", limit,
                                                   " bytes)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> Emitter::Values(int i) const {
  if (!IsWeight(i)) {
    return absl::UnimplementedError(
        absl::StrCat("tensor '", T(i).name(), "' must be a constant (weights) for the C emitter"));
  }
  std::vector<float> v(Numel(i));
  std::memcpy(v.data(), weights_.data() + T(i).offset(), v.size() * sizeof(float));
  return v;
}

size_t Emitter::AddBlob(const void* data, size_t bytes) {
  blob_.resize((blob_.size() + kAlign - 1) / kAlign * kAlign, '\0');
  const size_t offset = blob_.size();
  blob_.append(static_cast<const char*>(data), bytes);
  return offset;
}

absl::StatusOr<std::string> Emitter::Ptr(int i) {
  absl::Status s = CheckTensor(i);
  if (!s.ok()) return s;
  if (!IsWeight(i)) return absl::StrCat("A(", T(i).offset(), ")");
  auto it = weight_offsets_.find(i);
  if (it == weight_offsets_.end()) {
    it = weight_offsets_.emplace(i, AddBlob(weights_.data() + T(i).offset(), T(i).bytes())).first;
  }
  return absl::StrCat("W(", it->second, ")");
}

bool Emitter::Overlaps(int a, int b) const {
  if (IsWeight(a) || IsWeight(b)) return false;
  return T(a).offset() < T(b).offset() + T(b).bytes() && T(b).offset() < T(a).offset() + T(a).bytes();
}

std::string Emitter::Window(const WindowParams& p, int64_t h, int64_t w, int64_t oh, int64_t ow) {
  const std::string name = absl::StrCat("win", counter_++);
  absl::StrAppend(&globals_, "static const tsl_window ", name, " = {", h, ", ", w, ", ", p.kernel[0], ", ",
                  p.kernel[1], ", ", p.strides[0], ", ", p.strides[1], ", ", p.dilations[0], ", ", p.dilations[1],
                  ", ", p.pads_begin[0], ", ", p.pads_begin[1], ", ", p.pads_end[0], ", ", p.pads_end[1], ", ", oh,
                  ", ", ow, "};\n");
  return name;
}

void Emitter::EmitPostAct(const std::string& kind, const std::string& y, int64_t n) {
  if (!kind.empty()) L(absl::StrCat("tsl_f32_", kind, "__autovec(", n, ", ", y, ");"));
}

absl::StatusOr<std::vector<Dim>> ChannelsFirstDims(const std::vector<int64_t>& s, bool nhwc) {
  std::vector<int64_t> d = s;
  if (nhwc) {
    d = {s[0], s.back()};
    d.insert(d.end(), s.begin() + 1, s.end() - 1);
  }
  return DimsOf(d);
}

absl::Status Emitter::EmitConv(const artifact::Op& op, const Node& node, bool nhwc) {
  const int xi = op.inputs(0), wi = op.inputs(1), yi = op.outputs(0);
  const int bi = op.inputs_size() > 2 ? op.inputs(2) : -1;
  const int ri = op.inputs_size() > 3 ? op.inputs(3) : -1;
  if (Shape(xi).size() != 4) return absl::UnimplementedError("only 2-D convolutions (rank-4 input)");
  if (!IsWeight(wi)) return absl::UnimplementedError("the convolution weights must be constant");
  absl::StatusOr<std::vector<Dim>> xd = ChannelsFirstDims(Shape(xi), nhwc);
  absl::StatusOr<std::vector<Dim>> wd = ChannelsFirstDims(Shape(wi), nhwc);
  absl::StatusOr<ConvParams> p = ResolveConvParams(node, *xd, *wd);
  if (!p.ok()) return p.status();
  absl::StatusOr<Act> act = ReadAct(node, "");
  if (!act.ok()) return act.status();
  const int64_t n = (*xd)[0].value(), c = (*xd)[1].value(), h = (*xd)[2].value(), w = (*xd)[3].value();
  const int64_t m = (*wd)[0].value(), cg = (*wd)[1].value(), kh = (*wd)[2].value(), kw = (*wd)[3].value();
  const std::vector<int64_t> ys = Shape(yi);
  const int64_t oh = nhwc ? ys[1] : ys[2], ow = nhwc ? ys[2] : ys[3];
  const int64_t g = p->group, mg = m / g, k = kh * kw * cg;
  absl::StatusOr<std::vector<float>> wv = Values(wi);
  if (!wv.ok()) return wv.status();
  absl::StatusOr<std::string> x = Ptr(xi), y = Ptr(yi);
  if (!x.ok()) return x.status();
  if (!y.ok()) return y.status();
  std::string b = "NULL", r = "NULL";
  if (bi >= 0) {
    absl::StatusOr<std::string> bp = Ptr(bi);
    if (!bp.ok()) return bp.status();
    b = *bp;
  }
  if (ri >= 0) {
    absl::StatusOr<std::string> rp = Ptr(ri);
    if (!rp.ok()) return rp.status();
    r = *rp;
  }
  const std::string lo = F(act->lo), hi = F(act->hi);
  const bool depthwise = g == c && m == c && cg == 1 && g > 1;
  const bool pointwise = kh == 1 && kw == 1 && g == 1 && p->strides[0] == 1 && p->strides[1] == 1 &&
                         p->pads_begin[0] == 0 && p->pads_begin[1] == 0 && p->pads_end[0] == 0 &&
                         p->pads_end[1] == 0;
  // A 1x1 convolution is a plain GEMM over the pixels and needs no window.
  const std::string win = depthwise || !pointwise ? Window(*p, h, w, oh, ow) : "";
  const int64_t in_img = c * h * w, out_img = m * oh * ow;
  const std::string rn = ri >= 0 ? absl::StrCat(r, " + n * ", out_img) : "NULL";
  L(absl::StrCat("for (size_t n = 0; n < ", n, "; ++n) {"));
  if (depthwise) {
    // Depthwise, channel multiplier 1: weights [M][1][KH][KW] and [M][KH][KW][1] share one order.
    if (nhwc) {
      std::vector<float> packed(kh * kw * c);
      TransposeInto(*wv, c, kh * kw, packed.data());
      L(absl::StrCat("  tsl_f32_dwconv_nhwc_minmax__autovec(&", win, ", ", c, ", ", *x, " + n * ", in_img, ", ",
                     Packed(packed), ", ", b, ", ", rn, ", 0, ", oh, ", ", *y, " + n * ", out_img, ", ", lo, ", ", hi,
                     ");"));
    } else {
      // One plane at a time as a one-channel channels-last image.
      const std::string wp = Packed(*wv);
      L(absl::StrCat("  for (size_t ch = 0; ch < ", c, "; ++ch) {"));
      L(absl::StrCat("    tsl_f32_dwconv_nhwc_minmax__autovec(&", win, ", 1, ", *x, " + n * ", in_img, " + ch * ",
                     h * w, ", ", wp, " + ch * ", kh * kw, ", ", bi >= 0 ? b + " + ch" : "NULL", ", ",
                     ri >= 0 ? absl::StrCat(rn, " + ch * ", oh * ow) : "NULL", ", 0, ", oh, ", ", *y, " + n * ",
                     out_img, " + ch * ", oh * ow, ", ", lo, ", ", hi, ");"));
      L("  }");
    }
  } else if (nhwc) {
    // Weights [M][KH][KW][Cg] -> per group [KH][KW][Cg][Mg], the GEMM's right-hand panel.
    std::vector<float> packed(wv->size());
    for (int64_t gi = 0; gi < g; ++gi)
      for (int64_t mo = 0; mo < mg; ++mo)
        for (int64_t q = 0; q < k; ++q) packed[gi * k * mg + q * mg + mo] = (*wv)[(gi * mg + mo) * k + q];
    const std::string wp = Packed(packed);
    if (pointwise) {
      L(absl::StrCat("  tsl_f32_gemm_minmax__autovec(", oh * ow, ", ", m, ", ", c, ", ", *x, " + n * ", in_img, ", ",
                     c, ", ", wp, ", ", m, ", ", b, ", NULL, ", rn, ", ", m, ", ", *y, " + n * ", out_img, ", ", m,
                     ", ", lo, ", ", hi, ");"));
    } else {
      Need(ow * k);
      L(absl::StrCat("  for (size_t oy = 0; oy < ", oh, "; ++oy) {"));
      L(absl::StrCat("    for (size_t g = 0; g < ", g, "; ++g) {"));
      L(absl::StrCat("      tsl_f32_im2col_nhwc_row__autovec(&", win, ", ", *x, " + n * ", in_img, ", ", c, ", g * ",
                     cg, ", ", cg, ", oy, S);"));
      L(absl::StrCat("      tsl_f32_gemm_minmax__autovec(", ow, ", ", mg, ", ", k, ", S, ", k, ", ", wp, " + g * ",
                     k * mg, ", ", mg, ", ", bi >= 0 ? absl::StrCat(b, " + g * ", mg) : "NULL", ", NULL, ",
                     ri >= 0 ? absl::StrCat(rn, " + oy * ", ow * m, " + g * ", mg) : "NULL", ", ", m, ", ", *y,
                     " + n * ", out_img, " + oy * ", ow * m, " + g * ", mg, ", ", m, ", ", lo, ", ", hi, ");"));
      L("    }");
      L("  }");
    }
  } else {
    // Channels first: weights [M][Cg*KH*KW] on the left, the transposed im2col row on the right.
    const std::string wp = Packed(*wv);
    if (pointwise) {
      L(absl::StrCat("  tsl_f32_gemm_minmax__autovec(", m, ", ", h * w, ", ", c, ", ", wp, ", ", c, ", ", *x,
                     " + n * ", in_img, ", ", h * w, ", NULL, ", b, ", ", rn, ", ", h * w, ", ", *y, " + n * ",
                     out_img, ", ", h * w, ", ", lo, ", ", hi, ");"));
    } else {
      Need(ow * k);
      L(absl::StrCat("  for (size_t oy = 0; oy < ", oh, "; ++oy) {"));
      L(absl::StrCat("    for (size_t g = 0; g < ", g, "; ++g) {"));
      L(absl::StrCat("      tsl_f32_im2col_nchw_row__autovec(&", win, ", ", *x, " + n * ", in_img, ", g * ", cg, ", ",
                     cg, ", oy, S);"));
      L(absl::StrCat("      tsl_f32_gemm_minmax__autovec(", mg, ", ", ow, ", ", k, ", ", wp, " + g * ", mg * k, ", ", k,
                     ", S, ", ow, ", NULL, ", bi >= 0 ? absl::StrCat(b, " + g * ", mg) : "NULL", ", ",
                     ri >= 0 ? absl::StrCat(rn, " + g * ", mg * oh * ow, " + oy * ", ow) : "NULL", ", ", oh * ow,
                     ", ", *y, " + n * ", out_img, " + g * ", mg * oh * ow, " + oy * ", ow, ", ", oh * ow, ", ", lo,
                     ", ", hi, ");"));
      L("    }");
      L("  }");
    }
  }
  L("}");
  EmitPostAct(act->post, *y, Numel(yi));
  return absl::OkStatus();
}

// The MobileNet block, one output row at a time: the depthwise row goes to scratch, then the 1x1
// convolution reads it as the GEMM's left-hand side.
absl::Status Emitter::EmitDwPw(const artifact::Op& op, const Node& node) {
  if (node.GetString("layout", "nchw") != "nhwc") {
    return absl::UnimplementedError("only the channels-last (layout nhwc) form; compile with the cnn pipeline");
  }
  auto in = [&](int i) { return op.inputs_size() > i ? op.inputs(i) : -1; };
  const int xi = in(0), wdi = in(1), wpi = in(3), ri = in(5), wei = in(6), yi = op.outputs(0);
  if (Shape(xi).size() != 4) return absl::UnimplementedError("only 2-D convolutions (rank-4 input)");
  absl::StatusOr<std::vector<Dim>> xd = ChannelsFirstDims(Shape(xi), true);
  if (!xd.ok()) return xd.status();
  const int64_t c_in = (*xd)[1].value();
  // With an expansion (W_exp [C, 1, 1, C_in]), the depthwise step sees C channels.
  if (wei >= 0) (*xd)[1] = Dim(Shape(wei)[0]);
  absl::StatusOr<std::vector<Dim>> wd = ChannelsFirstDims(Shape(wdi), true);
  absl::StatusOr<ConvParams> p = ResolveConvParams(node, *xd, *wd);
  if (!p.ok()) return p.status();
  absl::StatusOr<Act> dact = ReadAct(node, "dw_");
  if (!dact.ok()) return dact.status();
  absl::StatusOr<Act> pact = ReadAct(node, "pw_");
  if (!pact.ok()) return pact.status();
  const int64_t n = (*xd)[0].value(), c = (*xd)[1].value(), h = (*xd)[2].value(), w = (*xd)[3].value();
  const int64_t kh = (*wd)[2].value(), kw = (*wd)[3].value();
  const std::vector<int64_t> ys = Shape(yi);
  const int64_t oh = ys[1], ow = ys[2], m = ys[3];
  absl::StatusOr<std::vector<float>> wdv = Values(wdi);
  if (!wdv.ok()) return wdv.status();
  absl::StatusOr<std::vector<float>> wpv = Values(wpi);
  if (!wpv.ok()) return wpv.status();
  std::vector<float> dw(kh * kw * c), pw(c * m);
  TransposeInto(*wdv, c, kh * kw, dw.data());
  TransposeInto(*wpv, m, c, pw.data());
  std::string ptr[6];
  for (int i : {0, 2, 4, 5}) {
    if (in(i) < 0) {
      ptr[i] = "NULL";
      continue;
    }
    absl::StatusOr<std::string> s = Ptr(in(i));
    if (!s.ok()) return s.status();
    ptr[i] = *s;
  }
  absl::StatusOr<std::string> y = Ptr(yi);
  if (!y.ok()) return y.status();
  const std::string win = Window(*p, h, w, oh, ow);
  const int64_t out_img = oh * ow * m;
  // The depthwise input of image n: X itself, or X expanded into the scratch after the row buffer.
  std::string dw_in = absl::StrCat(ptr[0], " + n * ", h * w * c);
  std::string expand;
  if (wei >= 0) {
    absl::StatusOr<std::vector<float>> wev = Values(wei);
    if (!wev.ok()) return wev.status();
    absl::StatusOr<Act> eact = ReadAct(node, "exp_");
    if (!eact.ok()) return eact.status();
    std::string be = "NULL";
    if (in(7) >= 0) {
      absl::StatusOr<std::string> b = Ptr(in(7));
      if (!b.ok()) return b.status();
      be = *b;
    }
    std::vector<float> we(c_in * c);  // [C_in][C]: the GEMM's B
    TransposeInto(*wev, c, c_in, we.data());
    dw_in = absl::StrCat("S + ", ow * c);
    expand = absl::StrCat("  tsl_f32_gemm_minmax__autovec(", h * w, ", ", c, ", ", c_in, ", ", ptr[0], " + n * ",
                          h * w * c_in, ", ", c_in, ", ", Packed(we), ", ", c, ", ", be, ", NULL, NULL, 0, ", dw_in,
                          ", ", c, ", ", F(eact->lo), ", ", F(eact->hi), ");");
    if (!eact->post.empty()) {
      expand += absl::StrCat("\n  tsl_f32_", eact->post, "__autovec(", h * w * c, ", ", dw_in, ");");
    }
    Need(ow * c + h * w * c);
  } else {
    Need(ow * c);
  }
  L(absl::StrCat("for (size_t n = 0; n < ", n, "; ++n) {"));
  if (!expand.empty()) L(expand);
  L(absl::StrCat("  for (size_t oy = 0; oy < ", oh, "; ++oy) {"));
  L(absl::StrCat("    tsl_f32_dwconv_nhwc_minmax__autovec(&", win, ", ", c, ", ", dw_in, ", ", Packed(dw), ", ",
                 ptr[2], ", NULL, oy, oy + 1, S, ", F(dact->lo), ", ", F(dact->hi), ");"));
  if (!dact->post.empty()) L(absl::StrCat("    tsl_f32_", dact->post, "__autovec(", ow * c, ", S);"));
  L(absl::StrCat("    tsl_f32_gemm_minmax__autovec(", ow, ", ", m, ", ", c, ", S, ", c, ", ", Packed(pw), ", ", m, ", ",
                 ptr[4], ", NULL, ", ri >= 0 ? absl::StrCat(ptr[5], " + n * ", out_img, " + oy * ", ow * m) : "NULL",
                 ", ", m, ", ", *y, " + n * ", out_img, " + oy * ", ow * m, ", ", m, ", ", F(pact->lo), ", ",
                 F(pact->hi), ");"));
  L("  }");
  L("}");
  EmitPostAct(pact->post, *y, Numel(yi));
  return absl::OkStatus();
}

absl::Status Emitter::EmitPool(const artifact::Op& op, const Node& node, bool nhwc) {
  const int xi = op.inputs(0), yi = op.outputs(0);
  if (op.outputs_size() > 1 && op.outputs(1) >= 0) return absl::UnimplementedError("MaxPool's Indices output");
  const std::vector<int64_t> xs = Shape(xi), ys = Shape(yi);
  absl::StatusOr<std::string> x = Ptr(xi), y = Ptr(yi);
  if (!x.ok()) return x.status();
  if (!y.ok()) return y.status();
  const int64_t n = xs[0], c = nhwc ? xs.back() : xs[1];
  const int64_t pixels = Product(xs) / (n * c);
  if (op.op_type() == "GlobalAveragePool") {
    if (nhwc) {
      L(absl::StrCat("for (size_t n = 0; n < ", n, "; ++n) tsl_f32_global_avgpool_nhwc__autovec(", pixels, ", ", c,
                     ", ", *x, " + n * ", pixels * c, ", ", *y, " + n * ", c, ");"));
    } else {
      L(absl::StrCat("tsl_f32_row_mean__autovec(", n * c, ", ", pixels, ", ", *x, ", ", *y, ");"));
    }
    return absl::OkStatus();
  }
  if (xs.size() != 4) return absl::UnimplementedError("only 2-D pooling (rank-4 input)");
  absl::StatusOr<std::vector<Dim>> xd = ChannelsFirstDims(xs, nhwc);
  absl::StatusOr<PoolParams> p = ResolvePoolParams(node, *xd);
  if (!p.ok()) return p.status();
  const int64_t h = (*xd)[2].value(), w = (*xd)[3].value();
  const int64_t oh = nhwc ? ys[1] : ys[2], ow = nhwc ? ys[2] : ys[3];
  const std::string win = Window(*p, h, w, oh, ow);
  const std::string call = op.op_type() == "MaxPool"
                               ? absl::StrCat("tsl_f32_maxpool_nhwc__autovec(&", win, ", ")
                               : absl::StrCat("tsl_f32_avgpool_nhwc__autovec(&", win, ", ");
  const std::string pad = op.op_type() == "MaxPool" ? "" : absl::StrCat(p->count_include_pad ? 1 : 0, ", ");
  if (nhwc) {
    L(absl::StrCat("for (size_t n = 0; n < ", n, "; ++n) ", call, c, ", ", pad, *x, " + n * ", h * w * c, ", ", *y,
                   " + n * ", oh * ow * c, ");"));
  } else {
    // Each plane is a one-channel channels-last image.
    L(absl::StrCat("for (size_t p = 0; p < ", n * c, "; ++p) ", call, "1, ", pad, *x, " + p * ", h * w, ", ", *y,
                   " + p * ", oh * ow, ");"));
  }
  return absl::OkStatus();
}

absl::Status Emitter::EmitGemm(const artifact::Op& op, const Node& node) {
  const int ai = op.inputs(0), bi = op.inputs(1), ci = op.inputs_size() > 2 ? op.inputs(2) : -1, yi = op.outputs(0);
  if (node.GetInt("transA", 0) != 0) return absl::UnimplementedError("transA=1");
  const bool trans_b = node.GetInt("transB", 0) != 0;
  const float alpha = node.GetFloat("alpha", 1.0f), beta = node.GetFloat("beta", 1.0f);
  const std::vector<int64_t> as = Shape(ai), ys = Shape(yi);
  const int64_t m = ys[0], n = ys[1], k = as[1];
  absl::StatusOr<std::string> a = Ptr(ai), y = Ptr(yi);
  if (!a.ok()) return a.status();
  if (!y.ok()) return y.status();
  std::string b;
  if (IsWeight(bi)) {
    absl::StatusOr<std::vector<float>> bv = Values(bi);
    if (!bv.ok()) return bv.status();
    std::vector<float> packed(k * n);
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) packed[p * n + j] = alpha * (trans_b ? (*bv)[j * k + p] : (*bv)[p * n + j]);
    b = Packed(packed);
  } else if (!trans_b && alpha == 1.0f) {
    absl::StatusOr<std::string> bp = Ptr(bi);
    if (!bp.ok()) return bp.status();
    b = *bp;
  } else {
    return absl::UnimplementedError("a non-constant B with transB=1 or alpha != 1");
  }
  std::string bias_n = "NULL", bias_m = "NULL", res = "NULL";
  if (ci >= 0) {
    const std::vector<int64_t> cs = Shape(ci);
    const int64_t cn = Numel(ci);
    if (IsWeight(ci)) {
      absl::StatusOr<std::vector<float>> cv = Values(ci);
      if (!cv.ok()) return cv.status();
      for (float& v : *cv) v *= beta;
      if (cn == 1) {
        bias_n = Packed(std::vector<float>(n, (*cv)[0]));
      } else if (cn == n && cs.back() == n) {
        bias_n = Packed(*cv);
      } else if (cn == m && cs.size() == 2 && cs[1] == 1) {
        bias_m = Packed(*cv);
      } else if (cn == m * n) {
        res = Packed(*cv);
      } else {
        return absl::UnimplementedError(absl::StrCat("C of shape [", absl::StrJoin(cs, ","), "]"));
      }
    } else {
      absl::StatusOr<std::string> cp = Ptr(ci);
      if (!cp.ok()) return cp.status();
      if (beta != 1.0f || (cn != n && cn != m * n)) {
        return absl::UnimplementedError("a non-constant C unless beta is 1 and C is [N] or [M, N]");
      }
      (cn == m * n ? res : bias_n) = *cp;
    }
  }
  L(absl::StrCat("tsl_f32_gemm_minmax__autovec(", m, ", ", n, ", ", k, ", ", *a, ", ", k, ", ", b, ", ", n, ", ",
                 bias_n, ", ", bias_m, ", ", res, ", ", n, ", ", *y, ", ", n, ", -INFINITY, INFINITY);"));
  return absl::OkStatus();
}

// MatMul and tessel.MatMulBias with a 2-D right-hand side: every leading dim of A is a GEMM row.
absl::Status Emitter::EmitMatMul(const artifact::Op& op) {
  const int ai = op.inputs(0), bi = op.inputs(1), yi = op.outputs(0);
  const std::vector<int64_t> as = Shape(ai), bs = Shape(bi);
  if (bs.size() != 2) return absl::UnimplementedError("a right-hand side that is not 2-D (batched MatMul)");
  const int64_t k = bs[0], n = bs[1], m = Numel(ai) / std::max<int64_t>(k, 1);
  absl::StatusOr<std::string> a = Ptr(ai), b = Ptr(bi), y = Ptr(yi);
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  if (!y.ok()) return y.status();
  std::string bias = "NULL";
  if (op.op_type() == "MatMulBias") {
    absl::StatusOr<std::string> bp = Ptr(op.inputs(2));
    if (!bp.ok()) return bp.status();
    bias = *bp;
  }
  L(absl::StrCat("tsl_f32_gemm_minmax__autovec(", m, ", ", n, ", ", k, ", ", *a, ", ", k, ", ", *b, ", ", n, ", ",
                 bias, ", NULL, NULL, 0, ", *y, ", ", n, ", -INFINITY, INFINITY);"));
  return absl::OkStatus();
}

// Broadcasting binary ops as inline loops: output dims that broadcast alike are merged, the last one
// becomes a unit-stride (or scalar-operand) loop marked hot, which the vectorization check enforces.
absl::Status Emitter::EmitBinary(const artifact::Op& op, const std::string& c_op) {
  const int yi = op.outputs(0);
  const int in[2] = {op.inputs(0), op.inputs(1)};
  const std::vector<int64_t> ys = Shape(yi);
  const size_t rank = ys.size();
  // Per output dim, whether each operand broadcasts along it.
  struct D {
    int64_t size;
    bool bcast[2];
  };
  std::vector<D> dims;
  for (size_t d = 0; d < rank; ++d) {
    if (ys[d] == 1) continue;
    D dd{ys[d], {false, false}};
    for (int o = 0; o < 2; ++o) {
      const std::vector<int64_t> s = Shape(in[o]);
      const int64_t e = d + s.size() >= rank ? s[d + s.size() - rank] : 1;
      if (e != ys[d] && e != 1) return absl::InvalidArgumentError("operand shapes do not broadcast to the output");
      dd.bcast[o] = e == 1;
    }
    if (!dims.empty() && dims.back().bcast[0] == dd.bcast[0] && dims.back().bcast[1] == dd.bcast[1]) {
      dims.back().size *= dd.size;
    } else {
      dims.push_back(dd);
    }
  }
  if (dims.empty()) dims.push_back({1, {false, false}});
  absl::StatusOr<std::string> y = Ptr(yi);
  if (!y.ok()) return y.status();
  std::string ptr[2];
  bool alias[2];
  for (int o = 0; o < 2; ++o) {
    absl::StatusOr<std::string> p = Ptr(in[o]);
    if (!p.ok()) return p.status();
    ptr[o] = *p;
    alias[o] = !IsWeight(in[o]) && T(in[o]).offset() == T(yi).offset();
    if (!alias[o] && Overlaps(in[o], yi)) return absl::InternalError("an input partly overlaps the output");
    if (alias[o] && Numel(in[o]) != Numel(yi)) return absl::InternalError("a broadcast input shares the output");
  }
  // Strides per merged dim: 0 where the operand broadcasts.
  std::vector<int64_t> stride[3];
  for (int o = 0; o < 3; ++o) {
    stride[o].assign(dims.size(), 0);
    int64_t s = 1;
    for (size_t d = dims.size(); d-- > 0;) {
      if (o < 2 && dims[d].bcast[o]) continue;
      stride[o][d] = s;
      s *= dims[d].size;
    }
  }
  L("{");
  L(absl::StrCat("  float* restrict y = ", *y, ";"));
  for (int o = 0; o < 2; ++o) {
    if (!alias[o]) L(absl::StrCat("  const float* restrict ", o == 0 ? "a" : "b", " = ", ptr[o], ";"));
  }
  std::string indent = "  ";
  std::string off[3];
  for (size_t d = 0; d + 1 < dims.size(); ++d) {
    L(absl::StrCat(indent, "for (size_t i", d, " = 0; i", d, " < ", dims[d].size, "; ++i", d, ")"));
    indent += "  ";
    for (int o = 0; o < 3; ++o) {
      if (stride[o][d]) absl::StrAppend(&off[o], " + i", d, " * ", stride[o][d]);
    }
  }
  L(absl::StrCat(indent, "{"));
  const char* names[3] = {"a", "b", "y"};
  std::string expr[2];
  for (int o = 0; o < 3; ++o) {
    if (o < 2 && alias[o]) continue;
    L(absl::StrCat(indent, "  ", o == 2 ? "float" : "const float", "* restrict ", names[o], "p = ", names[o], " + 0",
                   off[o], ";"));
  }
  for (int o = 0; o < 2; ++o) {
    const std::string base = alias[o] ? "yp" : absl::StrCat(names[o], "p");
    expr[o] = dims.back().bcast[o] ? base + "[0]" : base + "[j]";
  }
  L(absl::StrCat(indent, "  // tessel:hot"));
  L("#pragma omp simd");
  L(absl::StrCat(indent, "  for (size_t j = 0; j < ", dims.back().size, "; ++j) yp[j] = ", expr[0], " ", c_op, " ",
                 expr[1], ";"));
  L(absl::StrCat(indent, "}"));
  L("}");
  return absl::OkStatus();
}

absl::Status Emitter::EmitCopy(const artifact::Op& op) {
  const int xi = op.inputs(0), yi = op.outputs(0);
  absl::StatusOr<std::string> x = Ptr(xi), y = Ptr(yi);
  if (!x.ok()) return x.status();
  if (!y.ok()) return y.status();
  if (*x == *y) return absl::OkStatus();
  if (Overlaps(xi, yi)) return absl::InternalError("input and output overlap");
  L(absl::StrCat("memcpy(", *y, ", ", *x, ", ", T(yi).bytes(), ");"));
  return absl::OkStatus();
}

absl::Status Emitter::EmitUnary(const artifact::Op& op, const Node& node) {
  const std::string& t = op.op_type();
  const int xi = op.inputs(0), yi = op.outputs(0);
  const int64_t count = Numel(yi);
  absl::StatusOr<std::string> y = Ptr(yi);
  if (!y.ok()) return y.status();
  if (t == "Sigmoid" || t == "HardSwish") {
    absl::Status s = EmitCopy(op);
    if (!s.ok()) return s;
    EmitPostAct(t == "Sigmoid" ? "sigmoid" : "hardswish", *y, count);
    return absl::OkStatus();
  }
  std::string body;
  if (t == "Relu") {
    body = "v < 0.0f ? 0.0f : v";
  } else if (t == "Neg") {
    body = "-v";
  } else if (t == "LeakyRelu") {
    body = absl::StrCat("v < 0.0f ? v * ", F(node.GetFloat("alpha", 0.01f)), " : v");
  } else if (t == "Clip") {
    float bound[2] = {node.GetFloat("min", -INFINITY), node.GetFloat("max", INFINITY)};
    for (int i = 1; i <= 2; ++i) {
      if (op.inputs_size() <= i || op.inputs(i) < 0) continue;
      absl::StatusOr<std::vector<float>> v = Values(op.inputs(i));
      if (!v.ok()) return v.status();
      if (v->size() != 1) return absl::InvalidArgumentError("Clip bounds must be scalars");
      bound[i - 1] = (*v)[0];
    }
    body = absl::StrCat("v < ", F(bound[0]), " ? ", F(bound[0]), " : (v > ", F(bound[1]), " ? ", F(bound[1]), " : v)");
  } else {
    return absl::UnimplementedError("not supported");
  }
  absl::StatusOr<std::string> x = Ptr(xi);
  if (!x.ok()) return x.status();
  const bool alias = *x == *y;
  if (!alias && Overlaps(xi, yi)) return absl::InternalError("input and output partly overlap");
  L("{");
  L(absl::StrCat("  float* restrict y = ", *y, ";"));
  if (!alias) L(absl::StrCat("  const float* restrict x = ", *x, ";"));
  L("  // tessel:hot");
  L("#pragma omp simd");
  L(absl::StrCat("  for (size_t i = 0; i < ", count, "; ++i) {"));
  L(absl::StrCat("    const float v = ", alias ? "y" : "x", "[i];"));
  L(absl::StrCat("    y[i] = ", body, ";"));
  L("  }");
  L("}");
  return absl::OkStatus();
}

absl::Status Emitter::EmitSoftmax(const artifact::Op& op, const Node& node) {
  const int xi = op.inputs(0), yi = op.outputs(0);
  const std::vector<int64_t> xs = Shape(xi);
  absl::StatusOr<int> axis = ResolveAxisAttr(node, "axis", -1, static_cast<int>(xs.size()));
  if (!axis.ok()) return axis.status();
  if (*axis != static_cast<int>(xs.size()) - 1) return absl::UnimplementedError("softmax over an axis that is not the last");
  absl::StatusOr<std::string> x = Ptr(xi), y = Ptr(yi);
  if (!x.ok()) return x.status();
  if (!y.ok()) return y.status();
  if (Overlaps(xi, yi)) return absl::InternalError("input and output overlap");
  L(absl::StrCat("tsl_f32_softmax__autovec(", Numel(xi) / xs.back(), ", ", xs.back(), ", ", *x, ", ", *y, ");"));
  return absl::OkStatus();
}

absl::Status Emitter::EmitTranspose(const artifact::Op& op, const Node& node) {
  const int xi = op.inputs(0), yi = op.outputs(0);
  const std::vector<int64_t> xs = Shape(xi);
  std::vector<int64_t> perm = node.GetInts("perm");
  if (perm.empty()) {
    for (size_t d = xs.size(); d-- > 0;) perm.push_back(static_cast<int64_t>(d));
  }
  if (xs.size() > 6 || perm.size() != xs.size()) return absl::UnimplementedError("rank above 6 or a malformed perm");
  absl::StatusOr<std::string> x = Ptr(xi), y = Ptr(yi);
  if (!x.ok()) return x.status();
  if (!y.ok()) return y.status();
  if (Overlaps(xi, yi)) return absl::InternalError("input and output overlap");
  const std::string id = absl::StrCat("tr", counter_++);
  absl::StrAppend(&globals_, "static const size_t ", id, "_shape[] = {", absl::StrJoin(xs, ", "), "};\n");
  absl::StrAppend(&globals_, "static const size_t ", id, "_perm[] = {", absl::StrJoin(perm, ", "), "};\n");
  L(absl::StrCat("tsl_f32_transpose__scalar(", xs.size(), ", ", id, "_shape, ", id, "_perm, ", *x, ", ", *y, ");"));
  return absl::OkStatus();
}

absl::Status Emitter::EmitConcat(const artifact::Op& op, const Node& node) {
  const int yi = op.outputs(0);
  const std::vector<int64_t> ys = Shape(yi);
  absl::StatusOr<int> axis = ResolveAxisAttr(node, "axis", 0, static_cast<int>(ys.size()));
  if (!axis.ok()) return axis.status();
  absl::StatusOr<std::string> y = Ptr(yi);
  if (!y.ok()) return y.status();
  const int64_t outer = Product(ys, 0, *axis), row = Product(ys, *axis);
  int64_t at = 0;
  for (int idx : op.inputs()) {
    absl::StatusOr<std::string> x = Ptr(idx);
    if (!x.ok()) return x.status();
    if (Overlaps(idx, yi)) return absl::InternalError("an input overlaps the output");
    const int64_t part = Product(Shape(idx), *axis);
    L(absl::StrCat("for (size_t o = 0; o < ", outer, "; ++o) memcpy(", *y, " + o * ", row, " + ", at, ", ", *x,
                   " + o * ", part, ", ", part * sizeof(float), ");"));
    at += part;
  }
  return absl::OkStatus();
}

absl::Status Emitter::EmitOp(const artifact::Op& op, const Node& node) {
  const std::string& t = op.op_type();
  const bool tessel = op.domain() == "tessel";
  if (!tessel && !op.domain().empty()) return absl::UnimplementedError("unknown domain");
  for (int i : op.inputs()) {
    if (i < 0) continue;
    absl::Status s = CheckTensor(i);
    if (!s.ok()) return s;
  }
  for (int i : op.outputs()) {
    if (i < 0) continue;
    absl::Status s = CheckTensor(i);
    if (!s.ok()) return s;
  }
  if (op.outputs_size() < 1 || op.inputs_size() < 1 || op.inputs(0) < 0) {
    return absl::InvalidArgumentError("an op without its first input or output");
  }
  const bool nhwc = node.GetString("layout", "nchw") == "nhwc";
  if (tessel && t == "FusedConv") return EmitConv(op, node, nhwc);
  if (!tessel && t == "Conv") return EmitConv(op, node, false);
  if (tessel && t == "DwPwConv") return EmitDwPw(op, node);
  if (t == "MaxPool" || t == "AveragePool" || t == "GlobalAveragePool") return EmitPool(op, node, tessel && nhwc);
  if (!tessel && t == "Gemm") return EmitGemm(op, node);
  if ((!tessel && t == "MatMul") || (tessel && t == "MatMulBias")) return EmitMatMul(op);
  if (tessel) return absl::UnimplementedError("not supported");
  if (t == "Add") return EmitBinary(op, "+");
  if (t == "Sub") return EmitBinary(op, "-");
  if (t == "Mul") return EmitBinary(op, "*");
  if (t == "Div") return EmitBinary(op, "/");
  if (t == "Relu" || t == "Clip" || t == "LeakyRelu" || t == "Neg" || t == "Sigmoid" || t == "HardSwish") {
    return EmitUnary(op, node);
  }
  if (t == "Identity" || t == "Reshape" || t == "Flatten" || t == "Squeeze" || t == "Unsqueeze" || t == "Dropout") {
    if (op.outputs_size() > 1 && op.outputs(1) >= 0) return absl::UnimplementedError("Dropout's mask output");
    return EmitCopy(op);
  }
  if (t == "Softmax") return EmitSoftmax(op, node);
  if (t == "Transpose") return EmitTranspose(op, node);
  if (t == "Concat") return EmitConcat(op, node);
  return absl::UnimplementedError("not supported");
}

absl::Status Emitter::Build() {
  // No supported op reads a tensor attribute.
  Graph attrs;
  std::vector<Value*> values;
  std::vector<Node*> nodes;
  DecodePlanGraph(plan_, nullptr, attrs, &values, &nodes);
  std::set<std::string> used;
  auto param = [&](int idx, const char* fallback) {
    std::string p = Sanitize(T(idx).name().empty() ? fallback : T(idx).name());
    while (!used.insert(p).second) p += "_";
    return p;
  };
  for (int idx : plan_.inputs()) {
    absl::Status s = CheckTensor(idx);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("model input: ", s.message()));
    if (IsWeight(idx)) return absl::InvalidArgumentError(absl::StrCat("input '", T(idx).name(), "' is not in the arena"));
    input_params_.push_back(param(idx, "input"));
    L(absl::StrCat("memcpy(A(", T(idx).offset(), "), ", input_params_.back(), ", ", T(idx).bytes(), ");"));
  }
  for (int i = 0; i < plan_.ops_size(); ++i) {
    const artifact::Op& op = plan_.ops(i);
    L(absl::StrCat("/* op ", i, ": '", absl::StrReplaceAll(op.name(), {{"*/", "* /"}}), "' ",
                   op.domain().empty() ? "" : op.domain() + ".", op.op_type(), " */"));
    absl::Status s = EmitOp(op, *nodes[i]);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("op ", i, " '", op.name(), "' (", op.domain().empty() ? "" : op.domain() + ".",
                                                 op.op_type(), "): ", s.message(),
                                                 s.code() == absl::StatusCode::kUnimplemented
                                                     ? "; the C emitter cannot generate it (run the .tsl artifact instead)"
                                                     : ""));
    }
  }
  for (int idx : plan_.outputs()) {
    absl::StatusOr<std::string> p = Ptr(idx);
    if (!p.ok()) return absl::Status(p.status().code(), absl::StrCat("model output: ", p.status().message()));
    output_params_.push_back(param(idx, "output"));
    L(absl::StrCat("memcpy(", output_params_.back(), ", ", *p, ", ", T(idx).bytes(), ");"));
  }
  blob_.resize((blob_.size() + kAlign - 1) / kAlign * kAlign + kAlign, '\0');  // never empty
  return absl::OkStatus();
}

std::string Emitter::Header() const {
  std::string upper = name_;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string h = absl::StrCat("/* Generated by tessel's C emitter from graph '", plan_.graph_name(), "' (pipeline '",
                               plan_.pipeline(), "', memory plan ", plan_.memory_algorithm(),
                               "). Do not edit. */\n#ifndef ", upper, "_H_\n#define ", upper, "_H_\n\n");
  absl::StrAppend(&h, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  absl::StrAppend(&h, "#define ", upper, "_ARENA_BYTES ", plan_.arena_bytes(), "\n");
  auto describe = [&](int idx, const std::string& param, const char* role) {
    absl::StrAppend(&h, "/* ", role, " '", T(idx).name(), "': f32[", absl::StrJoin(Shape(idx), ","), "] */\n#define ",
                    upper, "_", absl::AsciiStrToUpper(param), "_ELEMENTS ", Numel(idx), "\n");
  };
  for (int i = 0; i < plan_.inputs_size(); ++i) describe(plan_.inputs(i), input_params_[i], "input");
  for (int i = 0; i < plan_.outputs_size(); ++i) describe(plan_.outputs(i), output_params_[i], "output");
  std::vector<std::string> params;
  for (const std::string& p : input_params_) params.push_back("const float* " + p);
  for (const std::string& p : output_params_) params.push_back("float* " + p);
  absl::StrAppend(&h, "\n/* Runs the model once; returns 0. Not reentrant: one static arena. */\nint ", name_, "_run(",
                  absl::StrJoin(params, ", "), ");\n\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
  return h;
}

std::string Emitter::Source() const {
  std::string s = absl::StrCat("/* Generated by tessel's C emitter from graph '", plan_.graph_name(), "'. Do not edit.\n",
                               " * Build: -std=c99 -O3 -fopenmp-simd -fno-trapping-math -ffp-contract=fast with\n",
                               " * kernels/portable/ on the include path and its sources linked. */\n");
  absl::StrAppend(&s, "#include \"", name_, ".h\"\n\n#include <math.h>\n#include <stddef.h>\n#include <string.h>\n\n",
                  "#include \"tessel_portable.h\"\n\n");
  absl::StrAppend(&s, "extern const unsigned char ", name_, "_weights[];\n");
  absl::StrAppend(&s, "static float arena[", (plan_.arena_bytes() + 3) / 4 + 1, "] __attribute__((aligned(64)));\n");
  absl::StrAppend(&s, "static float scratch[", scratch_floats_ + 1, "] __attribute__((aligned(64)));\n\n");
  absl::StrAppend(&s, "/* Tensor bases: planned byte offsets, 64-byte aligned. */\n",
                  "#define A(off) ((float*)__builtin_assume_aligned((unsigned char*)arena + (off), 64))\n",
                  "#define W(off) ((const float*)__builtin_assume_aligned(", name_, "_weights + (off), 64))\n",
                  "#define S scratch\n\n");
  absl::StrAppend(&s, globals_, "\n");
  std::vector<std::string> params;
  for (const std::string& p : input_params_) params.push_back("const float* " + p);
  for (const std::string& p : output_params_) params.push_back("float* " + p);
  absl::StrAppend(&s, "int ", name_, "_run(", absl::StrJoin(params, ", "), ") {\n", body_, "  return 0;\n}\n");
  return s;
}

absl::Status WriteFile(const std::string& path, absl::string_view data) {
  return WriteFileAtomically(path, data);
}

}  // namespace

absl::Status EmitC(const artifact::Plan& plan, absl::string_view weights, const std::string& out_dir,
                   const std::string& name, const EmitCOptions& options) {
  if (!IsIdentifier(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("model name '", name, "' is not a C identifier (letters, digits and _, not starting with a digit)"));
  }
  for (const artifact::Tensor& t : plan.tensors()) {
    if (!t.dynamic()) continue;
    return absl::UnimplementedError(absl::StrCat(
        "tensor '", t.name(), "' has a data-dependent extent (planned at its upper bound); the C output has fixed ",
        "shapes: use the .tsl artifact for this model"));
  }
  Emitter e(plan, weights, name);
  absl::Status s = e.Build();
  if (!s.ok()) return s;
  const std::string base = out_dir + "/" + name;
  s = WriteFile(base + ".h", e.Header());
  if (!s.ok()) return s;
  s = WriteFile(base + ".c", e.Source());
  if (!s.ok()) return s;
  if (options.weights == EmitCOptions::Weights::kIncbin) {
    s = WriteFile(base + "_weights.bin", e.blob());
    if (!s.ok()) return s;
    const std::string sym = name + "_weights";
    return WriteFile(base + "_weights.S",
                     absl::StrCat("/* Generated by tessel's C emitter: the weights of '", name,
                                  "', linked as a blob. Assemble with this folder on the include path. */\n",
                                  "  .section .rodata\n  .balign 64\n  .global ", sym, "\n  .type ", sym,
                                  ", %object\n", sym, ":\n  .incbin \"", sym, ".bin\"\n  .size ", sym, ", . - ", sym,
                                  "\n  .section .note.GNU-stack,\"\",%progbits\n"));
  }
  std::string c = absl::StrCat("/* Generated by tessel's C emitter: the weights of '", name, "'. */\n",
                               "const unsigned char ", name, "_weights[", e.blob().size(),
                               "] __attribute__((aligned(64))) = {\n");
  for (size_t i = 0; i < e.blob().size(); ++i) {
    absl::StrAppend(&c, static_cast<unsigned>(static_cast<unsigned char>(e.blob()[i])), i % 24 == 23 ? ",\n" : ",");
  }
  absl::StrAppend(&c, "\n};\n");
  return WriteFile(base + "_weights.c", c);
}

absl::Status EmitC(const Artifact& artifact, const std::string& out_dir, const std::string& name,
                   const EmitCOptions& options) {
  return EmitC(artifact.plan(),
               absl::string_view(reinterpret_cast<const char*>(artifact.weights()), artifact.weights_bytes()), out_dir,
               name, options);
}

}  // namespace tessel
