// Einsum equation parsing (see einsum_spec.h).
#include "graph/ops/einsum_spec.h"

#include <algorithm>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tessel {
namespace {

int LetterLabel(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

char LabelLetter(int label) { return static_cast<char>(label < 26 ? 'a' + label : 'A' + (label - 26)); }

// One side of the equation: its letters (as labels) with the ellipsis, if any, at `ellipsis_at`.
struct Term {
  std::vector<int> letters;
  int ellipsis_at = -1;  // index into letters before which "..." stands; -1 without one
};

absl::StatusOr<Term> ParseTerm(absl::string_view term, absl::string_view equation, absl::string_view what) {
  Term t;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.substr(i, 3) == "...") {
      if (t.ellipsis_at >= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Einsum equation '", equation, "': ", what, " '", term, "' has more than one ellipsis"));
      }
      t.ellipsis_at = static_cast<int>(t.letters.size());
      i += 2;
      continue;
    }
    const int label = LetterLabel(term[i]);
    if (label < 0) {
      return absl::InvalidArgumentError(absl::StrCat("Einsum equation '", equation, "': ", what, " '", term,
                                                     "' has '", term.substr(i, 1),
                                                     "'; subscripts are letters a-z, A-Z and '...'"));
    }
    t.letters.push_back(label);
  }
  return t;
}

}  // namespace

absl::StatusOr<EinsumSpec> ParseEinsum(absl::string_view equation_in, const std::vector<int>& ranks) {
  std::string equation;
  for (char c : equation_in) {
    if (c != ' ') equation.push_back(c);
  }
  const size_t arrow = equation.find("->");
  if (arrow != std::string::npos && equation.find("->", arrow + 2) != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("Einsum equation '", equation_in, "' has more than one '->'"));
  }
  const absl::string_view lhs = absl::string_view(equation).substr(0, arrow);
  const std::vector<absl::string_view> terms = absl::StrSplit(lhs, ',');
  if (terms.size() != ranks.size()) {
    return absl::InvalidArgumentError(absl::StrCat("Einsum equation '", equation_in, "' has ", terms.size(),
                                                   " input term(s) but the node has ", ranks.size(), " input(s)"));
  }
  std::vector<Term> parsed;
  int ellipsis_rank = 0;
  bool any_ellipsis = false;
  for (size_t i = 0; i < terms.size(); ++i) {
    absl::StatusOr<Term> t = ParseTerm(terms[i], equation_in, absl::StrCat("input term ", i));
    if (!t.ok()) return t.status();
    const int letters = static_cast<int>(t->letters.size());
    const bool has_ellipsis = t->ellipsis_at >= 0;
    if (has_ellipsis ? letters > ranks[i] : letters != ranks[i]) {
      return absl::InvalidArgumentError(absl::StrCat("Einsum equation '", equation_in, "': input term ", i, " '",
                                                     terms[i], "' has ", letters, " subscript(s) but input ", i,
                                                     " has rank ", ranks[i],
                                                     has_ellipsis ? "" : " (use '...' for the other dimensions)"));
    }
    any_ellipsis = any_ellipsis || has_ellipsis;
    if (has_ellipsis) ellipsis_rank = std::max(ellipsis_rank, ranks[i] - letters);
    parsed.push_back(*std::move(t));
  }
  EinsumSpec spec;
  std::vector<int> count(kEinsumEllipsisLabel, 0);
  for (size_t i = 0; i < parsed.size(); ++i) {
    const Term& t = parsed[i];
    const int own = t.ellipsis_at < 0 ? 0 : ranks[i] - static_cast<int>(t.letters.size());
    std::vector<int> labels;
    for (int k = 0; k <= static_cast<int>(t.letters.size()); ++k) {
      if (k == t.ellipsis_at) {
        for (int e = 0; e < own; ++e) labels.push_back(kEinsumEllipsisLabel + ellipsis_rank - own + e);
      }
      if (k < static_cast<int>(t.letters.size())) {
        labels.push_back(t.letters[k]);
        ++count[t.letters[k]];
      }
    }
    spec.inputs.push_back(std::move(labels));
  }
  std::vector<int> ellipsis_labels;
  for (int e = 0; e < ellipsis_rank; ++e) ellipsis_labels.push_back(kEinsumEllipsisLabel + e);
  if (arrow == std::string::npos) {
    // Implicit output: the ellipsis dimensions, then the letters seen once in ASCII order (A-Z before a-z).
    spec.output = ellipsis_labels;
    std::vector<char> once;
    for (int l = 0; l < kEinsumEllipsisLabel; ++l) {
      if (count[l] == 1) once.push_back(LabelLetter(l));
    }
    std::sort(once.begin(), once.end());
    for (char c : once) spec.output.push_back(LetterLabel(c));
  } else {
    absl::StatusOr<Term> out =
        ParseTerm(absl::string_view(equation).substr(arrow + 2), equation_in, "output term");
    if (!out.ok()) return out.status();
    if (out->ellipsis_at < 0 && ellipsis_rank > 0) {
      return absl::InvalidArgumentError(absl::StrCat("Einsum equation '", equation_in, "': the inputs' '...' stands ",
                                                     "for ", ellipsis_rank,
                                                     " dimension(s) but the output has no '...'"));
    }
    std::vector<bool> seen(kEinsumEllipsisLabel, false);
    for (int k = 0; k <= static_cast<int>(out->letters.size()); ++k) {
      if (k == out->ellipsis_at) {
        if (!any_ellipsis) {
          return absl::InvalidArgumentError(
              absl::StrCat("Einsum equation '", equation_in, "': the output has '...' but no input term has"));
        }
        spec.output.insert(spec.output.end(), ellipsis_labels.begin(), ellipsis_labels.end());
      }
      if (k == static_cast<int>(out->letters.size())) break;
      const int l = out->letters[k];
      if (seen[l] || count[l] == 0) {
        return absl::InvalidArgumentError(absl::StrCat("Einsum equation '", equation_in, "': output subscript '",
                                                       std::string(1, LabelLetter(l)),
                                                       seen[l] ? "' is repeated" : "' is in no input term"));
      }
      seen[l] = true;
      spec.output.push_back(l);
    }
  }
  std::set<int> in_output(spec.output.begin(), spec.output.end());
  std::set<int> summed;
  for (const std::vector<int>& labels : spec.inputs) {
    for (int l : labels) {
      if (!in_output.count(l)) summed.insert(l);
    }
  }
  spec.summed.assign(summed.begin(), summed.end());
  return spec;
}

}  // namespace tessel
