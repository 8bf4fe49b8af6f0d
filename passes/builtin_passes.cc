// The table of Tessel's built-in passes.
#include <mutex>

#include "passes/cse/cse.h"
#include "passes/dce/dce.h"
#include "passes/fold_batchnorm/fold_batchnorm.h"
#include "passes/fold_constants/fold_constants.h"
#include "passes/fold_rmsnorm_gain/fold_rmsnorm_gain.h"
#include "passes/fold_shape_ops/fold_shape_ops.h"
#include "passes/fuse_attention/fuse_attention.h"
#include "passes/fuse_conv_activation/fuse_conv_activation.h"
#include "passes/fuse_conv_add/fuse_conv_add.h"
#include "passes/fuse_depthwise_pointwise/fuse_depthwise_pointwise.h"
#include "passes/fuse_layernorm/fuse_layernorm.h"
#include "passes/fuse_matmul_bias_gelu/fuse_matmul_bias_gelu.h"
#include "passes/fuse_rmsnorm/fuse_rmsnorm.h"
#include "passes/fuse_rope/fuse_rope.h"
#include "passes/layout/layout.h"
#include "passes/pack_qkv/pack_qkv.h"
#include "passes/pass_manager.h"
#include "passes/simplify/simplify.h"

namespace tessel {

void RegisterBuiltinPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    PassRegistry& r = PassRegistry::Global();
    for (PassInfo info : {FoldShapeOpsPassInfo(), FoldConstantsPassInfo(), SimplifyPassInfo(), DcePassInfo(), CsePassInfo(),
                           FoldBatchNormPassInfo(), FuseConvAddPassInfo(), FuseConvActivationPassInfo(),
                           FuseDepthwisePointwisePassInfo(), FuseExpansionPassInfo(), FuseMatMulBiasGeluPassInfo(), LayoutPassInfo(),
                           FuseRMSNormPassInfo(), FuseLayerNormPassInfo(), FuseRopePassInfo(), FuseAttentionPassInfo(),
                           PackQkvPassInfo(), FoldRMSNormGainPassInfo()}) {
      // Already registered (e.g. by a test that registered it first) is fine.
      r.Register(std::move(info)).IgnoreError();
    }
  });
}

}  // namespace tessel
