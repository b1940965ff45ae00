"""Python mirror of csrc/kernels/common/seq_geometry.h and mask.h: the sequence geometry
of a call (lengths, row offsets, workspace rows, GQA head mapping), the mask (a band,
MaskWindow, normalized by make_mask_window) and its tile ranges. Same names, same formulas;
tests/test_schedule_model.py compiles the headers for the host and compares them with this
file on random fixed-length and packed (cu_seqlens) geometries and random bands."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class SeqInfo:
    batch: int
    len_q: int
    len_k: int
    row_q: int
    row_k: int
    tensor_batch: int
    stats_row: int


@dataclass(frozen=True)
class SeqGeometry:
    batch: int
    heads: int
    heads_kv: int
    seqlen_q: int  # fixed: every sequence's length; packed: max_seqlen_q
    seqlen_k: int
    cu_seqlens_q: Sequence[int] | None
    cu_seqlens_k: Sequence[int] | None
    seqused_q: Sequence[int] | None
    seqused_k: Sequence[int] | None
    total_q: int
    total_k: int
    stats_block: int
    stats_rows: int

    @staticmethod
    def fixed(batch, heads, heads_kv, seqlen_q, seqlen_k, stats_block) -> "SeqGeometry":
        return SeqGeometry(batch, heads, heads_kv, seqlen_q, seqlen_k, None, None, None, None, seqlen_q, seqlen_k,
                           stats_block, ceil_div(seqlen_q, stats_block) * stats_block)

    @staticmethod
    def packed(heads, heads_kv, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, stats_block,
               seqused_q=None, seqused_k=None) -> "SeqGeometry":
        batch = len(cu_seqlens_q) - 1
        total_q, total_k = cu_seqlens_q[-1], cu_seqlens_k[-1]
        stats_rows = ceil_div(total_q + batch * stats_block, stats_block) * stats_block
        return SeqGeometry(batch, heads, heads_kv, max_seqlen_q, max_seqlen_k, tuple(cu_seqlens_q),
                           tuple(cu_seqlens_k), None if seqused_q is None else tuple(seqused_q),
                           None if seqused_k is None else tuple(seqused_k), total_q, total_k, stats_block, stats_rows)

    def packed_layout(self) -> bool:
        return self.cu_seqlens_q is not None

    def group(self) -> int:
        return self.heads // self.heads_kv

    def kv_head(self, head: int) -> int:
        return head // self.group()

    def tensor_batches(self) -> int:
        return 1 if self.packed_layout() else self.batch

    def seq(self, b: int) -> SeqInfo:
        if not self.packed_layout():
            return SeqInfo(b, self.seqlen_q, self.seqlen_k, 0, 0, b, 0)
        row_q, row_k = self.cu_seqlens_q[b], self.cu_seqlens_k[b]
        len_q = self.seqused_q[b] if self.seqused_q is not None else self.cu_seqlens_q[b + 1] - row_q
        len_k = self.seqused_k[b] if self.seqused_k is not None else self.cu_seqlens_k[b + 1] - row_k
        stats_row = (row_q + b * self.stats_block) // self.stats_block * self.stats_block
        return SeqInfo(b, len_q, len_k, row_q, row_k, 0, stats_row)

    def stats_offset(self, s: SeqInfo, head: int) -> int:
        if self.packed_layout():
            return head * self.stats_rows + s.stats_row
        return (s.batch * self.heads + head) * self.stats_rows

    def dq_tile(self, s: SeqInfo, head: int, m_block: int) -> int:
        return self.stats_offset(s, head) // self.stats_block + m_block

    def num_dq_tiles(self) -> int:
        return (self.heads if self.packed_layout() else self.batch * self.heads) * self.stats_rows // self.stats_block

    def kv_tiles_per_head(self, block_n: int) -> int:
        if self.packed_layout():
            return (self.total_k + self.batch * block_n) // block_n + 1
        return self.batch * ceil_div(self.seqlen_k, block_n)

    def kv_tile(self, s: SeqInfo, kv_head: int, n_block: int, block_n: int) -> int:
        """Slot of (sequence, K/V head, KV tile) in the split groups' dK / dV workspace."""
        first = ((s.row_k + s.batch * block_n) // block_n if self.packed_layout()
                 else s.batch * ceil_div(self.seqlen_k, block_n))
        return kv_head * self.kv_tiles_per_head(block_n) + first + n_block

    def lse_offset(self, s: SeqInfo, head: int) -> int:
        if self.packed_layout():
            return head * self.total_q + s.row_q
        return (s.batch * self.heads + head) * self.seqlen_q


MASK_FULL, MASK_BAND = 0, 1  # MaskKind in C++


@dataclass(frozen=True)
class MaskWindow:
    """The call's band, FlashAttention-3's window_size = (left, right): query i sees key j iff
    i + shift - left <= j <= i + shift + right (shift = len_k - len_q), a negative bound
    unbounded. Full: (-1, -1); causal: (-1, 0)."""
    left: int
    right: int

    def full(self) -> bool:
        return self.left < 0 and self.right < 0

    def causal(self) -> bool:
        return self.left < 0 and self.right == 0

    def windowed(self) -> bool:
        """A band other than the causal one: the causal schedules' shapes do not apply."""
        return not self.full() and not self.causal()

    def kind(self) -> int:
        return MASK_FULL if self.full() else MASK_BAND


FULL = MaskWindow(-1, -1)
CAUSAL = MaskWindow(-1, 0)


def make_mask_window(causal: bool, left: int, right: int, seqlen_q: int, seqlen_k: int) -> MaskWindow:
    """FlashAttention-3's rules: causal sets right = 0; a negative bound, or one covering the
    whole sequence (packed: the longest), is unbounded."""
    if left < 0 or left >= seqlen_k - 1:
        left = -1
    if right < 0 or right >= seqlen_q - 1:
        right = -1
    if causal:
        right = 0
    return MaskWindow(left, right)


def as_mask_window(mask: "MaskWindow | bool") -> MaskWindow:
    """The callers' older `causal` flag, or a MaskWindow as is."""
    if isinstance(mask, MaskWindow):
        return mask
    return CAUSAL if mask else FULL


def normalized_mask_window(mask: "MaskWindow | bool", seqlen_q: int, seqlen_k: int) -> MaskWindow:
    """The band the op runs for this causal flag or window (make_mask_window; packed: the
    longest sequences' lengths). The causal band stays causal at every length."""
    window = as_mask_window(mask)
    return make_mask_window(window.causal(), window.left, window.right, seqlen_q, seqlen_k)


@dataclass(frozen=True)
class ElementMask:
    """Element-level mask of one (Q tile, KV tile) pair, relative to a thread's first element."""
    UNBOUNDED = 1 << 30  # a diagonal no tile-local kv0 - q0 reaches
    kv_limit: int        # keys kv0 >= kv_limit are past the sequence's end
    right_diagonal: int  # band: keys with kv0 - q0 > right_diagonal are right of the band
    left_diagonal: int   # band: keys with kv0 - q0 < left_diagonal are left of it

    def hidden(self, banded: bool, q0: int, kv0: int) -> bool:
        return kv0 >= self.kv_limit or (banded and (kv0 - q0 > self.right_diagonal or kv0 - q0 < self.left_diagonal))

    def right_edge_only(self, block_m: int, block_n: int) -> bool:
        """Whether only the band's right edge can hide an entry of a block_m x block_n tile (q0 <
        block_m, kv0 < block_n): hidden() is then right_of_band()."""
        return self.left_diagonal <= 1 - block_m and self.kv_limit >= block_n

    def right_of_band(self, q0: int, kv0: int) -> bool:
        return kv0 - q0 > self.right_diagonal


@dataclass(frozen=True)
class SeqTiles:
    """One sequence's tiles under the mask (bottom-right aligned). `window` also takes the
    older causal flag (True: causal, False: full)."""
    len_q: int
    len_k: int
    block_m: int
    block_n: int
    window: MaskWindow

    def __post_init__(self):
        object.__setattr__(self, "window", as_mask_window(self.window))

    def num_m_blocks(self) -> int:
        return ceil_div(self.len_q, self.block_m)

    def num_n_blocks(self) -> int:
        return ceil_div(self.len_k, self.block_n)

    def shift(self) -> int:
        return self.len_k - self.len_q

    def n_block_begin(self, m_block: int) -> int:
        """KV tiles [n_block_begin(m), n_block_end(m)) hold a key that some query row of Q tile
        m may see (an empty range when none)."""
        if self.window.left < 0:
            return 0
        first_key = m_block * self.block_m + self.shift() - self.window.left  # of the tile's first row
        begin = 0 if first_key <= 0 else first_key // self.block_n
        return min(begin, self.num_n_blocks())

    def n_block_end(self, m_block: int) -> int:
        return self.n_block_end_of_rows(m_block, self.block_m)

    def n_block_end_of_rows(self, m_block: int, rows: int) -> int:
        """n_block_end for the first `rows` rows of Q tile m alone (a forward warpgroup's share of
        a tall tile and those above it)."""
        n = self.num_n_blocks()
        if self.window.right < 0:
            return n
        last_key = m_block * self.block_m + rows - 1 + self.shift() + self.window.right  # of their last row
        visible = 0 if last_key < 0 else last_key // self.block_n + 1
        return min(visible, n)

    def m_block_begin(self, n_block: int) -> int:
        """Q tiles [m_block_begin(n), m_block_end(n)) hold a query that may see some key of KV tile n."""
        if self.window.right < 0:
            return 0
        first_query = n_block * self.block_n - self.shift() - self.window.right  # sees the tile's first key
        begin = 0 if first_query <= 0 else first_query // self.block_m
        return min(begin, self.num_m_blocks())

    def m_block_end(self, n_block: int) -> int:
        m = self.num_m_blocks()
        if self.window.left < 0:
            return m
        last_query = (n_block + 1) * self.block_n - 1 - self.shift() + self.window.left  # sees its last key
        visible = 0 if last_query < 0 else last_query // self.block_m + 1
        return min(visible, m)

    def partial(self, m_block: int, n_block: int) -> bool:
        """Whether some entries of the pair are hidden: the KV tile reaches past len_k, right
        of the tile's first row's band, or left of its last row's."""
        w = self.window
        return ((n_block + 1) * self.block_n > self.len_k or
                (w.right >= 0 and (n_block + 1) * self.block_n - 1 > m_block * self.block_m + self.shift() + w.right) or
                (w.left >= 0 and n_block * self.block_n < (m_block + 1) * self.block_m - 1 + self.shift() - w.left))

    def unmasked_n_blocks(self, m_block: int) -> tuple[int, int]:
        """The KV tiles [lo, hi) of Q tile m that need no element mask, within [n_block_begin,
        n_block_end); the partial tiles are exactly the rest, [n_block_begin, lo) and [hi,
        n_block_end). Empty: (n_block_end, n_block_end)."""
        begin, end = self.n_block_begin(m_block), self.n_block_end(m_block)
        hi = self.len_k // self.block_n
        if self.window.right >= 0:
            hi = min(hi, (m_block * self.block_m + self.shift() + self.window.right + 1) // self.block_n)
        lo = 0
        if self.window.left >= 0:
            lo = -(-((m_block + 1) * self.block_m - 1 + self.shift() - self.window.left) // self.block_n)
        lo, hi = max(lo, begin), min(hi, end)
        return (lo, hi) if lo < hi else (end, end)

    def element_mask(self, m_block: int, n_block: int, q_offset: int, kv_offset: int) -> ElementMask:
        diagonal = m_block * self.block_m + self.shift() - n_block * self.block_n + q_offset - kv_offset
        return ElementMask(self.len_k - n_block * self.block_n - kv_offset,
                           ElementMask.UNBOUNDED if self.window.right < 0 else diagonal + self.window.right,
                           -ElementMask.UNBOUNDED if self.window.left < 0 else diagonal - self.window.left)


def seq_tiles(s: SeqInfo, block_m: int, block_n: int, window: "MaskWindow | bool") -> SeqTiles:
    return SeqTiles(s.len_q, s.len_k, block_m, block_n, as_mask_window(window))


UNIT_MAJOR, SEQUENCE_MAJOR, SEQUENCE_TILE_MAJOR = 0, 2, 3  # VarlenOrder in C++


@dataclass(frozen=True)
class VarlenItem:
    tile: int   # the item's tile in its sequence
    batch: int
    unit: int


def _last_at_or_before(begin, n: int, item: int, scale: int) -> int:
    lo, hi = 0, n - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if begin[mid] * scale <= item:
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclass(frozen=True)
class VarlenTiles:
    """Mirror of csrc/kernels/common/varlen_tiles.h: the dense item table of a packed call.
    Sequences are ordered by tile count (descending, ties by index). Numberings:
    UNIT_MAJOR: unit (head) by unit; within a unit, slab s holds the item of every sequence
    with more than threshold(s) tiles.
    SEQUENCE_MAJOR: sequence by sequence, unit by unit, tiles from the last down.
    SEQUENCE_TILE_MAJOR: sequence by sequence, tile by tile from the first, unit by unit."""
    num_items: int
    slab_begin: tuple  # num_slabs + 1 entries
    order: tuple       # sequences by tile count, descending
    seq_begin: tuple   # batch + 1 entries: a unit's items before the i-th sequence of `order`
    num_slabs: int
    units: int
    reverse: bool
    numbering: int = UNIT_MAJOR

    @staticmethod
    def build(geo: SeqGeometry, block: int, key_side: bool, num_slabs: int, units: int,
              reverse: bool = False, numbering: int = UNIT_MAJOR) -> "VarlenTiles":
        counts = [ceil_div(geo.seq(b).len_k if key_side else geo.seq(b).len_q, block) for b in range(geo.batch)]
        order = tuple(sorted(range(geo.batch), key=lambda b: (-counts[b], b)))
        begins, items = [], 0
        for s in range(num_slabs):
            begins.append(items)
            threshold = num_slabs - 1 - s if reverse else s
            items += sum(1 for c in counts if c > threshold)
        begins.append(items)
        seq_begin = [0]
        for b in order:
            seq_begin.append(seq_begin[-1] + counts[b])
        return VarlenTiles(items * units, tuple(begins), order, tuple(seq_begin), num_slabs, units, reverse,
                           numbering)

    def table(self) -> list[int]:
        return [self.num_items, *self.slab_begin, *self.order, *self.seq_begin]

    def tile_of_slab(self, s: int) -> int:
        return self.num_slabs - 1 - s if self.reverse else s

    def locate(self, item: int) -> VarlenItem:
        if self.numbering == SEQUENCE_MAJOR:
            i = _last_at_or_before(self.seq_begin, len(self.order), item, self.units)
            tiles = self.seq_begin[i + 1] - self.seq_begin[i]
            unit, j = divmod(item - self.seq_begin[i] * self.units, tiles)
            return VarlenItem(tiles - 1 - j, self.order[i], unit)
        if self.numbering == SEQUENCE_TILE_MAJOR:
            i = _last_at_or_before(self.seq_begin, len(self.order), item, self.units)
            tile, unit = divmod(item - self.seq_begin[i] * self.units, self.units)
            return VarlenItem(tile, self.order[i], unit)
        unit, local = divmod(item, self.slab_begin[self.num_slabs])  # UNIT_MAJOR
        s = _last_at_or_before(self.slab_begin, self.num_slabs, local, 1)
        return VarlenItem(self.tile_of_slab(s), self.order[local - self.slab_begin[s]], unit)

