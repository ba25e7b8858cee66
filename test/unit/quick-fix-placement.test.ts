/**
 * Quick fixes that keep what the program does (issue 25, cases 4, 5 and 7): each snippet is the code before
 * the fix, and the expected text is the code after it.
 */
import * as assert from 'node:assert/strict';
import { applyEdits, BOUNDS_FIX, boundsFixes, byTitle, fixesOf, quickFixAnalyzer } from '../support/quick-fix-harness';
import { MAX_TITLE } from '../../server/src/core/report/quick-fixes';
import { codeActions } from '../../server/src/lsp/code-actions';

const BIG = '__global__ void big(float* p) { extern __shared__ float s[]; s[threadIdx.x] = p[threadIdx.x]; }\n';
const SET = 'cudaFuncSetAttribute(big, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);';

/** The text after the opt-in fix on the (only) launch that needs it. */
async function optedIn(body: string, lineEnd = '\n'): Promise<string> {
  const text = (BIG + body).replace(/\n/g, lineEnd);
  const { fixes } = await fixesOf(text);
  const [fix] = byTitle(fixes, 'Opt in');
  assert.ok(fix, `no opt-in fix; fixes: ${fixes.map((f) => f.title).join(' | ')}`);
  return applyEdits(text, fix.edits!).slice(BIG.replace(/\n/g, lineEnd).length);
}

describe('quick fix placement', () => {
  describe('the dynamic shared memory opt-in runs exactly when the launch runs', () => {
    it('goes on a line of its own before a launch statement, with its indentation', async () => {
      assert.equal(
        await optedIn('void run(float* p) {\n    big<<<1, 256, 65536>>>(p);\n}\n'),
        `void run(float* p) {\n    ${SET}\n    big<<<1, 256, 65536>>>(p);\n}\n`,
      );
    });

    it('adds braces when the launch is the body of a brace-less if (the guarded statement stays the launch)', async () => {
      assert.equal(
        await optedIn('void run(float* p, int n) {\n  if (n > 0)\n    big<<<1, 256, 65536>>>(p);\n  p[0] = 1;\n}\n'),
        `void run(float* p, int n) {\n  if (n > 0) {\n    ${SET}\n    big<<<1, 256, 65536>>>(p);\n  }\n  p[0] = 1;\n}\n`,
      );
      assert.equal(
        await optedIn('void run(float* p, int n) {\n  if (n > 0) big<<<1, 256, 65536>>>(p);\n}\n'),
        `void run(float* p, int n) {\n  if (n > 0) { ${SET} big<<<1, 256, 65536>>>(p); }\n}\n`,
      );
    });

    it('adds braces in a brace-less for, so that the launch still runs m times', async () => {
      assert.equal(
        await optedIn(
          'void run(float* p, int m) {\n  for (int i = 0; i < m; ++i)\n    big<<<1, 256, 65536>>>(p + i);\n}\n',
        ),
        `void run(float* p, int m) {\n  for (int i = 0; i < m; ++i) {\n    ${SET}\n    big<<<1, 256, 65536>>>(p + i);\n  }\n}\n`,
      );
    });

    it('adds braces after else, while and do, and inside an if nested in a brace-less for', async () => {
      assert.equal(
        await optedIn('void run(float* p, int n) {\n  if (n == 0) return;\n  else big<<<1, 256, 65536>>>(p);\n}\n'),
        `void run(float* p, int n) {\n  if (n == 0) return;\n  else { ${SET} big<<<1, 256, 65536>>>(p); }\n}\n`,
      );
      assert.equal(
        await optedIn('void run(float* p, int n) {\n  while (n-- > 0) big<<<1, 256, 65536>>>(p);\n}\n'),
        `void run(float* p, int n) {\n  while (n-- > 0) { ${SET} big<<<1, 256, 65536>>>(p); }\n}\n`,
      );
      assert.equal(
        await optedIn('void run(float* p, int n) {\n  do big<<<1, 256, 65536>>>(p); while (--n > 0);\n}\n'),
        `void run(float* p, int n) {\n  do { ${SET} big<<<1, 256, 65536>>>(p); } while (--n > 0);\n}\n`,
      );
      assert.equal(
        await optedIn(
          'void run(float* p, int m) {\n  for (int i = 0; i < m; ++i) if (p[i] > 0) big<<<1, 256, 65536>>>(p + i);\n}\n',
        ),
        `void run(float* p, int m) {\n  for (int i = 0; i < m; ++i) if (p[i] > 0) { ${SET} big<<<1, 256, 65536>>>(p + i); }\n}\n`,
      );
    });

    it('goes after a case label, never before it', async () => {
      assert.equal(
        await optedIn(
          'void run(float* p, int mode) {\n  switch (mode) {\n  case 0: p[0] = 0; break;\n  case 1: big<<<1, 256, 65536>>>(p); break;\n  default:\n    break;\n  }\n}\n',
        ),
        `void run(float* p, int mode) {\n  switch (mode) {\n  case 0: p[0] = 0; break;\n  case 1: ${SET} big<<<1, 256, 65536>>>(p); break;\n  default:\n    break;\n  }\n}\n`,
      );
      assert.equal(
        await optedIn(
          'void run(float* p, int mode) {\n  switch (mode) {\n  case 1:\n    big<<<1, 256, 65536>>>(p);\n    break;\n  }\n}\n',
        ),
        `void run(float* p, int mode) {\n  switch (mode) {\n  case 1:\n    ${SET}\n    big<<<1, 256, 65536>>>(p);\n    break;\n  }\n}\n`,
      );
    });

    it('goes before the statement when the launch is on a continuation line of an expression', async () => {
      assert.equal(
        await optedIn(
          'cudaError_t run(float* p) {\n  cudaError_t e = (cudaGetLastError(),\n                   big<<<1, 256, 65536>>>(p), cudaGetLastError());\n  return e;\n}\n',
        ),
        `cudaError_t run(float* p) {\n  ${SET}\n  cudaError_t e = (cudaGetLastError(),\n                   big<<<1, 256, 65536>>>(p), cudaGetLastError());\n  return e;\n}\n`,
      );
    });

    it('is a comma expression where the launch runs only under a condition inside its statement', async () => {
      const set = SET.slice(0, -1);
      assert.equal(
        await optedIn('int run(float* p, int n) {\n  return n > 0 ? (big<<<1, 256, 65536>>>(p), 0) : 1;\n}\n'),
        `int run(float* p, int n) {\n  return n > 0 ? ((${set}, big<<<1, 256, 65536>>>(p)), 0) : 1;\n}\n`,
      );
      assert.equal(
        await optedIn('bool run(float* p, bool go) {\n  return go && (big<<<1, 256, 65536>>>(p), true);\n}\n'),
        `bool run(float* p, bool go) {\n  return go && ((${set}, big<<<1, 256, 65536>>>(p)), true);\n}\n`,
      );
      assert.equal(
        await optedIn('void run(float* p, int m) {\n  for (int i = 0; i < m; big<<<1, 256, 65536>>>(p), ++i) {}\n}\n'),
        `void run(float* p, int m) {\n  for (int i = 0; i < m; (${set}, big<<<1, 256, 65536>>>(p)), ++i) {}\n}\n`,
      );
    });

    it('does not count a condition in an earlier argument or a finished group', async () => {
      assert.equal(
        await optedIn(
          'void g(bool, int);\nvoid run(float* p, int n) {\n  g(n > 0 && n < 9, (big<<<1, 256, 65536>>>(p), 0));\n}\n',
        ),
        `void g(bool, int);\nvoid run(float* p, int n) {\n  ${SET}\n  g(n > 0 && n < 9, (big<<<1, 256, 65536>>>(p), 0));\n}\n`,
      );
      assert.equal(
        await optedIn(
          'void run(float* p, int n) {\n  if (n > 0 && p) { p[0] = 1; }\n  big<<<1, 256, 65536>>>(p);\n}\n',
        ),
        `void run(float* p, int n) {\n  if (n > 0 && p) { p[0] = 1; }\n  ${SET}\n  big<<<1, 256, 65536>>>(p);\n}\n`,
      );
    });

    it("stays inside the #if that holds the launch, and in a lambda's body", async () => {
      assert.equal(
        await optedIn('void run(float* p) {\n  p[0] = 0;\n#if USE_BIG\n  big<<<1, 256, 65536>>>(p);\n#endif\n}\n'),
        `void run(float* p) {\n  p[0] = 0;\n#if USE_BIG\n  ${SET}\n  big<<<1, 256, 65536>>>(p);\n#endif\n}\n`,
      );
      assert.equal(
        await optedIn('void run(float* p) {\n  auto go = [&] { big<<<1, 256, 65536>>>(p); };\n  go();\n}\n'),
        `void run(float* p) {\n  auto go = [&] { ${SET} big<<<1, 256, 65536>>>(p); };\n  go();\n}\n`,
      );
    });

    it('is not offered where the launch names no one function: a template with deduced arguments, an overloaded name', async () => {
      const template = await fixesOf(
        'template <typename T> __global__ void big(T* p) { extern __shared__ float s[]; s[0] = p[0]; }\nvoid run(float* p) {\n  big<<<1, 256, 65536>>>(p);\n}\n',
      );
      assert.match(
        byTitle(template.fixes, 'Opt in')[0]?.disabled ?? '',
        /^big is a template whose arguments this launch deduces/,
      );
      const explicit = await fixesOf(
        'template <typename T> __global__ void big(T* p) { extern __shared__ float s[]; s[0] = p[0]; }\nvoid run(float* p) {\n  big<float><<<1, 256, 65536>>>(p);\n}\n',
      );
      const named = byTitle(explicit.fixes, 'Opt in')[0];
      assert.equal(named?.title, 'Opt in to 64 KB of dynamic shared memory');
      assert.match(named.edits?.[0].newText ?? '', /^cudaFuncSetAttribute\(big<float>, /);
      const overloaded = await fixesOf(
        `${BIG}__global__ void big(int* p) {}\nvoid run(float* p) {\n  big<<<1, 256, 65536>>>(p);\n}\n`,
      );
      const fix = byTitle(overloaded.fixes, 'Opt in')[0];
      assert.ok(!fix || /^big is overloaded/.test(fix.disabled ?? ''), fix?.title);
      const declared = await fixesOf(
        `__global__ void big(float*);\n${BIG}void run(float* p) {\n  big<<<1, 256, 65536>>>(p);\n}\n`,
      );
      assert.equal(
        byTitle(declared.fixes, 'Opt in')[0]?.disabled,
        undefined,
        'a declaration and its definition are not overloads',
      );
    });

    it("reads blocks before the launch right: a loop macro's, try and catch, if constexpr, and a lambda called in the statement", async () => {
      assert.equal(
        await optedIn(
          '#define FOR_EACH(i, n) for (int i = 0; i < (n); ++i)\nvoid run(float* p) {\n  FOR_EACH(i, 4) { p[i] = 0; }\n  big<<<1, 256, 65536>>>(p);\n}\n',
        ),
        `#define FOR_EACH(i, n) for (int i = 0; i < (n); ++i)\nvoid run(float* p) {\n  FOR_EACH(i, 4) { p[i] = 0; }\n  ${SET}\n  big<<<1, 256, 65536>>>(p);\n}\n`,
      );
      assert.equal(
        await optedIn(
          'void run(float* p) {\n  try { p[0] = 0; } catch (...) { p[0] = 1; }\n  big<<<1, 256, 65536>>>(p);\n}\n',
        ),
        `void run(float* p) {\n  try { p[0] = 0; } catch (...) { p[0] = 1; }\n  ${SET}\n  big<<<1, 256, 65536>>>(p);\n}\n`,
      );
      assert.equal(
        await optedIn(
          'template <bool B> void run(float* p) {\n  if constexpr (B)\n    big<<<1, 256, 65536>>>(p);\n}\n',
        ),
        `template <bool B> void run(float* p) {\n  if constexpr (B) {\n    ${SET}\n    big<<<1, 256, 65536>>>(p);\n  }\n}\n`,
      );
      assert.equal(
        await optedIn('void run(float* p) {\n  int r = [&] { return 1; }() + (big<<<1, 256, 65536>>>(p), 0);\n}\n'),
        `void run(float* p) {\n  ${SET}\n  int r = [&] { return 1; }() + (big<<<1, 256, 65536>>>(p), 0);\n}\n`,
      );
    });

    it("keeps the file's line endings (CRLF, CR)", async () => {
      assert.equal(
        await optedIn('void run(float* p) {\n  big<<<1, 256, 65536>>>(p);\n}\n', '\r\n'),
        `void run(float* p) {\r\n  ${SET}\r\n  big<<<1, 256, 65536>>>(p);\r\n}\r\n`,
      );
      assert.equal(
        await optedIn('void run(float* p, int n) {\n  if (n)\n    big<<<1, 256, 65536>>>(p);\n}\n', '\r\n'),
        `void run(float* p, int n) {\r\n  if (n) {\r\n    ${SET}\r\n    big<<<1, 256, 65536>>>(p);\r\n  }\r\n}\r\n`,
      );
      assert.equal(
        await optedIn('void run(float* p) {\n  big<<<1, 256, 65536>>>(p);\n}\n', '\r'),
        `void run(float* p) {\r  ${SET}\r  big<<<1, 256, 65536>>>(p);\r}\r`,
      );
    });
  });

  describe('__launch_bounds__', () => {
    const capOf = async (text: string, options: Parameters<typeof fixesOf>[1] = {}) => {
      const { fixes } = await fixesOf(text, options);
      const [cap] = boundsFixes(fixes);
      assert.ok(cap, fixes.map((f) => f.title).join(' | '));
      return { cap, after: cap.edits ? applyEdits(text, cap.edits) : null };
    };

    it('goes before a qualified declarator name (ns::k), which nvcc accepts', async () => {
      const { after } = await capOf(
        'namespace ns { __global__ void k(float* p); }\n// occupancy: regs=64\n__global__ void ns::k(float* p) { p[threadIdx.x] = 0; }\nvoid run(float* p) { ns::k<<<80, 256>>>(p); }\n',
      );
      assert.match(after ?? '', /\n__global__ void __launch_bounds__\(256, \d\) ns::k\(float\* p\) \{/);
    });

    it('keeps the third (cluster) argument of a bound it changes', async () => {
      const { cap, after } = await capOf(
        '// occupancy: regs=64\n__global__ void __launch_bounds__(256, 2, 4) k(float* p) { p[threadIdx.x] = 0; }\nvoid run(float* p) { k<<<80, 256>>>(p); }\n',
        { archs: ['sm_90'] },
      );
      assert.match(cap.title, /^Change to __launch_bounds__\(256, \d, 4\)/);
      assert.match(after ?? '', /__global__ void __launch_bounds__\(256, \d, 4\) k\(float\* p\)/);
    });

    it('is not offered beside a macro that supplies bounds, and says why', async () => {
      const { cap } = await capOf(
        '#define KERNEL_BOUNDS __launch_bounds__(256)\n// occupancy: regs=64\n__global__ void KERNEL_BOUNDS k(float* p) { p[threadIdx.x] = 0; }\nvoid run(float* p) { k<<<80, 256>>>(p); }\n',
      );
      assert.equal(cap.edits, undefined);
      assert.equal(
        cap.disabled,
        '`KERNEL_BOUNDS` already supplies `__launch_bounds__(256)` to k: change the bound in its definition (a second one would not compile)',
      );
    });

    it('reaches the editor as a disabled code action with the reason, where the client shows those, and not at all elsewhere', async () => {
      const { report } = await fixesOf(
        '#define KERNEL_BOUNDS __launch_bounds__(256)\n// occupancy: regs=64\n__global__ void KERNEL_BOUNDS k(float* p) { p[threadIdx.x] = 0; }\nvoid run(float* p) { k<<<80, 256>>>(p); }\n',
      );
      const range = report.analyses[0].launch.span;
      const shown = codeActions(report, range, [], { disabledSupport: true }).find((a) => BOUNDS_FIX.test(a.title));
      assert.deepEqual(
        [shown?.disabled?.reason.startsWith('`KERNEL_BOUNDS` already supplies'), shown?.edit],
        [true, undefined],
      );
      assert.equal(
        codeActions(report, range, []).find((a) => BOUNDS_FIX.test(a.title)),
        undefined,
      );
    });

    it('is not offered beside a macro from an included header that supplies bounds, nor beside one whose definition is not in view', async () => {
      const analyzer = await quickFixAnalyzer(true);
      analyzer.index.update('/ws/bounds.h', '#pragma once\n#define KERNEL_BOUNDS __launch_bounds__(256, 2)\n');
      const { cap } = await capOf(
        '#include "bounds.h"\n// occupancy: regs=64\n__global__ void KERNEL_BOUNDS k(float* p) { p[threadIdx.x] = 0; }\nvoid run(float* p) { k<<<80, 256>>>(p); }\n',
        { analyzer, uri: 'file:///ws/k.cu' },
      );
      assert.match(cap.disabled ?? '', /^`KERNEL_BOUNDS` already supplies `__launch_bounds__\(256, 2\)` to k/);
      const unknown = await capOf(
        '// occupancy: regs=64\n__global__ void KERNEL_ATTRS k(float* p) { p[threadIdx.x] = 0; }\nvoid run(float* p) { k<<<80, 256>>>(p); }\n',
      );
      assert.match(
        unknown.cap.disabled ?? '',
        /^`KERNEL_ATTRS` in the header of k is a macro whose definition is not in view/,
      );
    });

    it('warns in its title when another launch of the kernel, here or elsewhere in the workspace, would exceed the bound', async () => {
      const analyzer = await quickFixAnalyzer(true);
      analyzer.index.update('/ws/other.cu', 'void elsewhere(float* p) {\n  k<<<1, 1024>>>(p);\n}\n');
      const text =
        '// occupancy: regs=64\n__global__ void k(float* p) { p[threadIdx.x] = 0; }\nvoid run(float* p) {\n  k<<<80, 256>>>(p);\n  k<<<80, 512>>>(p);\n}\n';
      const { fixes } = await fixesOf(text, { analyzer, uri: 'file:///ws/k.cu' });
      const at256 = boundsFixes(fixes).find((f) => f.title.includes('__launch_bounds__(256,'));
      assert.ok(at256, fixes.map((f) => f.title).join(' | '));
      assert.match(at256.title, / ⚠ breaks 2 launches$/);
      const at512 = boundsFixes(fixes).find((f) => f.title.includes('__launch_bounds__(512,'));
      assert.match(at512?.title ?? '', / ⚠ breaks other\.cu:2$/);
      for (const fix of fixes) assert.ok(fix.title.length <= MAX_TITLE, fix.title);
    });
  });

  describe('block size', () => {
    it('is not offered on launches of one thread or one warp', async () => {
      for (const block of ['1', '32']) {
        const { fixes } = await fixesOf(
          `// occupancy: regs=64\n__global__ void k(float* p) { p[threadIdx.x] = 0; }\nvoid run(float* p) { k<<<1, ${block}>>>(p); }\n`,
        );
        assert.deepEqual(byTitle(fixes, 'Use '), [], `<<<1, ${block}>>>`);
      }
      const { fixes } = await fixesOf(
        '// occupancy: regs=64\n__global__ void k(float* p) { p[threadIdx.x] = 0; }\nvoid run(float* p) { k<<<80, 96>>>(p); }\n',
      );
      assert.equal(byTitle(fixes, 'Use ').length, 1);
    });
  });
});
