/**
 * Generators for the fuzz suite: random CUDA-ish token soup, the fixture
 * corpus mutated (deleted tokens, swapped lines, truncation, inserted `<<<`,
 * unbalanced braces and parentheses, random Unicode, CRLF, tabs, binary
 * bytes), and random edit sequences. Plus the run settings every property
 * shares: the seed (FUZZ_SEED, printed so a failure replays) and the number
 * of cases (FUZZ_RUNS for the long run, `npm run fuzz`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

const CORPUS_DIRS = ['test/fixtures/sources', 'test/fixtures/sources/include', 'test/fixtures/divergence', 'examples'];

export interface SourceFile {
  name: string;
  text: string;
}

let corpus: SourceFile[] | null = null;

/** Every CUDA source and header of the fixtures and examples. */
export function fixtureSources(): SourceFile[] {
  corpus ??= CORPUS_DIRS.flatMap((dir) =>
    fs
      .readdirSync(path.join(REPO_ROOT, dir))
      .filter((f) => /\.(cu|cuh|h)$/.test(f))
      .sort()
      .map((f) => ({ name: `${dir}/${f}`, text: fs.readFileSync(path.join(REPO_ROOT, dir, f), 'utf8') })),
  );
  return corpus;
}

// ---------------------------------------------------------------------------
// Run settings

let seed: number | null = null;

/** One seed per process: FUZZ_SEED, else a random one (printed by every property). */
export function fuzzSeed(): number {
  if (seed === null) {
    const fromEnv = process.env.FUZZ_SEED;
    if (fromEnv !== undefined && fromEnv.trim() !== '') {
      seed = Number(fromEnv);
      if (!Number.isInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got ${JSON.stringify(fromEnv)}`);
    } else {
      seed = (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0;
    }
  }
  return seed;
}

/**
 * Cases for one property: `base` in `npm test`; with FUZZ_RUNS set (the long
 * run), FUZZ_RUNS scaled by `weight` (server properties cost more per case).
 */
export function fuzzRuns(base: number, weight = 1): number {
  const fromEnv = process.env.FUZZ_RUNS;
  if (fromEnv === undefined || fromEnv.trim() === '') return base;
  const runs = Number(fromEnv);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`FUZZ_RUNS must be a positive integer, got ${JSON.stringify(fromEnv)}`);
  return Math.max(1, Math.round(runs * weight));
}

/**
 * Check a property with the shared seed and count its cases. The count and
 * seed are printed, and appended as a JSON line to FUZZ_REPORT when set (the
 * long run adds them up). A failure names the seed and fast-check's replay
 * path and leaves the counterexample in out/fuzz-failures/. With FUZZ_TRACE
 * set, each case is written to that file before it runs, so a case that kills
 * the process (out of memory, a hang) is left behind.
 */
export async function checkProperty<Ts extends [unknown, ...unknown[]]>(
  name: string,
  arbitraries: { [K in keyof Ts]: fc.Arbitrary<Ts[K]> },
  predicate: (...args: Ts) => void | Promise<void>,
  runs: number,
): Promise<number> {
  const s = fuzzSeed();
  const trace = process.env.FUZZ_TRACE;
  const run = async (...args: Ts) => {
    if (trace) fs.writeFileSync(trace, JSON.stringify({ name, seed: s, args }));
    await predicate(...args);
  };
  const property = fc.asyncProperty(...([...arbitraries, run] as unknown as Parameters<typeof fc.asyncProperty<Ts>>));
  const started = Date.now();
  const details = await fc.check(property, { seed: s, numRuns: runs });
  const line = `fuzz: ${name}: ${details.numRuns} cases, seed ${s}${details.failed ? ' FAILED' : ''} (${Date.now() - started} ms)`;
  console.log(`      ${line}`);
  if (process.env.FUZZ_REPORT)
    fs.appendFileSync(
      process.env.FUZZ_REPORT,
      JSON.stringify({ name, cases: details.numRuns, seed: s, failed: details.failed }) + '\n',
    );
  if (details.failed) {
    const replay = `FUZZ_SEED=${s}${process.env.FUZZ_RUNS ? ` FUZZ_RUNS=${process.env.FUZZ_RUNS}` : ''}`;
    const error =
      details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    const dump = path.join(REPO_ROOT, 'out', 'fuzz-failures', `${name.replace(/[^\w-]+/g, '-')}-${s}.json`);
    fs.mkdirSync(path.dirname(dump), { recursive: true });
    fs.writeFileSync(
      dump,
      JSON.stringify(
        { name, seed: s, path: details.counterexamplePath, counterexample: details.counterexample, error },
        null,
        2,
      ),
    );
    throw new Error(
      `${name} failed; replay with ${replay} (counterexample in ${path.relative(REPO_ROOT, dump)})\n${error}\n${fc.defaultReportMessage(details) ?? ''}`,
    );
  }
  return details.numRuns;
}

// ---------------------------------------------------------------------------
// Pieces of text

const CUDA_TOKENS = [
  '__global__',
  '__device__',
  '__host__',
  '__forceinline__',
  'void',
  'int',
  'float',
  'double',
  'unsigned',
  'auto',
  'const',
  'constexpr',
  'static',
  'template',
  'typename',
  '<',
  '>',
  'T',
  'BS',
  'k',
  'kernel',
  'scale',
  'ns',
  'namespace',
  'struct',
  'extern',
  '"C"',
  '<<<',
  '>>>',
  '<<',
  '>>',
  '(',
  ')',
  '{',
  '}',
  '[',
  ']',
  ';',
  ',',
  '=',
  '+',
  '-',
  '*',
  '/',
  '%',
  '&',
  '&&',
  '||',
  '!',
  '?',
  ':',
  '::',
  '.',
  '->',
  '...',
  'dim3',
  'grid',
  'block',
  '256',
  '128',
  '0',
  '1',
  '32',
  '1024',
  '0x100',
  '1e9',
  '4096',
  '-1',
  'sizeof',
  'sizeof(float)',
  '__launch_bounds__',
  '__launch_bounds__(256)',
  '__maxnreg__(32)',
  '__cluster_dims__(2,1,1)',
  '__shared__',
  'extern __shared__ float smem[];',
  'threadIdx.x',
  'threadIdx.y',
  'blockIdx.x',
  'blockDim.x',
  'gridDim.x',
  'warpSize',
  'laneId',
  '__syncthreads()',
  '__syncwarp()',
  'if',
  'else',
  'for',
  'while',
  'do',
  'switch',
  'case',
  'default',
  'break',
  'continue',
  'return',
  'goto',
  '#define',
  '#define BLOCK 256\n',
  '#if 0\n',
  '#if defined(X)\n',
  '#ifdef X\n',
  '#else\n',
  '#elif 1\n',
  '#endif\n',
  '#include "x.cuh"\n',
  '#pragma unroll\n',
  '\\\n',
  '"',
  "'",
  '"str"',
  "'c'",
  '/*',
  '*/',
  '//',
  '// expect: kernel=k\n',
  'R"(',
  ')"',
  'cudaLaunchKernel',
  'cudaLaunchKernelEx',
  'cudaLaunchCooperativeKernel',
  'cuLaunchKernel',
  'cudaFuncSetAttribute',
  'cudaFuncAttributeMaxDynamicSharedMemorySize',
  'k<<<1, 256>>>(x);',
  'k<<<grid, block, 0, stream>>>',
  'scale<float, 256><<<n / 256, 256>>>(p);',
  'ns::k<<<',
  '(void**)args',
  '__ldg(&p[i])',
  'p[threadIdx.x]',
  'a[i] = b[i] * 2.0f;',
  '\n',
  '\n',
  '\n',
  '\r\n',
  '\r',
  '\t',
  ' ',
  '  ',
  'é',
  'ß',
  '变量',
  'カーネル',
  'Ω',
  '𝒳',
  '😀',
  '\u200b',
  '\ufeff',
  '\ufffd',
  '\u0000',
  '\u0007',
  '\u001b[0m',
  '\ud800',
  '\udfff',
  '\u2028',
];

const snippetToken = fc.constantFrom(...CUDA_TOKENS);

const identifier = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,12}$/);

/** A short run of text to insert: CUDA tokens, identifiers, numbers, any Unicode. */
export const snippet: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      { weight: 10, arbitrary: snippetToken },
      { weight: 2, arbitrary: identifier },
      { weight: 1, arbitrary: fc.integer({ min: -5, max: 1 << 20 }).map(String) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) },
      { weight: 1, arbitrary: fc.constantFrom(' ', '\n', '\t', '') },
    ),
    { minLength: 1, maxLength: 8 },
  )
  .map((parts) => parts.join(' '));

/** Random bytes as an editor would show a binary file: invalid UTF-8 decodes to U+FFFD, NUL stays. */
export const binaryText: fc.Arbitrary<string> = fc
  .tuple(fc.uint8Array({ maxLength: 600 }), fc.constantFrom<BufferEncoding>('utf8', 'latin1'))
  .map(([bytes, encoding]) => Buffer.from(bytes).toString(encoding));

/** Token soup: CUDA keywords, launches, braces, preprocessor lines, Unicode, line ends. */
export const randomSource: fc.Arbitrary<string> = fc
  .array(
    fc.tuple(
      fc.oneof(
        { weight: 8, arbitrary: snippetToken },
        { weight: 2, arbitrary: identifier },
        { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 3 }) },
      ),
      fc.constantFrom(' ', '', '\n', ' ', '\t'),
    ),
    { maxLength: 300 },
  )
  .map((parts) => parts.map(([t, sep]) => t + sep).join(''));

// ---------------------------------------------------------------------------
// Mutations of the fixture corpus

export type Mutation =
  | { kind: 'delete-token'; at: number }
  | { kind: 'delete-range'; at: number; length: number }
  | { kind: 'swap-lines'; a: number; b: number }
  | { kind: 'duplicate-line'; at: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'line-ends'; to: '\r\n' | '\r' }
  | { kind: 'tabs' }
  | { kind: 'binary'; at: number; bytes: string };

/** Positions are fractions of the text's length in millionths, so shrinking moves them to the start. */
const fraction = fc.integer({ min: 0, max: 1_000_000 });

const UNBALANCED = [
  '<<<',
  '>>>',
  '<<<256, 128>>>',
  'k<<<',
  '{',
  '}',
  '(',
  ')',
  '[',
  ']',
  '"',
  "'",
  '/*',
  '*/',
  '#if 0\n',
  '#endif\n',
  '#else\n',
  '\\\n',
  'template <',
  '__global__ void',
];

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('delete-token' as const), at: fraction }),
  fc.record({ kind: fc.constant('delete-range' as const), at: fraction, length: fc.integer({ min: 1, max: 200 }) }),
  fc.record({ kind: fc.constant('swap-lines' as const), a: fraction, b: fraction }),
  fc.record({ kind: fc.constant('duplicate-line' as const), at: fraction }),
  fc.record({ kind: fc.constant('truncate' as const), at: fraction }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fraction,
    text: fc.oneof(fc.constantFrom(...UNBALANCED), snippet),
  }),
  fc.record({ kind: fc.constant('line-ends' as const), to: fc.constantFrom('\r\n' as const, '\r' as const) }),
  fc.record({ kind: fc.constant('tabs' as const) }),
  fc.record({ kind: fc.constant('binary' as const), at: fraction, bytes: binaryText.map((t) => t.slice(0, 40)) }),
);

const offsetOf = (text: string, at: number) => Math.floor((text.length * at) / 1_000_000);

export function applyMutation(text: string, m: Mutation): string {
  switch (m.kind) {
    case 'delete-token': {
      const re = /[A-Za-z_0-9]+|<<<|>>>|\S/g;
      re.lastIndex = offsetOf(text, m.at);
      const match = re.exec(text);
      return match ? text.slice(0, match.index) + text.slice(match.index + match[0].length) : text;
    }
    case 'delete-range': {
      const at = offsetOf(text, m.at);
      return text.slice(0, at) + text.slice(at + m.length);
    }
    case 'swap-lines': {
      const lines = text.split('\n');
      const a = Math.min(lines.length - 1, Math.floor((lines.length * m.a) / 1_000_000));
      const b = Math.min(lines.length - 1, Math.floor((lines.length * m.b) / 1_000_000));
      [lines[a], lines[b]] = [lines[b], lines[a]];
      return lines.join('\n');
    }
    case 'duplicate-line': {
      const lines = text.split('\n');
      const at = Math.min(lines.length - 1, Math.floor((lines.length * m.at) / 1_000_000));
      lines.splice(at, 0, lines[at]);
      return lines.join('\n');
    }
    case 'truncate':
      return text.slice(0, offsetOf(text, m.at));
    case 'insert':
    case 'binary': {
      const at = offsetOf(text, m.at);
      return text.slice(0, at) + (m.kind === 'insert' ? m.text : m.bytes) + text.slice(at);
    }
    case 'line-ends':
      return text.replace(/\r?\n/g, m.to);
    case 'tabs':
      return text.replace(/^( {2})+/gm, (indent) => '\t'.repeat(indent.length / 2)).replace(/ = /g, '\t=\t');
  }
}

/** A fixture with a few mutations applied. */
export const mutatedSource: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(...fixtureSources().map((f) => f.text)), fc.array(mutation, { minLength: 1, maxLength: 6 }))
  .map(([text, mutations]) => mutations.reduce(applyMutation, text));

/** Any document: mostly mutated fixtures, also token soup, binary bytes and arbitrary strings. */
export const anySource: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: mutatedSource },
  { weight: 3, arbitrary: randomSource },
  { weight: 1, arbitrary: binaryText },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 400 }) },
  { weight: 1, arbitrary: fc.constantFrom(...fixtureSources().map((f) => f.text)) },
);

// ---------------------------------------------------------------------------
// Edits

/** One edit, in fractions of the current text so it is valid whatever came before. */
export interface Edit {
  at: number;
  /** Characters removed after `at`. */
  remove: number;
  insert: string;
  /** Ask for the facts after this edit (the server analyses between keystrokes). */
  analyze: boolean;
}

export const edit: fc.Arbitrary<Edit> = fc.record({
  at: fraction,
  remove: fc.oneof(
    { weight: 3, arbitrary: fc.constant(0) },
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 12 }) },
    { weight: 1, arbitrary: fc.integer({ min: 13, max: 400 }) },
  ),
  insert: fc.oneof(
    { weight: 2, arbitrary: fc.constant('') },
    { weight: 6, arbitrary: snippet },
    { weight: 2, arbitrary: fc.constantFrom(...UNBALANCED) },
    { weight: 1, arbitrary: binaryText.map((t) => t.slice(0, 20)) },
  ),
  analyze: fc.boolean(),
});

export const editSequence: fc.Arbitrary<Edit[]> = fc.array(edit, { minLength: 1, maxLength: 12 });

/** The offsets an edit touches in `text`: [start, end) replaced by `insert`. */
export function editRange(text: string, e: Edit): { start: number; end: number } {
  const start = offsetOf(text, e.at);
  return { start, end: Math.min(text.length, start + e.remove) };
}

export function applyEdit(text: string, e: Edit): string {
  const { start, end } = editRange(text, e);
  return text.slice(0, start) + e.insert + text.slice(end);
}

/**
 * The parser's point for an offset: rows end at `\n`, `\r\n` and a lone `\r`
 * (cuda-parser.ts reads a lone `\r` as `\n`, as LSP does), columns in UTF-16
 * code units (web-tree-sitter).
 */
export function treePoint(text: string, offset: number): { row: number; column: number } {
  let row = 0;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) {
      row++;
      lineStart = i + 1;
    }
  }
  return { row, column: offset - lineStart };
}

// ---------------------------------------------------------------------------
// Hostile documents for the robustness tests (deterministic)

export interface HostileDocument {
  name: string;
  text: string;
}

/** Bytes from a fixed-seed generator, so the "binary" cases are the same on every run. */
export function pseudoRandomBytes(length: number, seed = 0x9e3779b9): Buffer {
  const out = Buffer.alloc(length);
  let x = seed >>> 0;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

const fixture = (name: string) => fixtureSources().find((f) => f.name.endsWith(`/${name}`))!.text;

/** A 10 MB translation unit: a few kernels and a generated lookup table, as real giant .cu files are. */
export function tenMegabyteSource(): string {
  const parts = [fixture('gemm-tiled.cu'), '\n__constant__ float table[] = {\n'];
  let size = parts[0].length;
  for (let i = 0; size < 10 * 1024 * 1024; i++) {
    const line = `  ${(i * 0.001).toFixed(6)}f, ${(i * 0.002).toFixed(6)}f, ${(i * 0.003).toFixed(6)}f, ${(i * 0.004).toFixed(6)}f,\n`;
    parts.push(line);
    size += line.length;
  }
  parts.push('};\n', fixture('saxpy.cu'));
  return parts.join('');
}

/** The fixture as it is typed: every prefix that ends a few characters into a line. */
export function halfTyped(name = 'reduction.cu'): HostileDocument[] {
  const text = fixture(name);
  const out: HostileDocument[] = [];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1))
    out.push({ name: `${name} typed to offset ${i + 7}`, text: text.slice(0, i + 7) });
  return out;
}

/** `\n`, `\r\n` and `\r` in turn on the same lines. */
export function mixedLineEnds(text: string): string {
  const lines = text.split('\n');
  return lines
    .map((line, k) => {
      if (k === lines.length - 1) return line;
      const end = ['\n', '\r\n', '\r'][k % 3];
      // A `\r` before an empty line ending in `\n` would read as one `\r\n`.
      return line + (end === '\r' && lines[k + 1] === '' ? '\n' : end);
    })
    .join('');
}

const DEPTH = 10_000;

/**
 * Unicode identifiers (valid C++ for nvcc) next to ASCII ones, and non-BMP
 * characters before a launch on its line (columns count UTF-16 code units).
 */
export const UNICODE_IDENTIFIERS = [
  '#define 块 128',
  '#define BLOCK 64',
  '__global__ void ядро(float* données, int 𝑛) { données[threadIdx.x] = 𝑛; }',
  '/* 𝒳😀 */ __global__ void __launch_bounds__(32) ascii_k(float* données) { données[threadIdx.x] = 1; }',
  'void 主机(float* p) {',
  '  ядро<<<1, 块>>>(p, 3);',
  '  /* 😀𝒳 */ ascii_k<<<1, BLOCK>>>(p);',
  '}',
  '',
].join('\n');

/** The cases of issue 9's list, each small enough to analyse in a test except the 10 MB one (see tenMegabyteSource). */
export function hostileDocuments(): HostileDocument[] {
  const saxpy = fixture('saxpy.cu');
  const lines = fixture('stencil.cu').split('\n');
  return [
    {
      name: 'unbalanced <<<',
      text: `__global__ void k(float* p) {}\nvoid f(float* p) {\n  k<<<1, 256(p);\n  k<<<<<<2, 64>>>(p);\n  k>>>(p);\n  k<<<\n`,
    },
    { name: 'only <<< tokens', text: 'void f() {' + 'k<<<'.repeat(2000) + '}' },
    { name: 'only >>> tokens', text: '>>>'.repeat(5000) },
    {
      name: 'macros everywhere',
      text: [
        '#define KERNEL(name) __global__ void name(float* p)',
        '#define LAUNCH(k, b) k<<<(n + (b) - 1) / (b), (b)>>>(p)',
        '#define BLOCK BLOCK',
        '#define A B',
        '#define B A',
        '#define N (N + 1)',
        'const int C = D * 2;',
        'const int D = C + 1;',
        'constexpr int E = E;',
        '#define EMPTY',
        '#define STR(x) #x',
        '#define CAT(a, b) a##b',
        'KERNEL(k1) { p[threadIdx.x] = 0; }',
        '__global__ void __launch_bounds__(BLOCK) k2(float* p) {}',
        '__global__ void __launch_bounds__(A, B) k3(float* p) {}',
        '#define MULTI(k) \\',
        '  k<<<1, \\',
        '     N>>>(p)',
        'void host(float* p, int n) {',
        '  LAUNCH(k1, 256);',
        '  k2<<<C, D>>>(p);',
        '  k3<<<A, B, E>>>(p);',
        '  MULTI(k2);',
        '  CAT(k, 2)<<<1, BLOCK>>>(p);',
        '}',
        ...lines.map((l, k) => `#define LINE_${k} ${l.replace(/\\$/, '')}`),
      ].join('\n'),
    },
    {
      name: 'a 50,000-character line of arithmetic',
      text: `__global__ void k(float* p) { p[0] = ${'1 + '.repeat(12_500)}1; }\nvoid f(float* p) { k<<<1, ${'2 * '.repeat(100)}1>>>(p); }\n`,
    },
    { name: 'a 50,000-character comment line', text: `// ${'x'.repeat(50_000)}\n${saxpy}` },
    {
      name: 'a 50,000-character launch line',
      text: `__global__ void k(float* p) {}\nvoid f(float* p) { ${'k<<<1, 32>>>(p); '.repeat(2900)} }\n`,
    },
    {
      name: '10,000 nested parentheses',
      text: `__global__ void k(float* p) { p[0] = ${'('.repeat(DEPTH)}1${')'.repeat(DEPTH)}; }\nvoid f(float* p) { k<<<${'('.repeat(DEPTH)}1${')'.repeat(DEPTH)}, 256>>>(p); }\n`,
    },
    {
      name: '10,000 nested braces',
      text: `__global__ void k(float* p) { ${'{'.repeat(DEPTH)} p[threadIdx.x] = 0; ${'}'.repeat(DEPTH)} }\n`,
    },
    {
      name: '10,000 nested ifs on threadIdx',
      text: `__global__ void k(float* p) { ${'if (threadIdx.x > 3) { '.repeat(DEPTH)} p[0] = p[1]; ${'}'.repeat(DEPTH)} }\nvoid f(float* p) { k<<<1, 256>>>(p); }\n`,
    },
    {
      name: '10,000 nested brackets and templates',
      text: `__global__ void k(float* p) { p${'[p'.repeat(DEPTH)}${']'.repeat(DEPTH)} = 0; }\ntemplate <int N> __global__ void t(float* p) {}\nvoid f(float* p) { t${'<A'.repeat(2000)}${'>'.repeat(2000)}<<<1, 32>>>(p); }\n`,
    },
    {
      name: '10,000 unclosed parentheses and braces',
      text: `__global__ void k(float* p) { ${'('.repeat(DEPTH)}${'{'.repeat(DEPTH)}`,
    },
    { name: 'binary bytes read as UTF-8', text: pseudoRandomBytes(64 * 1024).toString('utf8') },
    { name: 'binary bytes read as Latin-1', text: pseudoRandomBytes(64 * 1024, 7).toString('latin1') },
    { name: 'NUL bytes inside a kernel', text: saxpy.replace(/\n/g, '\0\n').replace(/saxpy/g, 'sax\0py') },
    {
      name: 'invalid UTF-8 in identifiers and strings',
      text: Buffer.concat([
        Buffer.from('__global__ void k'),
        Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x28, 0x8c, 0xbc]),
        Buffer.from('(float* p) {}\nvoid f(float* p) { k\xff<<<1, 256>>>(p); printf("\xfe\xfd"); }\n', 'latin1'),
      ]).toString('utf8'),
    },
    {
      name: 'lone surrogates',
      text: `__global__ void k\ud800(float* p) { p[0] = 1; }\nvoid f(float* p) { k\ud800<<<1, 256>>>(p); /* \udfff */ }\n`,
    },
    { name: 'CRLF line ends', text: saxpy.replace(/\n/g, '\r\n') },
    { name: 'CR line ends', text: saxpy.replace(/\n/g, '\r') },
    { name: 'mixed line ends', text: mixedLineEnds(saxpy) },
    { name: 'tabs', text: saxpy.replace(/^( {2})+/gm, (s) => '\t'.repeat(s.length / 2)).replace(/ /g, '\t') },
    { name: 'Unicode identifiers', text: UNICODE_IDENTIFIERS },
    {
      name: 'emoji and zero-width characters',
      text: `// 😀😀😀\n__global__ void k\u200b(float* p) {}\nvoid f(float* p) { /* ✨ */ k<<<1, 256>>>(p); }\n\ufeff\u2028\u2029`,
    },
    { name: 'empty', text: '' },
    { name: 'only whitespace', text: ' \t\r\n'.repeat(1000) },
  ];
}
