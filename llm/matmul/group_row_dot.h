// GEMV microkernels for Tessel's group-wise INT4/INT3 weight types (llm/gguf/ggml_types.h,
// TesselGroupFormat): portable C++ for both widths, and INT4 through kernels/gemv's Int4Group kernel,
// which reads one row of the format as it is stored.
#ifndef TESSEL_LLM_MATMUL_GROUP_ROW_DOT_H_
#define TESSEL_LLM_MATMUL_GROUP_ROW_DOT_H_

#include "llm/matmul/row_dot.h"

namespace tessel::llm {

// The portable kernel for a Tessel group type (nullptr for any other type).
RowDotFn GetGroupRowDotPortable(GgmlType type);
// The fastest kernel for a Tessel group type: kernels/gemv's selected Int4Group kernel for INT4, the
// portable one for INT3; nullptr for any other type.
RowDotFn GetGroupRowDot(GgmlType type);

}  // namespace tessel::llm

#endif  // TESSEL_LLM_MATMUL_GROUP_ROW_DOT_H_
