#include "varlen_prepare.h"

#include "../kernels/common/varlen_prepare.h"
#include "launch_utils.h"

namespace dash {

void prepare_varlen_tiles(SeqGeometry const& g, VarlenTileCount count, VarlenTiles const& tiles, cudaStream_t stream) {
  size_t const smem = size_t(g.batch) * sizeof(int);
  if (smem > 48 * 1024) {
    check_cuda(cudaFuncSetAttribute(varlen_tiles_prepare_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    int(smem)),
               "cudaFuncSetAttribute(varlen prepare)");
  }
  varlen_tiles_prepare_kernel<<<1, kVarlenPrepareThreads, smem, stream>>>(
      g, count, tiles.num_slabs, tiles.units, tiles.reverse, const_cast<int*>(tiles.table));
  check_cuda(cudaGetLastError(), "launch of the variable-length prepare kernel");
}

}  // namespace dash
