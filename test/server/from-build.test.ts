/**
 * `cudaOccupancy.fromBuild` in the language server: the hover shows the figures of a build's
 * objects and says which file they came from, with no nvcc run. The objects are read by the fake
 * cuobjdump of test/fixtures/fake-cuobjdump (output in the format NVIDIA's documentation shows:
 * the test machine's toolkit has no cuobjdump).
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { LspSession, fileUri } from '../support/lsp-session';
import { sourceTree } from '../support/cli-run';
import { FAKE_CUDA_HOME, fakeObject } from '../support/fake-cuobjdump';

const KERNEL = `__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i];
}
void run(float* x, int n) { scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n); }
`;

async function hoverText(session: LspSession, uri: string, until: RegExp, timeoutMs = 15_000): Promise<string> {
  const started = Date.now();
  let text = '';
  while (Date.now() - started < timeoutMs) {
    const hover = await session.hover(uri, { line: 4, character: 30 });
    text = JSON.stringify(hover?.contents ?? '');
    if (until.test(text)) return text;
    await new Promise((r) => setTimeout(r, 200));
  }
  return text;
}

describe('cudaOccupancy.fromBuild (fake cuobjdump, documented format)', function () {
  this.timeout(60_000);

  it("the hover shows the build's figures and the object they came from; files that disagree leave the registers unknown", async () => {
    const repo = sourceTree({
      'k.cu': KERNEL,
      'build/CMakeFiles/k.dir/k.cu.o': fakeObject({ sm_80: { _Z5scalePffi: { reg: 24 } } }),
      'other/k.cu.o': fakeObject({ sm_80: { _Z5scalePffi: { reg: 96 } } }),
    });
    const start = (fromBuild: string[]) =>
      LspSession.start({
        rootDir: repo,
        env: { CUDA_HOME: FAKE_CUDA_HOME },
        initializationOptions: { cacheDir: null },
        settings: { fromBuild, nvcc: { enabled: false }, architectures: ['sm_80'] },
      });
    const uri = fileUri(path.join(repo, 'k.cu'));
    const session = await start(['build']);
    try {
      session.open(uri, KERNEL);
      await session.waitForDiagnostics(uri);
      const text = await hoverText(session, uri, /cuobjdump of k\.cu\.o/);
      assert.match(text, /24 registers.*log: cuobjdump of k\.cu\.o, sm_80/);
    } finally {
      await session.stop();
    }
    const both = await start(['build', 'other']);
    try {
      both.open(uri, KERNEL);
      await both.waitForDiagnostics(uri);
      const text = await hoverText(both, uri, /disagree/);
      assert.match(
        text,
        /registers unknown for sm_80.*the build's files disagree on sm_80: 24 registers.*96 registers/,
      );
    } finally {
      await both.stop();
    }
  });
});
