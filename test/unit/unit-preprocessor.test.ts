/**
 * The preprocessor of a translation unit: which lines a unit compiles, what its macros are at each
 * point, and what it cannot decide (kept open, never guessed).
 */
import * as assert from 'node:assert/strict';
import { preprocessUnit, type UnitInput, type RegionState } from '../../server/src/core/preprocess/unit';
import { viewText } from '../../server/src/core/preprocess/view';
import { evaluateCondition, conditionTokens } from '../../server/src/core/preprocess/conditions';
import { expandTokens, toExpand, type MacroDef } from '../../server/src/core/preprocess/macro-expansion';
import { tokenize, spell } from '../../server/src/core/preprocess/tokens';
import { scanDirectives } from '../../server/src/core/preprocess/directives';

/** A unit over in-memory files: `files['/p/a.cu']`. */
function unit(files: Record<string, string>, main = Object.keys(files)[0], extra: Partial<UnitInput> = {}) {
  const byTail = (tail: string) => Object.keys(files).filter((p) => p.endsWith(`/${tail}`));
  return preprocessUnit({ main, sources: { read: (p) => files[p] ?? null, byTail }, ...extra });
}

/** The state of the line holding `marker` in `path`. */
function stateOf(u: ReturnType<typeof unit>, path: string, marker: string): RegionState | 'directive' | null {
  const file = u.files.get(path);
  if (!file) return null;
  const at = file.text.indexOf(marker);
  assert.ok(at >= 0, `${marker} not in ${path}`);
  const r = file.regions.find((r) => r.start <= at && at < r.end);
  return r ? (r.directive ? 'directive' : r.state) : null;
}

/** The value a name expands to at `marker` (its definitions' bodies, `?` when open). */
function valueAt(u: ReturnType<typeof unit>, path: string, marker: string, name: string): string[] {
  const file = u.files.get(path)!;
  const scope = u.macrosAt(path, file.text.indexOf(marker));
  const s = scope.state(name);
  const values = s.options.map((o) => (o === null ? 'undefined' : o.body === null ? '(built-in)' : spell(o.body)));
  return s.open ? [...values, '?'] : values;
}

describe('the preprocessor of a translation unit', () => {
  it("knows the toolkit's version macros from the nvcc that compiles it, CUDA_VERSION where <cuda.h> is included; without it, the build decides", () => {
    const text = [
      '#if CUDART_VERSION >= 12000 && __CUDACC_VER_MAJOR__ >= 12',
      'int runtime_new;',
      '#endif',
      '#if CUDA_VERSION >= 11000',
      'int driver_before_include;',
      '#endif',
      '#include <cuda.h>',
      '#if CUDA_VERSION >= 11000',
      'int driver_new;',
      '#endif',
    ].join('\n');
    const known = unit({ '/p/a.cu': text }, '/p/a.cu', { toolchain: { cuda: { major: 13, minor: 0 } } });
    assert.equal(stateOf(known, '/p/a.cu', 'runtime_new'), 'active');
    assert.equal(stateOf(known, '/p/a.cu', 'driver_before_include'), 'assumed');
    assert.equal(stateOf(known, '/p/a.cu', 'driver_new'), 'active');
    assert.deepEqual(valueAt(known, '/p/a.cu', 'driver_new', 'CUDA_VERSION'), ['13000']);
    const unknown = unit({ '/p/a.cu': text }, '/p/a.cu');
    assert.equal(stateOf(unknown, '/p/a.cu', 'runtime_new'), 'assumed');
    assert.equal(stateOf(unknown, '/p/a.cu', 'driver_new'), 'assumed');
  });

  it('decides #if, #ifdef and #elif over the macros the files define, and keeps lines and offsets', () => {
    const text = [
      '#define FAST 1',
      '#define VERSION 2',
      '#if 0',
      'dead0();',
      '#endif',
      '#if FAST',
      'fast();',
      '#else',
      'slow();',
      '#endif',
      '#if VERSION >= 3',
      'v3();',
      '#elif VERSION == 2',
      'v2();',
      '#else',
      'v1();',
      '#endif',
    ].join('\n');
    const u = unit({ '/p/a.cu': text });
    assert.equal(stateOf(u, '/p/a.cu', 'dead0'), 'inactive');
    assert.equal(stateOf(u, '/p/a.cu', 'fast()'), 'active');
    assert.equal(stateOf(u, '/p/a.cu', 'slow()'), 'inactive');
    assert.equal(stateOf(u, '/p/a.cu', 'v3()'), 'inactive');
    assert.equal(stateOf(u, '/p/a.cu', 'v2()'), 'active');
    assert.equal(stateOf(u, '/p/a.cu', 'v1()'), 'inactive');
    const view = viewText(u.files.get('/p/a.cu')!);
    assert.equal(view.length, text.length);
    assert.equal(view.split('\n').length, text.split('\n').length);
    assert.deepEqual(
      view.split('\n').filter((l) => l.trim()),
      ['fast();', 'v2();'],
    );
  });

  it('keeps both arms of a condition on a macro no flag and no file sets, and what they define is one of both', () => {
    const u = unit({
      '/p/a.cu': [
        '#ifdef USE_ROCM',
        '#include "hip_config.h"',
        '#else',
        '#include "cuda_config.h"',
        '#endif',
        'int use = BLOCK;',
        '#ifndef NDEBUG',
        'check();',
        '#endif',
      ].join('\n'),
      '/p/hip_config.h': '#define BLOCK 64\n',
      '/p/cuda_config.h': '#define BLOCK 256\n',
    });
    assert.equal(stateOf(u, '/p/a.cu', '#include "hip'), 'directive');
    assert.equal(u.files.get('/p/hip_config.h')!.state, 'alternative');
    assert.equal(u.files.get('/p/cuda_config.h')!.state, 'assumed');
    assert.deepEqual(valueAt(u, '/p/a.cu', 'int use', 'BLOCK'), ['64', '256']);
    // The view is one consistent program: a build that passes no -D.
    assert.equal(u.macrosAt('/p/a.cu', 80).view('BLOCK')?.body?.[0].text, '256');
    assert.equal(stateOf(u, '/p/a.cu', 'check()'), 'assumed');
  });

  it('reads a source whose whole code is under an undecided #ifdef as a build that defines it, its headers too', () => {
    const header = '#ifndef CFG_H_\n#define CFG_H_\n#ifdef USE_CUDA\n#define BLOCK (1024)\n#endif\n#endif\n';
    const whole = unit({
      '/p/a.cu': '// optional backend\n#ifdef USE_CUDA\n#include "cfg.h"\nint use = BLOCK;\n#endif  // USE_CUDA\n',
      '/p/cfg.h': header,
    });
    assert.deepEqual(valueAt(whole, '/p/a.cu', 'int use', 'BLOCK'), ['(1024)']);
    assert.equal(stateOf(whole, '/p/a.cu', 'int use'), 'active');
    // Code outside the condition, an #else, or a -U: the condition stays undecided.
    const partly = unit({
      '/p/a.cu': '#include "cfg.h"\nint before = 1;\n#ifdef USE_CUDA\nint use = BLOCK;\n#endif\n',
      '/p/cfg.h': header,
    });
    assert.deepEqual(valueAt(partly, '/p/a.cu', 'int use', 'BLOCK').sort(), ['(1024)', 'undefined']);
    const withElse = unit({
      '/p/a.cu': '#ifdef USE_CUDA\n#include "cfg.h"\nint use = BLOCK;\n#else\nint none;\n#endif\n',
      '/p/cfg.h': header,
    });
    assert.deepEqual(valueAt(withElse, '/p/a.cu', 'int use', 'BLOCK').sort(), ['(1024)', 'undefined']);
    const undefinedByFlag = unit(
      { '/p/a.cu': '#ifdef USE_CUDA\n#include "cfg.h"\nint use = BLOCK;\n#endif\n', '/p/cfg.h': header },
      '/p/a.cu',
      { flags: { macros: [{ name: 'USE_CUDA', undefine: true }] } },
    );
    assert.equal(stateOf(undefinedByFlag, '/p/a.cu', 'int use'), 'inactive');
  });

  it('takes a value set under a condition the file itself decides, and include guards', () => {
    const u = unit({
      '/p/a.cu': '#include "cfg.h"\n#include "cfg.h"\nint use = THREADS;\n',
      '/p/cfg.h': '#ifndef CFG_H\n#define CFG_H\n#ifndef THREADS\n#define THREADS 128\n#endif\n#endif\n',
    });
    assert.deepEqual(valueAt(u, '/p/a.cu', 'int use', 'THREADS'), ['128']);
    assert.equal(u.includes.length, 2);
  });

  it('reads flags, the pass and the architecture: __CUDA_ARCH__ is undefined on the host and set on the device', () => {
    const text = [
      '#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800',
      'ampere();',
      '#elif defined(__CUDA_ARCH__)',
      'older();',
      '#else',
      'host();',
      '#endif',
      '#ifdef WIDE',
      'wide();',
      '#endif',
      '#ifdef __HIP_PLATFORM_AMD__',
      'hip();',
      '#endif',
    ].join('\n');
    const host = unit({ '/p/a.cu': text });
    assert.equal(stateOf(host, '/p/a.cu', 'host()'), 'active');
    assert.equal(stateOf(host, '/p/a.cu', 'ampere()'), 'inactive');
    // Undecided, and with no other arm: kept in the view, so that it is read.
    assert.equal(stateOf(host, '/p/a.cu', 'wide()'), 'assumed');
    assert.equal(stateOf(host, '/p/a.cu', 'hip()'), 'inactive');
    const device = unit({ '/p/a.cu': text }, '/p/a.cu', {
      pass: { kind: 'device', arch: 800 },
      flags: { macros: [{ name: 'WIDE', value: null }] },
    });
    assert.equal(stateOf(device, '/p/a.cu', 'ampere()'), 'active');
    assert.equal(stateOf(device, '/p/a.cu', 'host()'), 'inactive');
    assert.equal(stateOf(device, '/p/a.cu', 'wide()'), 'active');
    const old = unit({ '/p/a.cu': text }, '/p/a.cu', { pass: { kind: 'device', arch: 700 } });
    assert.equal(stateOf(old, '/p/a.cu', 'older()'), 'active');
  });

  it("has CUDA's execution and memory spaces defined before the first line, as nvcc's cuda_runtime.h does", () => {
    const u = unit({
      '/p/a.cuh':
        '#ifndef __host__\n#define __host__\n#define __device__\nint without_nvcc;\n#endif\n__device__ int lane();\n',
    });
    assert.equal(stateOf(u, '/p/a.cuh', 'int without_nvcc'), 'inactive');
    assert.deepEqual(valueAt(u, '/p/a.cuh', '__device__ int', '__device__'), ['(built-in)']);
  });

  it('parses a kernel declaration split by #if as the compiler reads it', () => {
    const text = [
      '__global__ void',
      '#if __CUDA_ARCH__ >= 800',
      '__launch_bounds__(256, 2)',
      '#else',
      '__launch_bounds__(256)',
      '#endif',
      'k(float* x) {}',
    ].join('\n');
    const view = viewText(
      unit({ '/p/a.cu': text }, '/p/a.cu', { pass: { kind: 'device', arch: 800 } }).files.get('/p/a.cu')!,
    );
    assert.equal(view.replace(/\s+/g, ' ').trim(), '__global__ void __launch_bounds__(256, 2) k(float* x) {}');
  });

  it('follows includes beside the file, through -I, and by their tail when no folder says where', () => {
    const files = {
      '/r/app/main.cu': '#include "kernels.cuh"\n#include <lib/util.h>\n#include <cuda_runtime.h>\n',
      '/r/app/kernels.cuh': '#define K 1\n',
      '/r/include/lib/util.h': '#define U 2\n',
    };
    const viaTail = unit(files);
    assert.deepEqual(
      viaTail.includes.map((e) => e.resolved),
      ['/r/app/kernels.cuh', '/r/include/lib/util.h', null],
    );
    const viaFlag = unit(files, '/r/app/main.cu', { flags: { includeDirs: ['/r/include'] } });
    assert.equal(viaFlag.includes[1].resolved, '/r/include/lib/util.h');
    assert.deepEqual(viaFlag.closure, ['/r/app/main.cu', '/r/app/kernels.cuh', '/r/include/lib/util.h']);
  });

  it('keeps macros per point: a redefinition after #undef, and a definition inside a function', () => {
    const u = unit({
      '/p/a.cu': '#define B 64\nint one = B;\n#undef B\n#define B 128\nint two = B;\nint three = C;\n',
    });
    assert.deepEqual(valueAt(u, '/p/a.cu', 'int one', 'B'), ['64']);
    assert.deepEqual(valueAt(u, '/p/a.cu', 'int two', 'B'), ['128']);
    assert.deepEqual(valueAt(u, '/p/a.cu', 'int three', 'C'), ['undefined', '?']);
  });

  it('joins the arms of nested undecided conditions', () => {
    const u = unit({
      '/p/a.cu': [
        '#define T 1',
        '#ifdef A',
        '#  ifdef B',
        '#    define T 3',
        '#  else',
        '#    define T 2',
        '#  endif',
        '#endif',
        'int x = T;',
        '#if T == 1 || T == 2 || T == 3',
        'always();',
        '#endif',
      ].join('\n'),
    });
    assert.deepEqual(valueAt(u, '/p/a.cu', 'int x', 'T').sort(), ['1', '2', '3']);
    assert.equal(stateOf(u, '/p/a.cu', 'always()'), 'active');
  });

  it('stops a 1,000-deep macro chain and a self-including file, with the value unknown', () => {
    const lines = ['#define M(x) (x)', '#define M0 1'];
    for (let k = 1; k <= 1000; k++) lines.push(`#define M${k} M(M${k - 1})`);
    lines.push('#if M1000', 'deep();', '#endif');
    const u = unit({ '/p/a.cu': lines.join('\n'), '/p/self.h': '#include "self.h"\n' });
    assert.equal(stateOf(u, '/p/a.cu', 'deep()'), 'assumed');
    const selfish = unit({ '/p/self.cu': '#include "self.cu"\nint x;\n' });
    assert.ok(selfish.notes.some((n) => /deeper/.test(n)));
  });
});

describe('macro expansion', () => {
  const defs = (text: string): Map<string, MacroDef> => {
    const u = unit({ '/p/m.h': text });
    const file = u.files.get('/p/m.h')!;
    const scope = u.macrosAt('/p/m.h', file.text.length);
    const names = scanDirectives(text).defines;
    return new Map([...names].map((n) => [n, scope.state(n).options[0]!] as const).filter(([, d]) => d));
  };
  const expand = (macros: string, code: string) => {
    const table = defs(macros);
    return spell(expandTokens(toExpand(tokenize(code)), (n) => table.get(n) ?? null));
  };

  it('substitutes arguments, stringizes, pastes and rescans', () => {
    assert.equal(expand('#define SQ(x) ((x)*(x))\n', 'SQ(a+1)'), '((a+1)*(a+1))');
    assert.equal(expand('#define S(x) #x\n', 'S(a  +  "b")'), '"a + \\"b\\""');
    assert.equal(expand('#define CAT(a, b) a##b\n#define ab 42\n', 'CAT(a, b)'), '42');
    assert.equal(expand('#define F(...) f(__VA_ARGS__)\n', 'F(1, 2, 3)'), 'f(1, 2, 3)');
    assert.equal(expand('#define G(x, ...) g(x __VA_OPT__(,) __VA_ARGS__)\n', 'G(1) G(1, 2)'), 'g(1) g(1, 2)');
    // A macro is not expanded inside its own expansion.
    assert.equal(expand('#define X X + 1\n', 'X'), 'X + 1');
    assert.equal(expand('#define f(a) a*g\n#define g(a) f(a)\n', 'f(2)(9)'), '2*9*g');
  });

  it('places a body at the use and an argument where it is written', () => {
    const table = defs('#define LAUNCH(k, b) k<<<1, b>>>()\n');
    const code = 'LAUNCH(kern, 256);';
    const out = expandTokens(toExpand(tokenize(code)), (n) => table.get(n) ?? null);
    const kern = out.find((t) => t.text === 'kern')!;
    const b = out.find((t) => t.text === '256')!;
    const lt = out.find((t) => t.text === '<<')!;
    assert.deepEqual([kern.start, kern.end], [7, 11]);
    assert.deepEqual([b.start, b.end], [13, 16]);
    assert.deepEqual([lt.start, lt.end], [0, 17]);
  });
});

describe('#if conditions', () => {
  const truth = (text: string, known: Record<string, string | null> = {}, open: string[] = []) => {
    const u = unit({
      '/p/a.h': Object.entries(known)
        .map(([n, v]) => (v === null ? `#undef ${n}` : `#define ${n} ${v}`))
        .join('\n'),
    });
    const scope = u.macrosAt('/p/a.h', 1e9);
    return evaluateCondition(conditionTokens(text), {
      state: (n) => (open.includes(n) ? { options: [null], open: true } : scope.state(n)),
    });
  };

  it('computes in 64 bits, short-circuits around what it cannot know', () => {
    assert.equal(truth('(1 << 40) > 0'), true);
    assert.equal(truth('0xFFFFFFFFFFFFFFFF == -1'), true);
    assert.equal(truth('-1 < 0u'), false);
    assert.equal(truth('X > 2', {}, ['X']), 'unknown');
    assert.equal(truth('defined(X) && X > 2', { X: null }), false);
    assert.equal(truth('0 && X', {}, ['X']), false);
    assert.equal(truth('1 || X', {}, ['X']), true);
    assert.equal(truth('A ? 1 : 1', {}, ['A']), true);
    assert.equal(truth('__has_include(<cuda_fp16.h>)'), 'unknown');
    assert.equal(truth('V >= 3', { V: '2' }), false);
    assert.equal(truth("'A' == 65"), true);
    assert.equal(truth('1 / 0'), 'unknown');
  });
});
