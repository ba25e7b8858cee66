/**
 * Resource figures per kernel instance: ptxas's mangled entries mapped onto the kernels found in the
 * source (one instance per template instantiation), the instance a launch uses, and figures written by
 * hand in a comment above a kernel (`// occupancy: regs=64 smem=8192`). Pure.
 */
import { demangle, type DemangledName } from './demangle';
import type { PtxasFunctionFigures } from './ptxas-output';
import { normalizeType } from './template-args';
import { matchInstances, type TypeAliases } from './launch-instances';

export { normalizeTemplateArg, splitTemplateArgsText } from './template-args';

/** Where a figure comes from, most trusted first. */
export type ResourceSource = 'ptxas' | 'log' | 'annotation' | 'unknown';

/** The figures occupancy needs for one kernel instance on one architecture. */
export interface ResourceFigures {
  numRegs: number | null;
  /** Static shared memory per block, bytes. */
  sharedSizeBytes: number | null;
  spillStoreBytes: number | null;
  spillLoadBytes: number | null;
  stackFrameBytes: number | null;
  barriers: number | null;
  source: ResourceSource;
  /** When the figures were produced (ms since epoch). */
  producedAt?: number | null;
  /** The figures are the last known: the source changed since, or the last compile failed. */
  stale?: boolean;
  /** Why the figures are stale or unknown (the compiler's first error, nvcc missing...). */
  note?: string | null;
  /** For figures read from a build's files (`--from-build`): the file they came from. */
  origin?: FigureOrigin | null;
  /** The build's files disagree on this kernel's figures (what they say, and where): the figures are unknown. */
  conflict?: string | null;
}

/** A file of a build that figures were read from. */
export interface BuildOrigin {
  /** `object`: cuobjdump of an object, library, shared object, cubin or fatbin; `log`: a build log's ptxas lines. */
  kind: 'object' | 'log';
  path: string;
  /** When the file was written (its mtime, ms since epoch), or null. */
  modifiedAt: number | null;
  /** How an object was read: the toolkit's cuobjdump, or its device code's ELF read here (no cuobjdump). */
  via?: 'cuobjdump' | 'elf';
}

/** Where a figure shown came from: the newest of the files that agree on it, and how many files agree. */
export interface FigureOrigin extends BuildOrigin {
  files: number;
}

/** Figures keyed by architecture (`sm_90`); ANY_ARCH holds figures that apply to every architecture. */
export type ResourcesByArch = Record<string, ResourceFigures>;

/** The key of annotation figures written without an architecture. */
export const ANY_ARCH = '*';

export interface KernelInstance {
  /** The symbol ptxas printed, or null when no compiled instance is known. */
  mangledName: string | null;
  /** The demangled signature (`void ns::reduce<float, 256>(float const*, float*, int)`), or null. */
  signature: string | null;
  /** The instantiation's template arguments as the demangler spells them (`['float', '256']`). */
  templateArgs: string[];
  resources: ResourcesByArch;
}

/** What this module needs of a kernel found in the source; the core's `Kernel` fits. */
export interface SourceKernel {
  name: string;
  /** Namespaces and name: `ns::reduce`. */
  qualifiedName: string;
  templateParams?: ReadonlyArray<{ name: string } | string> | null;
  /** Parameter declarations as written, used to tell overloads apart. */
  parameters?: readonly string[];
  externC?: boolean;
}

export interface KernelResources<K extends SourceKernel = SourceKernel> {
  kernel: K;
  instances: KernelInstance[];
}

export interface MapKernelResourcesInput<K extends SourceKernel> {
  kernels: readonly K[];
  /** Entry figures, any architectures (`parsePtxasOutput(...).entries`). */
  entries: readonly PtxasFunctionFigures[];
  /** How the entries were obtained. */
  source: Extract<ResourceSource, 'ptxas' | 'log'>;
  producedAt?: number | null;
}

export interface MapKernelResourcesResult<K extends SourceKernel> {
  /** One per source kernel, in the same order; `instances` is empty when ptxas reported none for it. */
  kernels: Array<KernelResources<K>>;
  /** Entries that match no source kernel (kernels of other files in a log, or names we cannot demangle). */
  unmatched: PtxasFunctionFigures[];
}

/** Groups ptxas entries into instances of the source kernels they compile. */
export function mapKernelResources<K extends SourceKernel>(
  input: MapKernelResourcesInput<K>,
): MapKernelResourcesResult<K> {
  const results: Array<KernelResources<K>> = input.kernels.map((kernel) => ({ kernel, instances: [] }));
  const unmatched: PtxasFunctionFigures[] = [];
  const demangled = new Map<string, DemangledName | null>();

  for (const entry of input.entries) {
    if (!entry.isEntry || entry.arch === null) continue;
    let name = demangled.get(entry.mangledName);
    if (name === undefined) {
      name = demangle(entry.mangledName);
      demangled.set(entry.mangledName, name);
    }
    const target = name ? pickSourceKernel(name, input.kernels) : -1;
    if (target < 0 || !name) {
      unmatched.push(entry);
      continue;
    }
    const instances = results[target].instances;
    let instance = instances.find((i) => i.mangledName === entry.mangledName);
    if (!instance) {
      instance = {
        mangledName: entry.mangledName,
        signature: name.signature,
        templateArgs: [...name.templateArgs],
        resources: {},
      };
      instances.push(instance);
    }
    instance.resources[entry.arch] = figuresFromEntry(entry, input.source, input.producedAt ?? null);
  }
  return { kernels: results, unmatched };
}

/** The figures of one ptxas entry, in the project's shape. */
export function figuresFromEntry(
  entry: PtxasFunctionFigures,
  source: ResourceSource,
  producedAt: number | null = null,
): ResourceFigures {
  return {
    numRegs: entry.numRegs,
    sharedSizeBytes: entry.sharedSizeBytes,
    spillStoreBytes: entry.spillStoreBytes,
    spillLoadBytes: entry.spillLoadBytes,
    stackFrameBytes: entry.stackFrameBytes,
    barriers: entry.barriers,
    source,
    producedAt,
  };
}

/** Figures that claim nothing. */
export function unknownResources(note: string | null = null): ResourceFigures {
  return {
    numRegs: null,
    sharedSizeBytes: null,
    spillStoreBytes: null,
    spillLoadBytes: null,
    stackFrameBytes: null,
    barriers: null,
    source: 'unknown',
    note,
  };
}

/** The figures of an instance for an architecture: the exact arch, else its base (`sm_90a` -> `sm_90`), else ANY_ARCH. */
export function resourcesForArch(resources: ResourcesByArch, arch: string): ResourceFigures | null {
  return resources[arch] ?? resources[arch.replace(/^(sm_\d+)[a-z]$/, '$1')] ?? resources[ANY_ARCH] ?? null;
}

const SOURCE_RANK: Record<ResourceSource, number> = { ptxas: 0, log: 1, annotation: 2, unknown: 3 };

/** The more trusted of two sets of figures (ptxas > log > annotation > unknown); fresh beats stale at equal rank. */
export function preferResources(a: ResourceFigures | null, b: ResourceFigures | null): ResourceFigures | null {
  if (!a) return b;
  if (!b) return a;
  if (SOURCE_RANK[a.source] !== SOURCE_RANK[b.source]) return SOURCE_RANK[a.source] < SOURCE_RANK[b.source] ? a : b;
  if (Boolean(a.stale) !== Boolean(b.stale)) return a.stale ? b : a;
  return (b.producedAt ?? 0) > (a.producedAt ?? 0) ? b : a;
}

// ---------------------------------------------------------------------------
// Which source kernel a demangled entry belongs to.

/** Drops anonymous namespaces, however the source side spells them (`(anonymous namespace)`, `(anonymousnamespace)`). */
function stripAnonymous(name: string): string {
  return name
    .split('::')
    .filter((part) => part.replace(/\s+/g, '') !== '(anonymousnamespace)' && part !== '')
    .join('::');
}

/** Index of the source kernel an entry compiles, or -1. */
function pickSourceKernel(name: DemangledName, kernels: readonly SourceKernel[]): number {
  const wanted = stripAnonymous(name.scopedName);
  let candidates: number[] = [];
  kernels.forEach((kernel, index) => {
    if (name.externC ? kernel.name === name.name : stripAnonymous(kernel.qualifiedName) === wanted)
      candidates.push(index);
  });
  if (candidates.length === 0 && !name.externC) {
    // The source finder may not see every namespace (macros, `namespace a::b`): accept a unique suffix match.
    kernels.forEach((kernel, index) => {
      const q = stripAnonymous(kernel.qualifiedName);
      if (wanted.endsWith(`::${q}`) || q.endsWith(`::${wanted}`)) candidates.push(index);
    });
  }
  if (candidates.length > 1 && name.parameters) {
    const isTemplate = name.templateArgs.length > 0;
    const narrowed = candidates.filter((i) => Boolean(kernels[i].templateParams?.length) === isTemplate);
    if (narrowed.length) candidates = narrowed;
    candidates = bestByParameters(candidates, kernels, name.parameters);
  }
  return candidates.length >= 1 ? candidates[0] : -1;
}

/** Among overloads, those whose written parameters best match the demangled ones. */
function bestByParameters(
  candidates: number[],
  kernels: readonly SourceKernel[],
  parameters: readonly string[],
): number[] {
  const scored = candidates.map((index) => ({ index, score: parameterScore(kernels[index].parameters, parameters) }));
  const best = Math.max(...scored.map((s) => s.score));
  return scored.filter((s) => s.score === best).map((s) => s.index);
}

function parameterScore(written: readonly string[] | undefined, demangled: readonly string[]): number {
  if (!written) return 0;
  if (written.length !== demangled.length) return -1000;
  let score = 1;
  for (let i = 0; i < written.length; i++)
    if (normalizeType(parameterType(written[i])) === normalizeType(demangled[i])) score += 10;
  return score;
}

/** `const float* __restrict__ in` -> `const float*`: drops the declarator name and restrict qualifiers. */
function parameterType(declaration: string): string {
  const text = declaration
    .replace(/=.*$/s, '')
    .replace(/\b(__restrict__|__restrict|restrict)\b/g, '')
    .trim();
  const m = /^(.*?[\s*&>])([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)*)$/.exec(text);
  if (!m || /^(const|volatile|unsigned|signed|int|long|short|char|float|double|bool|void)$/.test(m[2])) return text;
  return m[3] ? `${m[1]}(${m[3]})` : m[1];
}

// ---------------------------------------------------------------------------
// The instance a launch uses.

/**
 * The instance a launch of `k<float, 256>` uses. `templateArgs` is the launch's argument list (already
 * split, as the launch finder gives it), the text between `<` and `>`, or the whole `k<...>` text.
 * Without arguments, the only instance; with arguments, the instance whose arguments match them
 * (missing trailing arguments are taken as defaults). Null when no instance or several match (see
 * matchInstances for all the instances a launch can run).
 */
export function pickInstance(
  instances: readonly KernelInstance[],
  templateArgs: readonly string[] | string | null | undefined,
  aliases?: TypeAliases,
): KernelInstance | null {
  const match = matchInstances(instances, templateArgs, aliases);
  return match.instances.length === 1 ? match.instances[0] : null;
}

// ---------------------------------------------------------------------------
// Annotations: `// occupancy: regs=64 smem=8192` above a kernel.

export interface ResourceAnnotation {
  /** Figures by architecture; ANY_ARCH when the annotation names none. */
  resources: ResourcesByArch;
  /** Keys this parser did not understand, to report as a hint. */
  unknownKeys: string[];
}

const ANNOTATION = /occupancy\s*(?:\(\s*(sm_\d+[a-z]?)\s*\))?\s*:\s*([^\n]*)/gi;

/**
 * Reads `occupancy:` annotations from a comment (the kernel's leading comment, markers and all).
 * Forms: `// occupancy: regs=64 smem=8192`, `/* occupancy: regs=64, smem=8 KB, spills=0 *\/`,
 * `// occupancy(sm_90): registers=40 shared=48KiB barriers=1 stack=0 arch=sm_80,sm_86`.
 * Returns null when the comment holds no annotation with a valid figure.
 */
export function parseResourceAnnotation(comment: string | null | undefined): ResourceAnnotation | null {
  if (!comment || comment.length > 100_000) return null;
  const resources: ResourcesByArch = {};
  const unknownKeys: string[] = [];
  let found = false;
  for (const match of comment.matchAll(ANNOTATION)) {
    const body = match[2].replace(/\*\/.*$/, '');
    const figures = unknownResources();
    figures.source = 'annotation';
    let archs: string[] = match[1] ? [match[1]] : [];
    let any = false;
    for (const pair of body.matchAll(/([A-Za-z][\w-]*)\s*[=:]\s*([^\s,;=]+(?:\s*(?:KiB|KB|kB|K|k|B|bytes)\b)?)/g)) {
      const keyName = pair[1].toLowerCase();
      const value = pair[2].trim();
      if (keyName === 'arch' || keyName === 'archs') {
        const listed = value.split(/[|+]/).filter((a) => /^sm_\d+[a-z]?$/.test(a));
        if (listed.length) archs = listed;
        continue;
      }
      const field = ANNOTATION_KEYS[keyName];
      const n = parseByteCount(value, field === 'numRegs' || field === 'barriers');
      if (!field || n === null) {
        unknownKeys.push(pair[0]);
        continue;
      }
      if (field === 'spills') {
        figures.spillStoreBytes = n;
        figures.spillLoadBytes = n;
      } else {
        figures[field] = n;
      }
      any = true;
    }
    // `arch=sm_80,sm_86` lists archs with commas; pick them up from the raw body.
    const archList = /\barchs?\s*=\s*((?:sm_\d+[a-z]?\s*,\s*)*sm_\d+[a-z]?)/i.exec(body);
    if (archList) archs = archList[1].split(',').map((a) => a.trim());
    if (!any) continue;
    found = true;
    for (const arch of archs.length ? archs : [ANY_ARCH]) resources[arch] = { ...figures };
  }
  return found ? { resources, unknownKeys } : null;
}

type AnnotationField =
  'numRegs' | 'sharedSizeBytes' | 'spillStoreBytes' | 'spillLoadBytes' | 'stackFrameBytes' | 'barriers' | 'spills';

const ANNOTATION_KEYS: Record<string, AnnotationField> = {
  regs: 'numRegs',
  registers: 'numRegs',
  reg: 'numRegs',
  numregs: 'numRegs',
  smem: 'sharedSizeBytes',
  shared: 'sharedSizeBytes',
  sharedsizebytes: 'sharedSizeBytes',
  shmem: 'sharedSizeBytes',
  spills: 'spills',
  spill: 'spills',
  'spill-stores': 'spillStoreBytes',
  spillstores: 'spillStoreBytes',
  spillstorebytes: 'spillStoreBytes',
  'spill-loads': 'spillLoadBytes',
  spillloads: 'spillLoadBytes',
  spillloadbytes: 'spillLoadBytes',
  stack: 'stackFrameBytes',
  stackframe: 'stackFrameBytes',
  stackframebytes: 'stackFrameBytes',
  barriers: 'barriers',
  bar: 'barriers',
};

/** `8192`, `8 KB`, `8KiB`, `48k`, `512B` -> bytes; counts (registers, barriers) take no unit. */
function parseByteCount(text: string, isCount: boolean): number | null {
  const m = /^(\d{1,9})(?:\.(\d+))?\s*(KiB|KB|kB|K|k|B|bytes)?$/.exec(text.trim());
  if (!m) return null;
  if (isCount && (m[2] || m[3])) return null;
  const unit = m[3] && /^k/i.test(m[3]) ? 1024 : 1;
  const value = Number(`${m[1]}${m[2] ? `.${m[2]}` : ''}`) * unit;
  if (!Number.isFinite(value) || value < 0 || !Number.isInteger(value)) return null;
  if (isCount && value > 65536) return null;
  return value;
}

/**
 * Instances for a kernel without compiled figures: one instance with the annotation's figures, or
 * unknown ones (the contract's `mangledName: null` instance).
 */
export function uncompiledInstances(annotation: ResourceAnnotation | null): KernelInstance[] {
  return [
    {
      mangledName: null,
      signature: null,
      templateArgs: [],
      resources: annotation ? { ...annotation.resources } : { [ANY_ARCH]: unknownResources() },
    },
  ];
}
