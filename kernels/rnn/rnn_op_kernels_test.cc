// Every LSTM and GRU operator kernel against the reference kernel (kernels/reference/rnn.cc, double
// precision) on random, awkward cases: hidden sizes below, at and past a packed panel, both layouts,
// every direction, clip, linear_before_reset either way, sequence lengths (0 and full included),
// initial states, batch above 1, and every output. Outputs must agree to a normalized error (max |got -
// want| / max |want|, per output) of 1e-5: float accumulation and the float sigmoid / tanh against
// double, carried through the recurrence. The zoo's speech models are checked against PyTorch by
// //tools/zoo:zoo_test. A kernel whose ISA this CPU lacks is skipped visibly.
#include "kernels/rnn/rnn_op_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph.h"
#include "gtest/gtest.h"
#include "kernels/reference/reference.h"

namespace tessel {
namespace {

constexpr double kTolerance = 1e-5;

const OpKernelRegistry& Registry() {
  static const OpKernelRegistry* r = [] {
    auto* registry = new OpKernelRegistry;  // test process lifetime
    RegisterRnnOpKernels(*registry);
    return registry;
  }();
  return *r;
}

struct Config {
  bool lstm = true;
  int64_t seq = 1, batch = 1, in = 1, hidden = 1;
  std::string direction = "forward";
  int64_t layout = 0;
  float clip = 0;
  int64_t linear_before_reset = 0;
  bool bias = false, lens = false, init_h = false, init_c = false;
  int outputs = 1;
  std::vector<std::string> activations;  // empty: the defaults
  bool peepholes = false;
  bool constant_weights = true;

  std::string Label() const {
    return absl::StrCat(lstm ? "LSTM" : "GRU", " seq ", seq, " batch ", batch, " in ", in, " hidden ", hidden, " ",
                        direction, " layout ", layout, " clip ", clip, " lbr ", linear_before_reset,
                        bias ? " bias" : "", lens ? " lens" : "", init_h ? " init_h" : "", init_c ? " init_c" : "",
                        " outputs ", outputs);
  }
};

// A graph holding one LSTM / GRU node, its input tensors (weights are constants) and operand infos.
struct Case {
  Graph graph;
  Node* node = nullptr;
  std::vector<Tensor> data;  // per input (undefined where omitted)
  std::vector<const Tensor*> inputs;
  std::vector<OperandInfo> infos;
};

void Build(const Config& c, std::mt19937& rng, Case* out) {
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1, gates = c.lstm ? 4 : 3;
  std::uniform_real_distribution<float> u(-1, 1);
  auto random = [&](std::vector<int64_t> shape, float scale) {
    Tensor t(DType::kF32, std::move(shape));
    for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = scale * u(rng);
    return t;
  };
  std::vector<Value*> values;
  auto add = [&](Tensor t, bool constant) {
    const std::string name = absl::StrCat("v", values.size());
    values.push_back(constant ? out->graph.AddConstant(name, t) : out->graph.AddInput(name, t.type()));
    out->data.push_back(std::move(t));
  };
  auto omit = [&] {
    values.push_back(nullptr);
    out->data.emplace_back();
  };
  const std::vector<int64_t> x_shape = c.layout == 1 ? std::vector<int64_t>{c.batch, c.seq, c.in}
                                                     : std::vector<int64_t>{c.seq, c.batch, c.in};
  const std::vector<int64_t> state = c.layout == 1 ? std::vector<int64_t>{c.batch, dirs, c.hidden}
                                                   : std::vector<int64_t>{dirs, c.batch, c.hidden};
  // Weights of 2 / sqrt(in + hidden): gates away from saturation, where errors would hide.
  const float scale = 2.0f / std::sqrt(static_cast<float>(c.in + c.hidden));
  add(random(x_shape, 1.0f), false);
  add(random({dirs, gates * c.hidden, c.in}, scale), c.constant_weights);
  add(random({dirs, gates * c.hidden, c.hidden}, scale), c.constant_weights);
  const bool need4 = c.lens || c.init_h || c.init_c || c.peepholes;
  if (c.bias) {
    add(random({dirs, 2 * gates * c.hidden}, 0.5f), true);
  } else if (need4) {
    omit();
  }
  if (c.lens) {
    Tensor lens(DType::kI32, {c.batch});
    std::uniform_int_distribution<int> len(0, static_cast<int>(c.seq));
    for (int64_t b = 0; b < c.batch; ++b) lens.data<int32_t>()[b] = b == 0 ? static_cast<int32_t>(c.seq) : len(rng);
    add(std::move(lens), false);
  } else if (c.init_h || c.init_c || c.peepholes) {
    omit();
  }
  if (c.init_h) {
    add(random(state, 1.0f), false);
  } else if (c.init_c || c.peepholes) {
    omit();
  }
  if (c.init_c) {
    add(random(state, 1.0f), false);
  } else if (c.peepholes) {
    omit();
  }
  if (c.peepholes) add(random({dirs, 3 * c.hidden}, 0.5f), true);
  out->node = out->graph.AddNode(c.lstm ? "LSTM" : "GRU", values, c.outputs, "rnn");
  Node* n = out->node;
  n->SetAttr("hidden_size", Attribute::Int(c.hidden));
  n->SetAttr("direction", Attribute::String(c.direction));
  if (c.layout != 0) n->SetAttr("layout", Attribute::Int(c.layout));
  if (c.clip > 0) n->SetAttr("clip", Attribute::Float(c.clip));
  if (!c.lstm) n->SetAttr("linear_before_reset", Attribute::Int(c.linear_before_reset));
  if (!c.activations.empty()) n->SetAttr("activations", Attribute::Strings(c.activations));
  for (size_t i = 0; i < values.size(); ++i) {
    out->inputs.push_back(values[i] ? &out->data[i] : nullptr);
    out->infos.push_back(values[i] ? OperandInfo{true, values[i]->is_constant(), out->data[i].type()}
                                   : OperandInfo{});
  }
}

double NormalizedError(const Tensor& got, const Tensor& want) {
  double max_ref = 1e-6, max_err = 0;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    max_ref = std::max(max_ref, std::abs(want.GetAsDouble(i)));
    const double err = std::abs(got.GetAsDouble(i) - want.GetAsDouble(i));
    if (std::isnan(err)) return std::numeric_limits<double>::infinity();  // an element never written
    max_err = std::max(max_err, err);
  }
  return max_err / max_ref;
}

std::vector<OperandInfo> OutputInfos(const std::vector<Tensor>& want) {
  std::vector<OperandInfo> infos;
  for (const Tensor& t : want) infos.push_back({true, false, t.type()});
  return infos;
}

// Runs `e` twice (no state may carry between runs) on the case and returns its worst normalized error
// over the outputs against the reference's.
double CheckCase(const OpKernelEntry& e, const Config& c, std::mt19937& rng) {
  Case k;
  Build(c, rng, &k);
  std::vector<Tensor> want;
  const absl::Status ref = RunReferenceNode(*k.node, k.inputs, &want);
  EXPECT_TRUE(ref.ok()) << c.Label() << ": " << ref;
  if (!ref.ok()) return std::numeric_limits<double>::infinity();
  const std::vector<OperandInfo> out_infos = OutputInfos(want);
  EXPECT_TRUE(e.legal(OpQuery{*k.node, k.infos, out_infos})) << e.name << " refuses " << c.Label();
  std::vector<Tensor> got;
  for (const Tensor& w : want) {
    got.emplace_back(DType::kF32, w.shape());
    std::fill(got.back().data<float>(), got.back().data<float>() + w.num_elements(), NAN);
  }
  absl::StatusOr<std::unique_ptr<OpKernel>> kernel = e.create(OpKernelArgs{*k.node, k.inputs, absl::MakeSpan(got)});
  EXPECT_TRUE(kernel.ok()) << c.Label() << ": " << kernel.status();
  if (!kernel.ok()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (int run = 0; run < 2; ++run) {
    const absl::Status s = (*kernel)->Run();
    EXPECT_TRUE(s.ok()) << c.Label() << ": " << s;
    for (size_t i = 0; i < want.size(); ++i) {
      const double err = NormalizedError(got[i], want[i]);
      EXPECT_LE(err, kTolerance) << e.name << " on " << c.Label() << ", output " << i << ", run " << run;
      worst = std::max(worst, err);
    }
  }
  return worst;
}

int64_t Pick(std::mt19937& rng, std::vector<int64_t> options) {
  return options[std::uniform_int_distribution<size_t>(0, options.size() - 1)(rng)];
}

class RnnOpKernelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RnnOpKernelTest, MatchesReference) {
  const OpKernelEntry* e = Registry().FindByName(GetParam());
  ASSERT_NE(e, nullptr);
  if (!CpuSupports(e->isa)) GTEST_SKIP() << e->name << " needs " << IsaName(e->isa) << ", which this CPU lacks";
  const bool lstm = e->op == "LSTM";
  std::mt19937 rng(lstm ? 34 : 35);
  double worst = 0;
  // The zoo's speech models' layers first (2 directions, 48 units, 20 frames of 40 features, then of
  // 96), then random cases.
  std::vector<Config> configs;
  for (int64_t in : {40, 96}) {
    Config z;
    z.lstm = lstm;
    z.seq = 20;
    z.in = in;
    z.hidden = 48;
    z.direction = "bidirectional";
    z.bias = true;
    z.linear_before_reset = 1;
    z.outputs = lstm ? 3 : 2;
    configs.push_back(z);
  }
  for (int i = 0; i < 40; ++i) {
    Config c;
    c.lstm = lstm;
    c.seq = Pick(rng, {1, 2, 7, 13});
    c.batch = Pick(rng, {1, 1, 3});
    c.in = Pick(rng, {1, 5, 40});
    c.hidden = Pick(rng, {1, 7, 16, 31, 32, 33, 50});
    const char* directions[] = {"forward", "reverse", "bidirectional"};
    c.direction = directions[Pick(rng, {0, 1, 2})];
    c.layout = Pick(rng, {0, 1});
    c.clip = Pick(rng, {0, 0, 1}) ? 0.7f : 0.0f;
    c.linear_before_reset = Pick(rng, {0, 1});
    c.bias = Pick(rng, {0, 1});
    c.lens = Pick(rng, {0, 1});
    c.init_h = Pick(rng, {0, 1});
    c.init_c = lstm && Pick(rng, {0, 1});
    c.outputs = static_cast<int>(Pick(rng, lstm ? std::vector<int64_t>{1, 2, 3} : std::vector<int64_t>{1, 2}));
    configs.push_back(c);
  }
  for (const Config& c : configs) worst = std::max(worst, CheckCase(*e, c, rng));
  std::printf("%s: %zu cases, worst normalized error %.2e\n", e->name.c_str(), configs.size(), worst);
}

std::vector<std::string> EntryNames() {
  std::vector<std::string> names;
  for (const OpKernelEntry& e : Registry().entries()) names.push_back(e.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllKernels, RnnOpKernelTest, ::testing::ValuesIn(EntryNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// What the kernels leave to the reference kernel: peepholes, other activations, weights that are not
// constants.
TEST(RnnOpKernelRefusalTest, RefusesWhatItCannotServe) {
  std::mt19937 rng(7);
  int checked = 0;
  for (const OpKernelEntry& e : Registry().entries()) {
    const bool lstm = e.op == "LSTM";
    std::vector<Config> refused(2);
    refused[0].activations = lstm ? std::vector<std::string>{"Sigmoid", "Relu", "Tanh"}
                                   : std::vector<std::string>{"Sigmoid", "Relu"};
    refused[1].constant_weights = false;
    if (lstm) {
      refused.emplace_back();
      refused.back().peepholes = true;
    }
    for (Config& c : refused) {
      c.lstm = lstm;
      c.seq = 3;
      c.in = 4;
      c.hidden = 5;
      Case k;
      Build(c, rng, &k);
      std::vector<Tensor> want;
      ASSERT_TRUE(RunReferenceNode(*k.node, k.inputs, &want).ok()) << c.Label();
      const std::vector<OperandInfo> out_infos = OutputInfos(want);
      EXPECT_FALSE(e.legal(OpQuery{*k.node, k.infos, out_infos})) << e.name << " accepts " << c.Label();
      ++checked;
    }
  }
  EXPECT_GE(checked, 5);
}

// A sequence length outside [0, seq] is an error from Run, not a crash.
TEST(RnnOpKernelRefusalTest, BadSequenceLengthIsAnError) {
  std::mt19937 rng(8);
  for (const OpKernelEntry& e : Registry().entries()) {
    if (!CpuSupports(e.isa)) continue;
    Config c;
    c.lstm = e.op == "LSTM";
    c.seq = 4;
    c.in = 3;
    c.hidden = 5;
    c.lens = true;
    Case k;
    Build(c, rng, &k);
    k.data[4].data<int32_t>()[0] = 5;
    std::vector<Tensor> got;
    got.emplace_back(DType::kF32, std::vector<int64_t>{4, 1, 1, 5});
    absl::StatusOr<std::unique_ptr<OpKernel>> kernel = e.create(OpKernelArgs{*k.node, k.inputs, absl::MakeSpan(got)});
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    const absl::Status s = (*kernel)->Run();
    EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << e.name << ": " << s;
    EXPECT_NE(s.message().find("sequence_lens[0] = 5"), absl::string_view::npos) << s;
  }
}

}  // namespace
}  // namespace tessel
