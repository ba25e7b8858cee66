/**
 * Launches through a function another translation unit defines: a unit that declares a launcher
 * (from a header) and calls it is joined to the definition as the linker joins it, the file that
 * defines a function of that name and signature with external linkage and includes the declaring
 * header, and the launches the launcher makes are read at the call with the call's values. A
 * same-named function of a file the declaration does not lead to, a `static` one, or one of several
 * equally likely definitions is never taken.
 */
import * as assert from 'node:assert/strict';
import { createAnalyzer, DEFAULT_REPORT_SETTINGS, type Analyzer } from '../../server/src/core/analyzer';
import type { Launch } from '../../server/src/core/types';
import { hoverText } from '../../server/src/core/report/hover-text';
import { loadGrammarBytes } from '../support/grammar';
import * as path from 'node:path';
import { checkJsonOf, REPO_ROOT, sourceTree } from '../support/cli-run';

const at = (file: string) => `/ws/${file}`;

async function workspace(files: Record<string, string[]>): Promise<Analyzer> {
  const analyzer = await createAnalyzer({ grammar: loadGrammarBytes() });
  analyzer.configure({ archs: ['sm_80'], divergence: false, report: DEFAULT_REPORT_SETTINGS });
  for (const [file, lines] of Object.entries(files)) analyzer.index.update(at(file), lines.join('\n') + '\n');
  return analyzer;
}

/** `line: kernel block [via wrapper, defined in file]`, lines 1-based. */
function describe1(l: Launch): string {
  const block = l.block.value
    ? `${l.block.value.x}x${l.block.value.y}x${l.block.value.z}`
    : l.candidates
      ? l.candidates.map((b) => b.x).join('|')
      : 'null';
  const via = l.through
    ? ` via ${l.through.name}${l.through.definedIn ? ` in ${l.through.definedIn.replace('/ws/', '')}` : ''}`
    : '';
  return `${l.span.start.line + 1}: ${l.kernelName} ${block}${via}`;
}

function launchesOf(analyzer: Analyzer, file: string): string[] {
  const text = analyzer.index.text(at(file))!;
  return analyzer.analyzeFile({ uri: at(file), text }).launches.map(describe1);
}

const LAUNCHER = {
  'k.cuh': ['#pragma once', 'void launch_scale(float *p, int n, int threads = 128);'],
  'k.cu': [
    '#include "k.cuh"',
    '__global__ void scale(float *p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= 2; }',
    'void launch_scale(float *p, int n, int threads) {',
    '  scale<<<(n + threads - 1) / threads, threads>>>(p, n);',
    '}',
  ],
  // The same name and signature in a file that never includes k.cuh: not what other.cu calls.
  'old/k_old.cu': [
    '__global__ void old_scale(float *p, int n) { p[threadIdx.x] = n; }',
    'void launch_scale(float *p, int n, int threads) { old_scale<<<n, threads * 2>>>(p, n); }',
  ],
  'other.cu': [
    '#include "k.cuh"',
    'int main() {',
    '  float *p = 0;',
    '  launch_scale(p, 1000, 256);',
    '  launch_scale(p, 1000);',
    '  return 0;',
    '}',
  ],
};

describe('launches through a function another unit defines', () => {
  it("reads the launcher's launch at the call, with the call's values and the declaration's defaults", async () => {
    const analyzer = await workspace(LAUNCHER);
    assert.deepEqual(launchesOf(analyzer, 'other.cu'), [
      '4: scale 256x1x1 via launch_scale in k.cu',
      '5: scale 128x1x1 via launch_scale in k.cu',
    ]);
    // The launcher's own launch is unchanged: its block is its parameter.
    assert.deepEqual(launchesOf(analyzer, 'k.cu'), ['4: scale null']);
    const facts = analyzer.analyzeFile({ uri: at('other.cu'), text: analyzer.index.text(at('other.cu'))! });
    assert.equal(facts.launches[0].grid.value?.x, 4);
    assert.equal(facts.launchTargets[0].kernel?.name, 'scale');
    assert.equal(facts.launchTargets[0].kernelPath, at('k.cu'));
    assert.equal(facts.launchTargets[0].note, 'k.cu, which defines `launch_scale`');
    const hover = hoverText(analyzer.reportOf(facts), { line: 3, character: 4 });
    assert.match(
      hover?.markdown ?? '',
      /^\*\*scale\*\*: 256 threads[^\n]*\n\nLaunched by `launch_scale`, defined in k\.cu \(another translation unit\), with this call's values\./,
    );
  });

  it('reads the launch in an open document, and again when the defining file changes', async () => {
    const analyzer = await workspace(LAUNCHER);
    const uri = at('other.cu');
    analyzer.documents.open(uri, 1, analyzer.index.text(uri)!);
    assert.deepEqual(analyzer.documents.facts(uri)!.launches.map(describe1), [
      '4: scale 256x1x1 via launch_scale in k.cu',
      '5: scale 128x1x1 via launch_scale in k.cu',
    ]);
    analyzer.index.update(
      at('k.cu'),
      [...LAUNCHER['k.cu'].slice(0, 3), '  scale<<<n, threads / 2>>>(p, n);', '}', ''].join('\n'),
    );
    analyzer.documents.invalidate(uri);
    assert.deepEqual(analyzer.documents.facts(uri)!.launches.map(describe1), [
      '4: scale 128x1x1 via launch_scale in k.cu',
      '5: scale 64x1x1 via launch_scale in k.cu',
    ]);
  });

  it('never takes a same-named definition the declaration does not lead to while one it leads to exists', async () => {
    const analyzer = await workspace(LAUNCHER);
    const found = launchesOf(analyzer, 'other.cu');
    assert.ok(found.every((l) => !l.includes('old_scale')));
  });

  it('takes the one definition of the workspace where no includer of the declaration defines it', async () => {
    const analyzer = await workspace({
      'solo.cu': [
        '__global__ void fill(float *p) { p[threadIdx.x] = 0; }',
        'void run_fill(float *p, int threads) { fill<<<1, threads>>>(p); }',
      ],
      'caller.cu': ['void run_fill(float *p, int threads);', 'void host(float *p) { run_fill(p, 64); }'],
    });
    assert.deepEqual(launchesOf(analyzer, 'caller.cu'), ['2: fill 64x1x1 via run_fill in solo.cu']);
  });

  it('follows no call to a static function, one in an anonymous namespace, or one of two definitions', async () => {
    const analyzer = await workspace({
      'a.cu': [
        '__global__ void fill(float *p) { p[threadIdx.x] = 0; }',
        'static void run_static(float *p, int threads) { fill<<<1, threads>>>(p); }',
        'namespace { void run_hidden(float *p, int threads) { fill<<<1, threads>>>(p); } }',
        'void run_twice(float *p, int threads) { fill<<<1, threads>>>(p); }',
        'void use(float *p) { run_static(p, 1); run_hidden(p, 1); }',
      ],
      'b.cu': [
        '__global__ void fill(float *p) { p[threadIdx.x] = 1; }',
        'void run_twice(float *p, int threads) { fill<<<2, threads>>>(p); }',
      ],
      'caller.cu': [
        'void run_static(float *p, int threads);',
        'void run_hidden(float *p, int threads);',
        'void run_twice(float *p, int threads);',
        'void host(float *p) { run_static(p, 64); run_hidden(p, 64); run_twice(p, 64); }',
      ],
    });
    assert.deepEqual(launchesOf(analyzer, 'caller.cu'), []);
  });

  it('keeps a function the unit itself defines: a same-named one of a file it never includes is not read', async () => {
    const analyzer = await workspace({
      'llmc/encoder.cuh': [
        '#pragma once',
        '__global__ void encoder_kernel3(float *out) { out[threadIdx.x] = 0; }',
        'void encoder_forward(float *out, int n, int block) { encoder_kernel3<<<n / block, block>>>(out); }',
      ],
      'dev/encoder_forward.cu': [
        '__global__ void encoder_kernel1(float *out) { out[threadIdx.x] = 1; }',
        'void encoder_forward(float *out, int n, int block) { encoder_kernel1<<<n / block, block>>>(out); }',
      ],
      'train.cu': ['#include "llmc/encoder.cuh"', 'void step(float *out) { encoder_forward(out, 1024, 256); }'],
    });
    assert.deepEqual(launchesOf(analyzer, 'train.cu'), ['2: encoder_kernel3 256x1x1 via encoder_forward']);
  });

  it('takes what a call writes through a reference parameter, not the value before it, into the launcher of another unit', async () => {
    const analyzer = await workspace({
      ...LAUNCHER,
      'other.cu': [
        '#include "k.cuh"',
        'void choose(int n, int &threads) { threads = n > 4096 ? 512 : 128; }',
        'void host(float *p, int n) {',
        '  int threads = 0;',
        '  choose(n, threads);',
        '  launch_scale(p, n, threads);',
        '  launch_scale(p, n, 64);',
        '}',
      ],
    });
    assert.deepEqual(launchesOf(analyzer, 'other.cu'), [
      '6: scale 128|512 via launch_scale in k.cu',
      '7: scale 64x1x1 via launch_scale in k.cu',
    ]);
  });

  it('check DIR reads the C++ sources that call a launcher of the workspace, and only those', async () => {
    const dir = sourceTree({
      ...Object.fromEntries(Object.entries(LAUNCHER).map(([f, lines]) => [f, lines.join('\n') + '\n'])),
      'main.cpp': '#include "k.cuh"\nint main() { float *p = 0; launch_scale(p, 1000, 512); return 0; }\n',
      'plain.cpp': 'int add(int a, int b) { return a + b; }\n',
    });
    const json = await checkJsonOf([dir, '--no-nvcc', '--arch', 'sm_80', '--fail-on', 'never']);
    const paths = json.files.map((f) => f.path.replace(/^.*[\\/]/, '')).sort();
    assert.deepEqual(paths, ['k.cu', 'k.cuh', 'k_old.cu', 'main.cpp', 'other.cu']);
    const main = json.files.find((f) => f.path.endsWith('main.cpp'))!;
    assert.deepEqual(
      main.launches.map((l) => `${l.line} ${l.kernel} ${l.threadsPerBlock} ${l.through?.definedIn}`),
      [`2 scale 512 ${path.relative(REPO_ROOT, path.join(dir, 'k.cu'))}`],
    );
  });
});
