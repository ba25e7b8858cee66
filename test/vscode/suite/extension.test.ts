/** The extension in a real VS Code: open an example, read the lens and the hover our server gives. */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

async function poll<T>(what: string, get: () => Promise<T | undefined> | T | undefined, timeoutMs = 30000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await get();
    if (last !== undefined) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function hoverText(hovers: vscode.Hover[]): string {
  return hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
}

describe('CUDA Occupancy Lens in VS Code', () => {
  let doc: vscode.TextDocument;

  before(async () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'the examples folder is open');
    doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder.uri, 'reduce.cu'));
    await vscode.window.showTextDocument(doc);
  });

  it('opens .cu files as cuda-cpp', () => {
    assert.equal(doc.languageId, 'cuda-cpp');
  });

  it('shows a code lens over each kernel', async () => {
    const titles = await poll('code lenses from the server', async () => {
      const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri);
      const t = (lenses ?? []).map((l) => l.command?.title ?? '');
      return t.some((x) => /occupancy|launch|sm_\d+/.test(x)) ? t : undefined;
    });
    assert.ok(titles.some((t) => /sm_80 \d+(\.\d)?%/.test(t)), JSON.stringify(titles));
  });

  it('hovers a launch with its occupancy per architecture', async () => {
    const line = doc.getText().split('\n').findIndex((l) => l.includes('block_sum<REDUCE_THREADS><<<'));
    assert.ok(line >= 0);
    const character = doc.lineAt(line).text.indexOf('block_sum') + 2;
    const text = await poll('a hover', async () => {
      const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', doc.uri, new vscode.Position(line, character));
      const t = hoverText(hovers ?? []);
      return t.includes('block_sum') ? t : undefined;
    });
    assert.match(text, /\*\*block_sum\\<REDUCE_THREADS\\>\*\*: 256 threads, 8 warps per block/);
    assert.match(text, /\| occupancy \|/);
    assert.match(text, /Figures: \d+ registers, .* \((annotation|ptxas), sm_80/);
  });

  it('marks the launch above __launch_bounds__ as an error', async () => {
    const diagnostics = await poll('diagnostics', () => {
      const d = vscode.languages.getDiagnostics(doc.uri).filter((x) => x.source === 'cuda-occupancy');
      return d.some((x) => x.code === 'launch-exceeds-bounds') ? d : undefined;
    });
    const error = diagnostics.find((d) => d.code === 'launch-exceeds-bounds')!;
    assert.equal(error.severity, vscode.DiagnosticSeverity.Error);
    assert.match(doc.lineAt(error.range.start.line).text, /pair_mix<<</);
  });
});
