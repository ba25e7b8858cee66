/**
 * What CUDA's built-in functions and its libraries' documented functions do to thread uniformity:
 * the API's meaning, written down once (a barrier makes shared memory agree across the block, a
 * vote gives every lane of the warp one value, an atomic gives each lane its own). Functions the
 * unit defines are read from their bodies instead; these are the ones with no body in view.
 */
import type { Sym } from './symbolic-values';

export type IntrinsicKind =
  /** `__syncthreads()`, `__barrier_sync(n)`: the block's threads meet; a value the block returns (`_count`, `_and`, `_or`). */
  | 'block-barrier'
  /** `__ballot_sync`, `__any_sync`, `__reduce_add_sync`: the same value in every lane of the warp. */
  | 'warp-vote'
  /** `__activemask()`: which lanes are here, the same in each. */
  | 'warp-mask'
  /** `__shfl_sync(mask, v, src, width)`: lane `src`'s value. */
  | 'shuffle-broadcast'
  /** `__shfl_down_sync` and the like: another lane's value. */
  | 'shuffle-relative'
  /** `__match_any_sync(mask, v)`: the lanes holding the same value as this one. */
  | 'match-any'
  /** `atomicAdd` and the like: each lane gets the value before its own update. */
  | 'atomic'
  /** `__ldg(p)`, `__float2int_rz(x)`: the argument's value, converted. */
  | 'pass-through'
  /** `min`, `max`: computed lane by lane. */
  | 'min'
  | 'max'
  /**
   * An integer function of one value (`__clz`, `__popc`, `__ffs`, `__brev`, `abs`): computed lane by
   * lane like `min`, so that a value made from the thread index through it keeps its lanes, not per-lane data.
   */
  | 'lane-function'
  /** The lane index (`cub::LaneId()`, `__lane_id()`). */
  | 'lane-id'
  /** The warp index within the block (`cub::WarpId()`). */
  | 'warp-id'
  /** A thread's index within its block, linear (`cub::RowMajorTid(...)`). */
  | 'linear-tid';

const TABLE: ReadonlyMap<string, IntrinsicKind> = new Map<string, IntrinsicKind>([
  ['__syncthreads', 'block-barrier'],
  ['__syncthreads_count', 'block-barrier'],
  ['__syncthreads_and', 'block-barrier'],
  ['__syncthreads_or', 'block-barrier'],
  ['__barrier_sync', 'block-barrier'],
  ['__ballot_sync', 'warp-vote'],
  ['__any_sync', 'warp-vote'],
  ['__all_sync', 'warp-vote'],
  ['__ballot', 'warp-vote'],
  ['__any', 'warp-vote'],
  ['__all', 'warp-vote'],
  ['__uni_sync', 'warp-vote'],
  ['__match_all_sync', 'warp-vote'],
  ['__reduce_add_sync', 'warp-vote'],
  ['__reduce_min_sync', 'warp-vote'],
  ['__reduce_max_sync', 'warp-vote'],
  ['__reduce_and_sync', 'warp-vote'],
  ['__reduce_or_sync', 'warp-vote'],
  ['__reduce_xor_sync', 'warp-vote'],
  ['__activemask', 'warp-mask'],
  ['__shfl_sync', 'shuffle-broadcast'],
  ['__shfl', 'shuffle-broadcast'],
  ['__shfl_up_sync', 'shuffle-relative'],
  ['__shfl_down_sync', 'shuffle-relative'],
  ['__shfl_xor_sync', 'shuffle-relative'],
  ['__shfl_up', 'shuffle-relative'],
  ['__shfl_down', 'shuffle-relative'],
  ['__shfl_xor', 'shuffle-relative'],
  ['__match_any_sync', 'match-any'],
  ['__ldg', 'pass-through'],
  ['__ldca', 'pass-through'],
  ['__ldcg', 'pass-through'],
  ['__ldcs', 'pass-through'],
  ['__ldlu', 'pass-through'],
  ['__ldcv', 'pass-through'],
  ['__float2int_rz', 'pass-through'],
  ['__float2int_rn', 'pass-through'],
  ['__float2int_rd', 'pass-through'],
  ['__float2int_ru', 'pass-through'],
  ['__float2uint_rz', 'pass-through'],
  ['__int2float_rn', 'pass-through'],
  ['__uint2float_rn', 'pass-through'],
  ['__float_as_int', 'pass-through'],
  ['__int_as_float', 'pass-through'],
  ['__float_as_uint', 'pass-through'],
  ['__uint_as_float', 'pass-through'],
  ['min', 'min'],
  ['umin', 'min'],
  ['llmin', 'min'],
  ['ullmin', 'min'],
  ['fminf', 'min'],
  ['fmin', 'min'],
  ['max', 'max'],
  ['umax', 'max'],
  ['llmax', 'max'],
  ['ullmax', 'max'],
  ['fmaxf', 'max'],
  ['fmax', 'max'],
  ['__clz', 'lane-function'],
  ['__clzll', 'lane-function'],
  ['__popc', 'lane-function'],
  ['__popcll', 'lane-function'],
  ['__ffs', 'lane-function'],
  ['__ffsll', 'lane-function'],
  ['__brev', 'lane-function'],
  ['abs', 'lane-function'],
  ['labs', 'lane-function'],
  ['llabs', 'lane-function'],
  ['__lane_id', 'lane-id'],
  ['__laneid', 'lane-id'],
  ['cub::LaneId', 'lane-id'],
  // libcu++'s PTX special registers (`cuda::ptx::get_sreg_laneid()`): %laneid.
  ['cuda::ptx::get_sreg_laneid', 'lane-id'],
  ['ptx::get_sreg_laneid', 'lane-id'],
  ['cub::WarpId', 'warp-id'],
  ['cub::RowMajorTid', 'linear-tid'],
]);

const ATOMIC = /^atomic(?:Add|Sub|Exch|Min|Max|Inc|Dec|CAS|And|Or|Xor)(?:_block|_system)?$/;
/**
 * A vote the unit cannot see defined: a macro set when the kernel is compiled at run time
 * (OpenMM's `BALLOT(x)`), a wrapper of another library. Named for what it is, it is taken as one.
 */
const VOTE_NAME = /^(?:\w*_)?(?:ballot|BALLOT|Ballot)(?:_sync|_SYNC|Sync)?$/;

/**
 * What a call of `name` (as written, namespace included) means, when the unit does not define it
 * (`defined`: whether it does; a vote's name is trusted only for a function out of view).
 */
export function intrinsicOf(name: string, defined = false): IntrinsicKind | null {
  const plain = name.replace(/^::/, '').replace(/^(?:std|cuda::std)::/, '');
  const base = plain.replace(/^.*::/, '');
  const known = TABLE.get(plain) ?? (base.startsWith('__') ? TABLE.get(base) : undefined);
  if (known) return known;
  if (ATOMIC.test(base)) return 'atomic';
  if (!defined && VOTE_NAME.test(base)) return 'warp-vote';
  return null;
}

/** Cooperative groups (`cooperative_groups::`, usually `cg::`): the groups a kernel makes, and their methods. */
export type GroupKind = 'block' | 'tile' | 'coalesced' | 'grid' | 'thread' | 'cluster';

export interface GroupInfo {
  kind: GroupKind;
  /** A tile's size, when known. */
  size: number | null;
  /** A tile's size the program fixes but the analysis cannot compute (`tiled_partition<paddedHead / vec>`). */
  sizeSym?: Sym;
}

/** The group a factory call makes: `this_thread_block()`, `tiled_partition<32>(g)`, `coalesced_threads()`. */
export function groupFactory(name: string): GroupKind | null {
  switch (name.replace(/^.*::/, '')) {
    case 'this_thread_block':
      return 'block';
    case 'this_grid':
      return 'grid';
    case 'this_multi_grid':
      return 'grid';
    case 'coalesced_threads':
      return 'coalesced';
    case 'this_cluster':
      return 'cluster';
    case 'this_thread':
      return 'thread';
    case 'tiled_partition':
    case 'binary_partition':
    case 'labeled_partition':
      return 'tile';
    default:
      return null;
  }
}

/** Group types by name, for a group passed as a parameter (`const cg::thread_block& block`). */
export function groupOfType(type: string): GroupInfo | null {
  const t = type.replace(/\b(?:const|volatile)\b|[&*]/g, '').replace(/\s+/g, '');
  const m =
    /(?:^|::)(thread_block_tile|thread_block|grid_group|coalesced_group|cluster_group|thread_group)(?:<(\d+)(?:,[^>]*)?>)?$/.exec(
      t,
    );
  if (!m) return null;
  switch (m[1]) {
    case 'thread_block':
      return { kind: 'block', size: null };
    case 'grid_group':
      return { kind: 'grid', size: null };
    case 'coalesced_group':
      return { kind: 'coalesced', size: null };
    case 'cluster_group':
      return { kind: 'cluster', size: null };
    case 'thread_block_tile':
      return { kind: 'tile', size: m[2] ? Number(m[2]) : null };
    default:
      return null;
  }
}
