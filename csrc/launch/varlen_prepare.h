// Host side of the packed-batch prepare kernel (kernels/common/varlen_prepare.h).
#pragma once

#include <cuda_runtime.h>

#include "../kernels/common/seq_geometry.h"
#include "../kernels/common/varlen_tiles.h"

namespace dash {

// The most sequences one packed call takes (the prepare kernel keeps a count per sequence
// in shared memory).
constexpr int kMaxVarlenBatch = 48 * 1024;

// Validates g's cu_seqlens / seqused on the device and fills tiles.table (int32,
// VarlenTiles::table_size(tiles.num_slabs, g.batch) entries) on `stream`.
void prepare_varlen_tiles(SeqGeometry const& g, VarlenTileCount count, VarlenTiles const& tiles, cudaStream_t stream);

}  // namespace dash
