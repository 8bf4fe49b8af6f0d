// `tessel classify`: image file -> compiled CNN -> top-k classes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cnn/classifier.h"
#include "runtime/executor.h"

namespace tessel {
namespace {

absl::StatusOr<std::vector<float>> ParseFloats(const std::string& flag, const std::string& text) {
  std::vector<float> out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    float v;
    if (!absl::SimpleAtof(part, &v)) return absl::InvalidArgumentError(absl::StrCat("--", flag, ": bad number '", part, "'"));
    // Pixels are divided by std: zero, negative or non-finite values give meaningless inputs.
    if (!std::isfinite(v) || (flag == "std" && v <= 0)) {
      return absl::InvalidArgumentError(absl::StrCat("--", flag, ": '", part, "' must be a finite number",
                                                     flag == "std" ? " above 0" : ""));
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace

int ClassifyCommand(int argc, char** argv) {
  const std::vector<cli::FlagSpec> flags = {
      {"labels", "FILE", "class names, one per line"},
      {"top-k", "K", "how many classes to print", false, "5", cli::AtLeast(1)},
      {"mean", "M[,M,M]", "per-channel mean after scaling pixels to [0,1] (ImageNet: 0.485,0.456,0.406)", false, "0,0,0"},
      {"std", "S[,S,S]", "per-channel std (ImageNet: 0.229,0.224,0.225)", false, "1,1,1"},
      {"invert", "", "use 1-x (dark ink on light paper for a model trained on bright ink)"},
  };
  if (cli::WantsHelp(argc, argv)) {
    std::printf("%s", cli::Usage("classify", "MODEL.tsl IMAGE [--labels FILE] [--top-k K]",
                                 "Decodes the image (PNG/JPEG/BMP), resizes it to the model's input size, normalizes, "
                                 "runs the compiled model and prints the top-k classes with probabilities.",
                                 flags)
                          .c_str());
    return 0;
  }
  absl::StatusOr<cli::Args> args = cli::Parse("classify", flags, argc, argv);
  if (!args.ok()) return cli::Fail("classify", args.status());
  if (args->positional().size() != 2) return cli::Fail("classify", absl::InvalidArgumentError("expects MODEL.tsl IMAGE"));
  absl::StatusOr<int64_t> k = args->GetInt("top-k");
  if (!k.ok()) return cli::Fail("classify", k.status());
  absl::StatusOr<std::shared_ptr<const CompiledModel>> model = CompiledModel::Load(args->positional()[0]);
  if (!model.ok()) return cli::Fail("classify", model.status());
  const TensorType in = (*model)->input_type(0);
  if (in.rank() != 4 || (in.dims[1].value() != 1 && in.dims[1].value() != 3)) {
    return cli::Fail("classify", absl::InvalidArgumentError(absl::StrCat("expected an image model with input [1,1|3,H,W], got ",
                                                                         in.ToString())));
  }
  Preprocess p;
  p.channels = static_cast<int>(in.dims[1].value());
  p.height = static_cast<int>(in.dims[2].value());
  p.width = static_cast<int>(in.dims[3].value());
  p.invert = args->Has("invert");
  auto mean = ParseFloats("mean", args->Get("mean"));
  auto stdev = ParseFloats("std", args->Get("std"));
  if (!mean.ok()) return cli::Fail("classify", mean.status());
  if (!stdev.ok()) return cli::Fail("classify", stdev.status());
  p.mean = *mean;
  p.std = *stdev;
  std::vector<std::string> labels;
  if (args->Has("labels")) {
    auto l = LoadLabels(args->Get("labels"));
    if (!l.ok()) return cli::Fail("classify", l.status());
    labels = *l;
  }
  absl::StatusOr<Tensor> x = LoadImageTensor(args->positional()[1], p);
  if (!x.ok()) return cli::Fail("classify", x.status());
  Session session(*model);
  absl::Status s = session.Run({*x});
  if (!s.ok()) return cli::Fail("classify", s);
  std::printf("%s:\n", args->positional()[1].c_str());
  const int shown = static_cast<int>(std::min<int64_t>(*k, std::numeric_limits<int>::max()));  // TopK caps it
  for (const Prediction& pred : TopK(session.output(0), shown, labels)) {
    std::printf("  %6.2f%%  %s\n", 100 * pred.probability, pred.label.c_str());
  }
  return 0;
}

}  // namespace tessel
