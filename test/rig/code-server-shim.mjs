#!/usr/bin/env node
// The "VS Code executable" test/vscode/run-tests.ts hands to @vscode/test-electron's runTests.
//
// No Electron VS Code can be downloaded on our machines, so this stands in for one: it takes the
// flags runTests passes (--extensionDevelopmentPath, --extensionTestsPath, --user-data-dir,
// --extensions-dir, the folder to open; Electron's own flags are ignored), starts code-server
// (the real VS Code workbench with a Node extension host) on a free 127.0.0.1 port, opens the
// workbench in Debian's chromium through playwright-core, and exits with the suite's exit code.
//
// code-server's command line refuses --extensionDevelopmentPath and --extensionTestsPath, but the
// browser workbench reads them from the URL's `payload` parameter (as VS Code for the Web does):
// the extension host then loads the extension under development, runs the suite's `run()`, and
// the workbench reports the outcome through `window.codeAutomationExit(code)`, which we provide.
//
// The suite can also ask about what the window shows (the DOM is out of the extension host's
// reach): it writes `<n>.request.json` into $CUDA_OCC_RIG_PROBES and waits for
// `<n>.response.json` (see test/vscode/suite/dom-probe.ts).
//
// Environment: RIG_DIR (default /tmp/rig; code-server in cs/, playwright-core in pw/),
// RIG_TIMEOUT_MS (default 300000), RIG_VERBOSE=1 (every console line of the workbench),
// RIG_WINDOW (default 1024x768, VS Code's default window size).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import util from 'node:util';

const rigDir = process.env.RIG_DIR || '/tmp/rig';
const timeoutMs = Number(process.env.RIG_TIMEOUT_MS || 300_000);
const [width, height] = (process.env.RIG_WINDOW || '1024x768').split('x').map(Number);
const log = (...words) => console.error('[code-server-shim]', ...words);

// --- the flags runTests passes ------------------------------------------------------------------
const flags = { dev: [], tests: null, userData: null, extensions: null, folder: null };
const withValue = new Set(['extensionDevelopmentPath', 'extensionTestsPath', 'user-data-dir', 'extensions-dir']);
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const m = /^--([^=]+)(?:=(.*))?$/.exec(argv[i]);
  if (!m) {
    flags.folder = path.resolve(argv[i]);
    continue;
  }
  const [, name, inline] = m;
  if (name === 'version') {
    console.log('1.100.3');
    process.exit(0);
  }
  if (!withValue.has(name)) continue; // --no-sandbox, --disable-gpu-sandbox, --skip-welcome, --disable-extensions, ...
  const value = path.resolve(inline ?? argv[++i]);
  if (name === 'extensionDevelopmentPath') flags.dev.push(value);
  else if (name === 'extensionTestsPath') flags.tests = value;
  else if (name === 'user-data-dir') flags.userData = value;
  else flags.extensions = value;
}
if (flags.dev.length !== 1 || !flags.tests) {
  log('needs exactly one --extensionDevelopmentPath and an --extensionTestsPath');
  process.exit(2);
}
const codeServer = path.join(rigDir, 'cs', 'node_modules', '.bin', 'code-server');
if (!fs.existsSync(codeServer)) {
  log(`no code-server in ${rigDir}: run npm run test:setup`);
  process.exit(2);
}

// --- a private code-server ----------------------------------------------------------------------
const userData = flags.userData ?? fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-occ-vscode-'));
const extensions = flags.extensions ?? path.join(userData, 'extensions');
const probes = path.join(userData, 'probes');
const outDir = path.join(userData, 'out');
for (const d of [path.join(userData, 'User'), extensions, probes, outDir, path.join(userData, 'home')])
  fs.mkdirSync(d, { recursive: true });
const settings = path.join(userData, 'User', 'settings.json');
if (!fs.existsSync(settings)) {
  fs.writeFileSync(
    settings,
    `${JSON.stringify(
      {
        'security.workspace.trust.enabled': false,
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'telemetry.telemetryLevel': 'off',
        'update.mode': 'none',
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'extensions.ignoreRecommendations': true,
        'git.enabled': false,
      },
      null,
      2,
    )}\n`,
  );
}
const port = await new Promise((resolve, reject) => {
  const server = net.createServer().on('error', reject);
  server.listen(0, '127.0.0.1', () => {
    const { port: free } = server.address();
    server.close(() => resolve(free));
  });
});
const config = path.join(userData, 'code-server.yaml');
fs.writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
const serverLog = path.join(userData, 'code-server.log');
const logFd = fs.openSync(serverLog, 'a');
// Its own process group (so that the file watchers it forks stop with it), and XDG folders
// inside the user-data folder (code-server writes a config with a password under ~/.config).
const home = path.join(userData, 'home');
const server = spawn(
  codeServer,
  [
    '--config',
    config,
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--auth',
    'none',
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--user-data-dir',
    userData,
    '--extensions-dir',
    extensions,
  ],
  {
    detached: true,
    stdio: ['ignore', logFd, logFd],
    env: {
      ...process.env,
      CUDA_OCC_RIG_PROBES: probes,
      XDG_CONFIG_HOME: path.join(home, 'config'),
      XDG_DATA_HOME: path.join(home, 'data'),
      XDG_CACHE_HOME: path.join(home, 'cache'),
    },
  },
);
const stopServer = () => {
  try {
    process.kill(-server.pid, 'SIGTERM');
  } catch {
    // already gone
  }
};
process.on('SIGINT', () => {
  stopServer();
  process.exit(130);
});
process.on('SIGTERM', () => {
  stopServer();
  process.exit(143);
});

const base = `http://127.0.0.1:${port}`;
const upBy = Date.now() + 60_000;
let up = false;
while (!up && Date.now() < upBy) {
  up = await fetch(`${base}/healthz`).then(
    (r) => r.ok,
    () => false,
  );
  if (!up) await new Promise((r) => setTimeout(r, 100));
}
if (!up) {
  log(`code-server did not answer on ${base}; its log: ${serverLog}`);
  stopServer();
  process.exit(1);
}

// --- the workbench in chromium, with the suite in its payload ---------------------------------
let chromium;
try {
  ({ chromium } = createRequire(path.join(rigDir, 'pw', 'package.json'))('playwright-core'));
} catch {
  log(`no playwright-core in ${rigDir}/pw: run npm run test:setup`);
  stopServer();
  process.exit(2);
}
const remote = (p) => `vscode-remote://127.0.0.1:${port}${p}`;
const payload = [
  ['extensionDevelopmentPath', remote(flags.dev[0])],
  ['extensionTestsPath', remote(flags.tests)],
];
const url = `${base}/?payload=${encodeURIComponent(JSON.stringify(payload))}${flags.folder ? `&folder=${encodeURIComponent(flags.folder)}` : '&ew=true'}`;
const profile = path.join(userData, 'chromium');
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.RIG_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width, height },
  env: { ...process.env, XDG_CONFIG_HOME: path.join(home, 'config'), XDG_CACHE_HOME: path.join(home, 'cache') },
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-dev-shm-usage',
  ],
});
const page = browser.pages()[0] ?? (await browser.newPage());

// The extension host's console reaches the page console as ('%cINFO', css, format, ...args)
// (ERR, WARN likewise): drop the style, apply the format. Mocha's spec reporter is what the
// suite prints; its lines are indented or blank, the workbench's own messages are not.
const printed = [];
page.on('console', async (message) => {
  let level = '';
  let body;
  try {
    const values = await Promise.all(message.args().map((a) => a.jsonValue()));
    if (typeof values[0] === 'string' && values[0].includes('%c')) {
      const styles = values[0].split('%c').length - 1;
      level = values[0].replace(/%c/g, '').trim();
      const rest = values.slice(1 + styles);
      body = typeof rest[0] === 'string' ? util.format(...rest) : rest.map(String).join(' ');
    } else {
      body = util.format(...values);
    }
  } catch {
    body = message.text();
  }
  printed.push(`${level} ${body}`.trim());
  if (process.env.RIG_VERBOSE || (level === 'INFO' && (body === '' || /^\s/.test(body)))) console.log(body);
});

let finish;
const finished = new Promise((resolve) => (finish = resolve));
await page.exposeFunction('codeAutomationExit', (code) => finish(Number(code)));
await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60_000 });

// --- DOM probes for the suite ---------------------------------------------------------------------
const answered = new Set();
const probeTimer = setInterval(async () => {
  for (const name of fs.readdirSync(probes)) {
    const m = /^(\d+)\.request\.json$/.exec(name);
    if (!m || answered.has(m[1])) continue;
    answered.add(m[1]);
    const request = JSON.parse(fs.readFileSync(path.join(probes, name), 'utf8'));
    const response = await answerProbe(request).catch((error) => ({ ok: false, error: String(error) }));
    fs.writeFileSync(path.join(probes, `${m[1]}.response.json.tmp`), JSON.stringify(response));
    fs.renameSync(path.join(probes, `${m[1]}.response.json.tmp`), path.join(probes, `${m[1]}.response.json`));
  }
}, 100);

/** `hover`: waits for the visible hover to hold `waitFor`, and measures it and the line that starts with `line`. */
async function answerProbe(request) {
  if (request.kind !== 'hover') return { ok: false, error: `unknown probe ${request.kind}` };
  const content = '.monaco-editor .monaco-hover:not(.hidden) .monaco-hover-content';
  await page.waitForFunction(
    ([selector, text]) => [...document.querySelectorAll(selector)].some((e) => e.innerText.includes(text)),
    [content, request.waitFor],
    { timeout: request.timeoutMs ?? 15_000 },
  );
  // The hover grows as its parts render: measure once it holds still.
  let last = null;
  for (let i = 0; i < 20; i++) {
    const now = await page.evaluate(measureHover, [content, request.line]);
    if (last && JSON.stringify(now) === JSON.stringify(last)) break;
    last = now;
    await page.waitForTimeout(200);
  }
  const screenshot = path.join(outDir, request.screenshot ?? `probe-${Date.now()}.png`);
  await page.screenshot({ path: screenshot });
  return { ok: true, window: { width, height }, screenshot, ...last };
}

function measureHover([selector, lineStart]) {
  const content = [...document.querySelectorAll(selector)].find((e) => e.offsetParent !== null);
  const box = content.getBoundingClientRect();
  // What shows without scrolling: the scrollable element that holds the content.
  let viewport = content;
  while (
    viewport &&
    viewport.scrollHeight <= viewport.clientHeight + 1 &&
    viewport.parentElement &&
    !viewport.classList.contains('monaco-hover')
  )
    viewport = viewport.parentElement;
  const visible = (viewport ?? content).getBoundingClientRect();
  const line = [...content.querySelectorAll('p, li, td, div')].find(
    (e) => e.innerText.trim().startsWith(lineStart) && e.children.length < 8,
  );
  const lineBox = line?.getBoundingClientRect();
  // The first table of the hover's own part (the occupancy table), wherever the diagnostics above it end.
  const tableBox = content.querySelector('table')?.getBoundingClientRect();
  return {
    text: content.innerText,
    contentHeight: Math.round(box.height),
    visibleTop: Math.round(visible.top),
    visibleBottom: Math.round(visible.bottom),
    lineTop: lineBox ? Math.round(lineBox.top) : null,
    lineBottom: lineBox ? Math.round(lineBox.bottom) : null,
    tableTop: tableBox ? Math.round(tableBox.top) : null,
    tableBottom: tableBox ? Math.round(tableBox.bottom) : null,
    scrollHidden: Math.max(0, Math.round((viewport ?? content).scrollHeight - (viewport ?? content).clientHeight)),
  };
}

// --- the outcome --------------------------------------------------------------------------------
const outcome = await Promise.race([
  finished,
  new Promise((resolve) => setTimeout(() => resolve('timeout'), timeoutMs)),
]);
clearInterval(probeTimer);
await page.screenshot({ path: path.join(outDir, 'final.png') }).catch(() => {});
fs.writeFileSync(path.join(outDir, 'console.log'), `${printed.join('\n')}\n`);
await browser.close().catch(() => {});
stopServer();
if (outcome === 'timeout') {
  log(`the suite did not finish within ${timeoutMs} ms; the workbench console is in ${outDir}/console.log`);
  process.exit(124);
}
log(
  `the suite exited with ${outcome}${outcome === 0 ? '' : ` (the workbench console: ${outDir}/console.log; KEEP_VSCODE_PROFILE=1 keeps it)`}`,
);
process.exit(outcome);
