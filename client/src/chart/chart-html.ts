/**
 * The chart webview's page: a strict Content-Security-Policy (nothing but the bundled
 * script and the page's own style, no network), the header with the architecture
 * picker, and one canvas per sweep. Pure, so the tests and the screenshot script can
 * render it without VS Code.
 */

export interface ChartHtmlInput {
  /** `webview.cspSource` */
  cspSource: string;
  /** `webview.asWebviewUri(dist/client/chart-view.js)` as a string. */
  scriptUri: string;
  /** A fresh random nonce per page (base64 or hex). */
  nonce: string;
}

export function chartCsp({ cspSource, nonce }: Pick<ChartHtmlInput, 'cspSource' | 'nonce'>): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}' ${cspSource}`,
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
  ].join('; ');
}

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

const STYLE = `
  :root { color-scheme: light dark; }
  body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-editor-foreground); background: var(--vscode-editor-background); margin: 0; padding: 12px 16px 24px; }
  header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 8px 16px; }
  h1 { font-size: 1.3em; font-weight: 600; margin: 0; }
  h1 code { font-family: var(--vscode-editor-font-family); }
  h2 { font-size: 1em; font-weight: 600; margin: 0 0 4px; }
  label { display: inline-flex; gap: 6px; align-items: center; }
  select { max-width: 24em; }
  select, button { font: inherit; color: var(--vscode-dropdown-foreground); background: var(--vscode-dropdown-background); border: 1px solid var(--vscode-dropdown-border, transparent); padding: 2px 4px; }
  button { color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); border: none; padding: 3px 10px; cursor: pointer; }
  button:hover { background: var(--vscode-button-secondaryHoverBackground); }
  select:focus, button:focus { outline: 1px solid var(--vscode-focusBorder); outline-offset: 1px; }
  .summary { margin: 8px 0 2px; }
  .source, .notes { margin: 2px 0; color: var(--vscode-descriptionForeground); }
  .notes { padding-left: 18px; }
  .legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 8px 0; }
  .legend span { display: inline-flex; align-items: center; gap: 5px; }
  .legend i { display: inline-block; width: 14px; height: 10px; border-radius: 2px; }
  .legend .line { height: 2px; border-radius: 0; }
  .legend .marker { width: 0; height: 0; border-left: 6px solid transparent; border-right: 6px solid transparent; border-bottom: 10px solid; border-radius: 0; }
  .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(340px, 1fr)); gap: 16px 20px; }
  .box { position: relative; height: 280px; }
  .message { margin: 16px 0; }
  .hidden { display: none; }
`;

export function chartHtml(input: ChartHtmlInput): string {
  const nonce = escapeAttr(input.nonce);
  const section = (id: string, title: string) => `
    <section>
      <h2 id="title-${id}">${title}</h2>
      <div class="box"><canvas id="chart-${id}" role="img" aria-labelledby="title-${id}"></canvas></div>
    </section>`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttr(chartCsp(input))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>Occupancy chart</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<header>
  <h1 id="kernel">Occupancy chart</h1>
  <label>Architecture <select id="arch" aria-label="Architecture"></select></label>
  <button id="refresh" type="button" title="Ask the language server again">Refresh</button>
</header>
<p id="message" class="message" role="status">Loading…</p>
<main id="content" class="hidden">
  <p id="summary" class="summary"></p>
  <p id="source" class="source"></p>
  <ul id="notes" class="notes"></ul>
  <div id="legend" class="legend" aria-label="Legend"></div>
  <div class="charts">${section('blockSize', 'Threads per block')}${section('registers', 'Registers per thread')}${section('sharedMemory', 'Shared memory per block')}
    <section id="waves-section" class="hidden">
      <h2 id="title-waves">Waves</h2>
      <div class="box"><canvas id="chart-waves" role="img" aria-labelledby="title-waves"></canvas></div>
    </section>
  </div>
</main>
<script nonce="${nonce}" src="${escapeAttr(input.scriptUri)}"></script>
</body>
</html>
`;
}
