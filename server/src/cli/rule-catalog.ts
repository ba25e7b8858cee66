/**
 * Every finding code the analysis emits, with the help text a SARIF viewer (GitHub code scanning,
 * the SARIF Viewer extension) shows next to a result. Codes are stable: they appear in the editor's
 * diagnostics, in `check --format json` and as SARIF rule ids. A code missing here still works
 * through `ruleFor`, which makes a generic rule for it.
 */

export type RuleLevel = 'error' | 'warning' | 'note';

export interface RuleInfo {
  /** The finding code, used as the SARIF rule id. */
  id: string;
  /** PascalCase name (SARIF `reportingDescriptor.name`). */
  name: string;
  /** One sentence: what is wrong. */
  short: string;
  /** Why it matters, what happens at run time. */
  full: string;
  /** What to do about it, in Markdown. */
  fix: string;
  level: RuleLevel;
  tags: string[];
}

const CATALOG: readonly RuleInfo[] = [
  {
    id: 'launch-exceeds-bounds',
    name: 'LaunchExceedsBounds',
    short: "A launch uses more threads per block than the kernel's __launch_bounds__ allows.",
    full: 'ptxas compiles a kernel with `__launch_bounds__(N)` for at most N threads per block and may use more registers than a larger block could have. A launch with more threads fails with cudaErrorInvalidConfiguration / "too many resources requested for launch", and the kernel never runs.',
    fix: "Launch with at most the bound's `maxThreadsPerBlock` threads per block, or raise the bound (`__launch_bounds__(1024)`) and let ptxas recompile the kernel for the larger block.",
    level: 'error',
    tags: ['cuda', 'correctness', 'launch'],
  },
  {
    id: 'block-too-large',
    name: 'BlockTooLarge',
    short: 'A launch asks for a block no CUDA GPU accepts.',
    full: 'A block holds at most 1024 threads, with blockDim.x and blockDim.y at most 1024 and blockDim.z at most 64, on every architecture. A larger block fails with cudaErrorInvalidConfiguration.',
    fix: 'Shrink the block to at most 1024 threads (and within the per-axis limits) and launch more blocks in the grid instead.',
    level: 'error',
    tags: ['cuda', 'correctness', 'launch'],
  },
  {
    id: 'block-not-warp-multiple',
    name: 'BlockNotWarpMultiple',
    short: 'The block size is not a multiple of 32, so its last warp runs with idle lanes.',
    full: 'The GPU schedules whole warps of 32 threads. A block of 100 threads takes 4 warps, and the last one runs with 4 active lanes: 28 lanes idle while still holding their warp slot, registers and issue bandwidth.',
    fix: 'Round the block size to a multiple of 32 (for example 96 or 128 instead of 100) and guard the extra threads with a bounds check (`if (i < n)`).',
    level: 'warning',
    tags: ['cuda', 'performance', 'launch'],
  },
  {
    id: 'dynamic-smem-needs-opt-in',
    name: 'DynamicSmemNeedsOptIn',
    short: 'A launch asks for more than 48 KB of shared memory per block without opting in.',
    full: 'Without `cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)`, a block gets at most 48 KB of shared memory (static plus dynamic). A launch that asks for more fails with cudaErrorInvalidValue, although the GPU has the memory.',
    fix: 'Call `cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)` once before the launch, with at least the dynamic shared memory the launch asks for.',
    level: 'error',
    tags: ['cuda', 'correctness', 'launch', 'shared-memory'],
  },
  {
    id: 'dynamic-smem-over-limit',
    name: 'DynamicSmemOverLimit',
    short: 'A launch asks for more shared memory per block than the architecture has, even with the opt-in.',
    full: 'Each architecture has a maximum of shared memory per block (`sharedMemPerBlockOptin`: 163 KB on sm_80, 227 KB on sm_90, 99 KB on sm_86/sm_89). A launch above it fails with cudaErrorInvalidValue on that architecture whatever the opt-in says.',
    fix: "Reduce the tile size or split the work so that static plus dynamic shared memory fits the smallest target architecture's maximum.",
    level: 'error',
    tags: ['cuda', 'correctness', 'launch', 'shared-memory'],
  },
  {
    id: 'launch-unresolved-kernel',
    name: 'LaunchUnresolvedKernel',
    short: 'The kernel a launch starts could not be found, so it is not checked.',
    full: 'The launched name could not be matched to a `__global__` definition in this file or the workspace (a function pointer, a kernel defined in a library, an overload that cannot be told apart). Its launch bounds, registers and occupancy are not checked.',
    fix: "Nothing is wrong with the code. To have the launch checked, make the kernel's definition visible (include its file in the analysed paths) or launch it by name.",
    level: 'note',
    tags: ['cuda', 'analysis'],
  },
  {
    id: 'divergent-branch',
    name: 'DivergentBranch',
    short: 'A branch on the thread index splits the lanes of a warp.',
    full: 'When lanes of one warp take different sides of a branch, the warp runs both sides one after the other with part of its lanes masked off. The estimated cost is the extra issue slots the warp pays; interleaved reductions (`t % (2 * s) == 0`) are the classic case.',
    fix: 'Make the condition uniform across each warp: branch on the warp index (`threadIdx.x / 32`) rather than on the lane, use contiguous strides (`t < s`) in reductions, or compute both sides and select.',
    level: 'warning',
    tags: ['cuda', 'performance', 'divergence'],
  },
  {
    id: 'barrier-divergence',
    name: 'BarrierDivergence',
    short: 'A barrier is reached by only part of the block (or `__syncwarp` by lanes its mask does not name).',
    full: "`__syncthreads()` (and `__syncthreads_count/and/or`, a block group's `sync()`, `bar.sync` in inline PTX) must be reached by every thread of the block; under a condition that differs between the threads, or after an early `return` or `break` of some of them, the others never arrive: the block hangs or reads shared memory before it is written. `__syncwarp(mask)` must be called by exactly the lanes its mask names. An error where the thread indices prove the split for the block shapes in use; a warning where it depends on data or on values the kernel reads.",
    fix: 'Move the barrier out of the condition: let every thread reach it and do no work where the condition fails (`if (i < n) s[t] = x[i]; __syncthreads();`), or make the condition the same for the whole block. For `__syncwarp`, pass the mask of the lanes that reach it.',
    level: 'error',
    tags: ['cuda', 'correctness', 'synchronization'],
  },
  {
    id: 'uncoalesced-access',
    name: 'UncoalescedAccess',
    short: 'A global load or store touches more 32-byte sectors per warp request than unit stride would.',
    full: 'A warp request is served in 32-byte sectors. When neighbouring lanes read elements a stride apart (a thread per row of a row-major matrix, `a[threadIdx.x * n]`), a request touches up to 32 sectors where unit stride would touch 4 (for 4-byte elements), and most of the bytes fetched are wasted. The tool evaluates the address lane by lane for the block shapes of the launches; a gather through per-lane data is not reported. A warning from 4 times the ideal sectors, a hint from 2 times. A load of bytes every block reads alike (the address does not depend on the block: a parameter vector) is served from L1 or L2 after the first block: at most a hint, and none where the neighbouring loads of the lane use the rest of each sector.',
    fix: 'Make consecutive lanes touch consecutive elements: swap the roles of `threadIdx.x` and the loop index, stage a tile through shared memory and transpose it there, or load wider vectors (`float4`) per lane.',
    level: 'warning',
    tags: ['cuda', 'performance', 'memory'],
  },
  {
    id: 'bank-conflict',
    name: 'BankConflict',
    short: 'Lanes of a warp hit the same shared-memory bank at different addresses.',
    full: 'Shared memory has 32 banks of 4-byte words; a request whose lanes fall on one bank at n different words is served in n passes (an n-way conflict). A column of a `float t[32][32]` tile read by `t[threadIdx.x][c]` is 32-way; `float t[32][33]` is conflict-free. 8- and 16-byte accesses are served a half and a quarter warp at a time, and the n-way is counted within each. A warning from 4-way, a hint below; none where the access runs once per thread (in no loop) and its extra passes, over the warps of the block, stay below what a divergent branch must cost to be a warning.',
    fix: 'Pad the rows so that neighbouring lanes are an odd number of words apart (`[32][33]` rather than `[32][32]`), swizzle the index with an XOR, or change which index follows the lane.',
    level: 'warning',
    tags: ['cuda', 'performance', 'shared-memory'],
  },
  {
    id: 'nvcc-failed',
    name: 'NvccFailed',
    short: 'nvcc could not compile the file, so its kernels have no register figures.',
    full: "Register and shared-memory figures come from ptxas, run on the file with its build flags (from compile_commands.json or the settings). When nvcc fails, usually on a header it cannot find or a macro the build defines, no occupancy is claimed for the kernels it would have compiled. The diagnostic sits at the top of the file (and of the headers whose kernels wait for it) and quotes nvcc's first error.",
    fix: "Give nvcc what the build gives it: the include folders (`cudaOccupancy.nvcc.includePaths`, or `-I DIR` on the command line), the macros (`cudaOccupancy.nvcc.defines`, `-D NAME=VALUE`), or point the tool at the build's `compile_commands.json` (`cudaOccupancy.compileCommandsDir`, `-p DIR`).",
    level: 'note',
    tags: ['cuda', 'configuration', 'nvcc'],
  },
  {
    id: 'register-spill',
    name: 'RegisterSpill',
    short: 'ptxas spilled registers to local memory.',
    full: 'The kernel needs more registers than ptxas allowed it (from `__launch_bounds__`, `-maxrregcount` or `__maxnreg__`), so ptxas stores values in local memory, which lives in device memory behind the L1 cache. Spill loads and stores add memory traffic and latency to every thread.',
    fix: 'Relax the register cap (a smaller `minBlocksPerMultiprocessor` in `__launch_bounds__`, a larger `-maxrregcount`), or lower the register pressure: fewer live values, smaller unrolled loops, arrays indexed with compile-time constants so they stay in registers.',
    level: 'warning',
    tags: ['cuda', 'performance', 'registers', 'ptxas'],
  },
  {
    id: 'register-spill-here',
    name: 'RegisterSpillHere',
    short: 'A source line where the SASS stores registers to local memory or loads them back.',
    full: "Where the CUDA toolkit has nvdisasm, the tool reads the SASS of the kernel's cubin (`nvdisasm --print-life-ranges --print-line-info`) and puts each local-memory store (`STL`) and load (`LDL`) at the source line it was generated for, in kernels that ptxas says spill. The spill itself is the kernel's `register-spill` warning; these lines say where the spilled values are stored and reloaded. A kernel with a local array as well uses the same instructions for it, and the message says so.",
    fix: 'Relieve the register pressure around the line: keep fewer values live across it (recompute cheap values, shorten the live range of temporaries, unroll less), or relax the register cap that forces the spill (`__launch_bounds__`, `-maxrregcount`).',
    level: 'note',
    tags: ['cuda', 'performance', 'registers', 'sass'],
  },
  {
    id: 'launch-bounds-unmet',
    name: 'LaunchBoundsUnmet',
    short: "ptxas could not honour the kernel's __launch_bounds__ or register limit.",
    full: 'ptxas reported that it ignored or adjusted the register limit that `__launch_bounds__(threads, minBlocks)`, `__maxnreg__` or `-maxrregcount` asks for (for example because the limit is below what the kernel needs, or two limits conflict). The kernel is compiled with other register figures than the bound promises, so the blocks per SM it was written for may not be reached.',
    fix: 'Read the ptxas message in the result. Make the limits agree (one of `__launch_bounds__`, `__maxnreg__` or `-maxrregcount`), and ask for a register cap the kernel can meet: a smaller `minBlocksPerMultiprocessor`, or less register pressure in the kernel.',
    level: 'warning',
    tags: ['cuda', 'performance', 'registers', 'ptxas'],
  },
  {
    id: 'kernel-too-many-resources',
    name: 'KernelTooManyResources',
    short: 'ptxas reports that the kernel needs more shared memory or resources than the architecture has.',
    full: 'ptxas rejected or flagged the kernel because its static shared memory, registers or other per-block resources exceed what one SM of the target architecture provides. No launch of it can succeed there.',
    fix: 'Reduce the static `__shared__` arrays (or move them to dynamic shared memory with the opt-in), or the registers the kernel needs, until it fits the smallest target architecture.',
    level: 'error',
    tags: ['cuda', 'correctness', 'ptxas'],
  },
  {
    id: 'launch-too-many-resources',
    name: 'LaunchTooManyResources',
    short: 'With the compiled registers or shared memory, not one block of this launch fits on an SM.',
    full: "The kernel's registers per thread times the threads per block exceed the SM's register file, or the block's shared memory exceeds the SM's. The launch fails with \"too many resources requested for launch\" (cudaErrorLaunchOutOfResources).",
    fix: 'Launch smaller blocks, or cap the registers for this block size with `__launch_bounds__(threadsPerBlock)` so ptxas compiles the kernel to fit, or use less shared memory per block.',
    level: 'error',
    tags: ['cuda', 'correctness', 'launch', 'registers'],
  },
  {
    id: 'low-occupancy',
    name: 'LowOccupancy',
    short: "The launch's theoretical occupancy is below the configured threshold.",
    full: 'Few resident warps per SM leave little to hide memory and instruction latency with. The finding names the binding limit (registers, shared memory, warps, blocks or barriers); the threshold is the `cudaOccupancy.occupancyWarningBelow` setting.',
    fix: 'Relieve the binding limit shown in the message: fewer registers per thread (`__launch_bounds__`), less shared memory per block, or a different block size. Low occupancy is fine when each warp has enough independent work (instruction-level parallelism).',
    level: 'note',
    tags: ['cuda', 'performance', 'occupancy'],
  },
  {
    id: 'latency-deficit',
    name: 'LatencyDeficit',
    short: 'Too few warps are resident to hide memory latency at this launch.',
    full: "By Little's law, keeping the memory system busy needs latency x throughput bytes in flight. With the resident warps this launch gets and the independent loads each warp issues, the estimate falls short, so the SM waits on memory.",
    fix: 'Raise the resident warps (see the binding limit) or the independent memory operations per warp (load several elements per thread, unroll, use vector loads), or accept it for a kernel that is not memory-bound.',
    level: 'note',
    tags: ['cuda', 'performance', 'latency'],
  },
  {
    id: 'small-grid',
    name: 'SmallGrid',
    short: 'The grid has fewer blocks than the GPU has SMs, so some SMs stay idle.',
    full: 'Each block runs on one SM. With fewer blocks than SMs, the rest of the GPU has nothing to do for the whole launch, whatever the occupancy of the SMs that do run.',
    fix: 'Give the launch more blocks (smaller blocks, or more work items), run independent launches concurrently in streams, or accept it for a launch that is small by nature.',
    level: 'note',
    tags: ['cuda', 'performance', 'waves'],
  },
  {
    id: 'tail-effect',
    name: 'TailEffect',
    short: 'The last wave of the grid runs mostly empty.',
    full: 'The GPU runs blocks in waves of (blocks per SM × SMs). A grid that is a little over a whole number of waves runs its last wave nearly empty: the SMs idle through it while a few blocks finish.',
    fix: 'Size the grid to fill whole waves (the finding names the grid that does), make each block do more or less work so the count lands on a wave boundary, or use a grid-stride loop over one full wave.',
    level: 'note',
    tags: ['cuda', 'performance', 'waves'],
  },
  {
    id: 'too-large-to-analyse',
    name: 'TooLargeToAnalyse',
    short: 'A document is larger, or has a longer line, than the analysis accepts, and is not analysed.',
    full: 'Documents over `cudaOccupancy.limits.documentMB` (4 MB by default), or with a line longer than `cudaOccupancy.limits.lineLength` characters (100,000 by default), are generated tables or minified code far more often than kernels, and analysing them would take minutes and gigabytes. The editor shows this one information diagnostic for them; the CLI skips them with one line on stderr.',
    fix: 'Move the generated data out of the file with the kernels (a separate `.cu` or a binary resource), or raise the limits in your user settings if the file really must be analysed.',
    level: 'note',
    tags: ['cuda', 'limits'],
  },
  {
    id: 'baseline-more-registers',
    name: 'BaselineMoreRegisters',
    short: 'A kernel uses more registers per thread than in the baseline.',
    full: 'Compared with the baseline file given with `--baseline`, ptxas now allocates more registers per thread for this kernel instance on this architecture. More registers per thread can lower the blocks that fit per SM and so the occupancy.',
    fix: 'Look at what the change made live across the kernel (new values kept in registers, deeper unrolling, inlined calls). If the increase is intended, write a new baseline with `cuda-occupancy baseline write`.',
    level: 'warning',
    tags: ['cuda', 'performance', 'registers', 'baseline'],
  },
  {
    id: 'baseline-new-spill',
    name: 'BaselineNewSpill',
    short: 'A kernel spills more registers to local memory than in the baseline.',
    full: 'Compared with the baseline file given with `--baseline`, ptxas now spills (more) bytes of registers to local memory for this kernel instance on this architecture. Spills turn register accesses into memory traffic.',
    fix: 'Lower the register pressure or relax the register cap (`__launch_bounds__`, `-maxrregcount`). If the spill is accepted, write a new baseline with `cuda-occupancy baseline write`.',
    level: 'warning',
    tags: ['cuda', 'performance', 'registers', 'baseline'],
  },
  {
    id: 'baseline-lower-occupancy',
    name: 'BaselineLowerOccupancy',
    short: 'A launch reaches a lower theoretical occupancy than in the baseline.',
    full: 'Compared with the baseline file given with `--baseline`, fewer warps of this launch are resident per SM on this architecture, because the kernel uses more registers or shared memory or the launch changed its block or shared memory.',
    fix: 'Relieve the limit the message names as binding now. If the change is intended, write a new baseline with `cuda-occupancy baseline write`.',
    level: 'warning',
    tags: ['cuda', 'performance', 'occupancy', 'baseline'],
  },
  {
    id: 'baseline-launch-no-longer-fits',
    name: 'BaselineLaunchNoLongerFits',
    short: 'A launch that fitted on an SM in the baseline no longer fits at all.',
    full: 'In the baseline at least one block of this launch fitted on an SM; now not a single block does (registers x threads or shared memory per block exceed the SM), so the launch fails with "too many resources requested for launch".',
    fix: "Bring the kernel's registers or shared memory per block back under the SM's limits (the message names the limit), or launch smaller blocks.",
    level: 'error',
    tags: ['cuda', 'correctness', 'occupancy', 'baseline'],
  },
];

const BY_ID = new Map(CATALOG.map((rule) => [rule.id, rule]));

/** All rules this tool knows, in a stable order. */
export function knownRules(): readonly RuleInfo[] {
  return CATALOG;
}

/** The rule for a finding code; an unknown code gets a generic rule of the given level. */
export function ruleFor(code: string, level: RuleLevel = 'warning'): RuleInfo {
  return (
    BY_ID.get(code) ?? {
      id: code,
      name: pascalCase(code),
      short: `cuda-occupancy finding \`${code}\`.`,
      full: `A finding of cuda-occupancy with the code \`${code}\`; the result's message says what was found.`,
      fix: 'See the message of the result.',
      level,
      tags: ['cuda'],
    }
  );
}

/** Severity of a finding (`check --format json`) as a SARIF level. */
export function levelOf(severity: string): RuleLevel {
  return severity === 'error' ? 'error' : severity === 'warning' ? 'warning' : 'note';
}

function pascalCase(code: string): string {
  const words = code.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return words.map((w) => w[0].toUpperCase() + w.slice(1)).join('') || 'Finding';
}
