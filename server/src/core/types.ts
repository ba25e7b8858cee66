/**
 * Plain data that the core returns. Positions are 0-based, characters in
 * UTF-16 code units (LSP's default); the CLI adds 1 for its 1-based output.
 */

export interface Position {
  line: number;
  character: number;
}

export interface Span {
  start: Position;
  end: Position;
}

export interface Dim3 {
  x: number;
  y: number;
  z: number;
}

/** `__launch_bounds__(maxThreads[, minBlocks[, maxBlocksPerCluster]])`, as written and as resolved. */
export interface LaunchBounds {
  text: string;
  args: string[];
  maxThreadsPerBlock: number | null;
  minBlocksPerMultiprocessor: number | null;
  maxBlocksPerCluster: number | null;
  span: Span;
}

export interface SharedDeclaration {
  name: string;
  /** Bytes, or null when the size cannot be computed from the source. */
  bytes: number | null;
  isExtern: boolean;
  text: string;
  span: Span;
}

export interface Kernel {
  name: string;
  /** Namespaces and name, as `ns::inner::name`. */
  qualifiedName: string;
  namespaces: string[];
  /** Template parameter names in order (`T`, `BS`), or null for a plain function. */
  templateParams: TemplateParam[] | null;
  parameters: string[];
  launchBounds: LaunchBounds | null;
  maxnreg: number | null;
  clusterDims: Dim3 | null;
  externC: boolean;
  isDefinition: boolean;
  /** The whole declaration or definition, attributes and body included. */
  span: Span;
  nameSpan: Span;
  /** The header from the first specifier to the closing parenthesis of the parameters. */
  headerSpan: Span;
  bodySpan: Span | null;
  sharedDeclarations: SharedDeclaration[];
  /** Sum of the static `__shared__` declarations when all are known, else null. */
  staticSharedBytes: number | null;
  /** Text of the comment block right above the kernel (annotations live there). */
  leadingComment: string | null;
  /**
   * Each name in the kernel's header (before its name) the unit may define as a macro there, with
   * what it expands to, or null when the unit cannot tell which definition holds (a branch it cannot
   * decide, a flag) or knows none. A name absent is no macro there. Absent for kernels not read by
   * the unit's preprocessor.
   */
  headerMacros?: Record<string, string | null>;
}

export interface TemplateParam {
  name: string;
  kind: 'type' | 'value';
  defaultText: string | null;
}

export type LaunchVia =
  | 'chevrons'
  | 'cudaLaunchKernel'
  | 'cudaLaunchKernelEx'
  | 'cudaLaunchCooperativeKernel'
  | 'cudaLaunchCooperativeKernelMultiDevice'
  | 'cuLaunchKernel';

/** A value taken from the source: its text and, when it is statically known, its number. */
export interface ResolvedValue<T> {
  text: string;
  value: T | null;
  /** Why the value is null, or how it was found (`#define BLOCK 256 (config.h:3)`). */
  note: string | null;
  /** For a dim3 that does not resolve: what is known of it (`32 × ? × 1`), when some of it is. */
  known?: string | null;
}

export interface Launch {
  via: LaunchVia;
  /** The launched name as written, without template arguments: `ns::k`. */
  kernelName: string;
  /** Last component of kernelName. */
  baseName: string;
  templateArgs: string[] | null;
  span: Span;
  nameSpan: Span;
  grid: ResolvedValue<Dim3>;
  block: ResolvedValue<Dim3>;
  dynamicSmem: ResolvedValue<number>;
  stream: string | null;
  /** The launch sits in a `#define` body: found, but its values are not resolved. */
  inMacro: boolean;
  /** Name of the function the launch is written in, if any. */
  enclosingFunction: string | null;
  /** The template arguments' values where they are integer constants at the launch (null entries for types and unknowns). */
  templateArgValues?: Array<number | null> | null;
  /** The kernel arguments' values where they are integer constants at the launch (null entries for the others). */
  argValues?: Array<number | null>;
  /**
   * Its kernel, block or dynamic shared memory derive from the parameters of the function it is
   * written in (a launcher): each call of that function tells more.
   */
  fromParameters?: true;
  /**
   * Written in a function template defined in a `.cu`, with a block that reads its parameters: the
   * block (or its candidates) is that of the instances the unit calls, this many calls.
   */
  blockFromInstances?: number;
  /** The callee as written when it is a function pointer resolved to `kernelName` (`fp` in `auto fp = k; fp<<<...>>>`). */
  calledThrough?: string | null;
  /**
   * The launch is written in a macro's body or a wrapper function's and read here, at a use of the
   * macro or a call of the wrapper, with its arguments: `{ kind: 'macro', name: 'LAUNCH_TILE' }`.
   */
  through?: {
    kind: 'macro' | 'wrapper';
    name: string;
    /** The file that defines the wrapper, where it is another translation unit's (the unit only declares it). */
    definedIn?: string;
  } | null;
  /**
   * When the block is not one known value but one of a few the source fixes (a ternary on a
   * run-time condition, an if-chain or a `switch` setting a local): each of them, fewest threads first.
   */
  candidates?: Dim3[] | null;
}

export type Severity = 'error' | 'warning' | 'info' | 'hint';

export interface RelatedLocation {
  uri: string | null;
  span: Span;
  message: string;
}

export interface Finding {
  code: string;
  severity: Severity;
  message: string;
  span: Span;
  related: RelatedLocation[];
}

/** A constant smem opt-in: `cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)`. */
export interface SmemOptIn {
  /** The kernel named in the call, as written without template arguments. */
  kernelName: string;
  baseName: string;
  bytes: ResolvedValue<number>;
  span: Span;
}

/** One global load the memory-parallelism estimate looked at. */
export interface GlobalLoad {
  text: string;
  span: Span;
  /** Counted in `p` (issued before the first use of a loaded value). */
  counted: boolean;
  /** Times it is issued before the first use (the trip count of an unrolled loop, else 1). */
  multiplicity: number;
}

/**
 * Memory-level parallelism of a kernel: `p`, the independent global loads one
 * thread issues before it first uses a loaded value, with the reasoning.
 */
export interface MemoryParallelism {
  kernel: string;
  /** 0 when the kernel reads no global memory that the estimate can see. */
  p: number;
  loads: GlobalLoad[];
  /** Where counting stopped and why, or null when it ran to the end of the body. */
  stop: { span: Span; reason: string } | null;
  /** One sentence per step, for a hover. */
  reasoning: string[];
  source: 'source';
  /**
   * The work between loads, estimated from the syntax (path-costs.ts): instructions per iteration of
   * the loop the counted loads are in, or of the whole body when they are in none; `atLeast` when a
   * loop in it has no constant trip count (counted once). Null when no load was counted.
   */
  work?: {
    instructions: number;
    atLeast: boolean;
    source: 'source';
    loop: { line: number | null } | null;
  } | null;
}
