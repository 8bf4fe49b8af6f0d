// Fills the operator-level catalog from each backend's registration function.
#include "kernels/op_kernels.h"

#include "kernels/activation/act_op_kernels.h"
#include "kernels/attention/attention_op_kernels.h"
#include "kernels/conv/conv_kernels.h"
#include "kernels/conv/conv_transpose.h"
#include "kernels/conv/conv_nd.h"
#include "kernels/conv/direct_conv.h"
#include "kernels/conv/dwconv3x3.h"
#include "kernels/conv/dwconv_kxk.h"
#include "kernels/conv/dwpw.h"
#include "kernels/conv/winograd.h"
#include "kernels/int8/int8_op_kernels.h"
#include "kernels/matmul/batched_matmul_op_kernels.h"
#include "kernels/norm/norm_op_kernels.h"
#include "kernels/resize/grid_sample_op_kernels.h"
#include "kernels/resize/roi_align_op_kernels.h"
#include "kernels/resize/resize_op_kernels.h"
#include "kernels/rnn/rnn_op_kernels.h"
#include "kernels/slice/concat_pad_op_kernels.h"
#include "kernels/slice/slice_op_kernels.h"
#include "kernels/vector/vector_op_kernels.h"
#include "kernels/xnnpack/xnnpack_kernels.h"

namespace tessel {

const OpKernelRegistry& OpKernels() {
  // Leaked on purpose (trivially destructible global): sessions may outlive other statics.
  static const OpKernelRegistry* registry = [] {
    auto* r = new OpKernelRegistry;
    RegisterXnnpackOpKernels(*r);
    RegisterGemmOpKernels(*r);
    RegisterConvNdOpKernels(*r);
    RegisterWinogradOpKernels(*r);
    RegisterDwPwOpKernels(*r);
    RegisterDirectConvOpKernels(*r);
    RegisterDwConv3x3OpKernels(*r);
    RegisterDwConvKxkOpKernels(*r);
    RegisterLayoutOpKernels(*r);
    RegisterInt8OpKernels(*r);
    RegisterVectorOpKernels(*r);
    RegisterRnnOpKernels(*r);
    RegisterNormOpKernels(*r);
    RegisterBatchedMatMulOpKernels(*r);
    RegisterSliceOpKernels(*r);
    RegisterConcatPadOpKernels(*r);
    RegisterResizeOpKernels(*r);
    RegisterGridSampleOpKernels(*r);
    RegisterRoiAlignOpKernels(*r);
    RegisterConvTransposeOpKernels(*r);
    RegisterActivationOpKernels(*r);
    RegisterAttentionOpKernels(*r);
    return r;
  }();
  return *registry;
}

}  // namespace tessel
