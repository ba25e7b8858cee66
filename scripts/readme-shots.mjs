#!/usr/bin/env node
// readme-shots.mjs: the README's screenshots, taken in a real VS Code (code-server from the test rig, `npm run test:setup`,
// rendered by Debian's Chromium through playwright-core) with the packaged extension installed.
//
//   npm run package   (while README.md's relative image links stop vsce, package with
//                      npx vsce package --no-dependencies --allow-missing-repository --baseImagesUrl URL -o X.vsix)
//   RIG_PW_DIR=/tmp/rig/pw node scripts/readme-shots.mjs --vsix cuda-occupancy-lens.vsix \
//       [--rig /tmp/rig] [--port 8093] [--out docs/images] [--only lens,hover,quick-fix,chart,diagnostics] [--keep]
//       [--project DIR]   (default: $CUDA_DEV_CORPUS/SGEMM_CUDA, or ../dev-corpus/SGEMM_CUDA beside the repository)
//
// It copies examples/ to a temporary folder (the repository's examples are never touched), and beside them the real
// project the hover, quick-fix and Problems shots are of (SGEMM_CUDA, a register-tiled GEMM; its code is never
// committed, only the pictures), writes the user settings (no git prompt, no start page, no minimap; nvcc's include
// path to eval/launches/stubs/cudalibs, the host-only cuBLAS stand-in its runner.cu needs), installs the vsix into a
// private code-server and starts it, opens examples/nbody.cu and reduce.cu, waits for the ptxas figures (the lens
// turns from "occupancy needs register figures" into "sm_80 50% ..."), and writes PNGs of a 1400x900 window:
// lens.png and chart.png (nbody.cu) cropped to the top; hover.png (a launch in SGEMM_CUDA's runner.cu, at VS Code's
// default hover size: the occupancy table shows without resizing), quick-fix.png (the light bulb's menu there),
// diagnostics.png (a warning's hover and the Problems panel of SGEMM_CUDA's kernels). It prints what each shot shows
// (the hover's text, the fixes' titles, the problems) as JSON, and fails when the hover's table is cut off.
// SHOTS_DEBUG=1 adds screenshots of the folding step. Every wait is on a condition in the DOM, except Chart.js's
// resize animation, which has none. Needs nvcc on PATH for the ptxas figures.

import { createRequire } from 'node:module';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = {};
for (let i = 2; i < process.argv.length; i++) {
  const k = process.argv[i];
  if (k === '--keep') {
    args.keep = true;
    continue;
  }
  if (!k.startsWith('--')) throw new Error(`unexpected argument ${k}`);
  args[k.slice(2)] = process.argv[++i];
}
const rig = args.rig || '/tmp/rig';
const port = args.port || '8093';
const vsix = path.resolve(args.vsix || path.join(repo, 'cuda-occupancy-lens.vsix'));
const outDir = path.resolve(args.out || path.join(repo, 'docs/images'));
const only = args.only ? new Set(args.only.split(',')) : null;
const corpus = process.env.CUDA_DEV_CORPUS || path.join(repo, '..', 'dev-corpus');
const project = path.resolve(args.project || path.join(corpus, 'SGEMM_CUDA'));
if (!fs.existsSync(path.join(project, 'src', 'runner.cu'))) {
  console.error(`no ${project}/src/runner.cu: pass --project with SGEMM_CUDA's folder (see eval/README.md)`);
  process.exit(2);
}
const want = (name) => !only || only.has(name);
const W = 1400,
  H = 900;
if (!fs.existsSync(vsix)) {
  console.error(`no ${vsix}: run npm run package first`);
  process.exit(2);
}
fs.mkdirSync(outDir, { recursive: true });

const t0 = Date.now();
const log = (...m) => console.error(`[${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...m);

// 1. a throwaway workspace and user-data folder
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-shots-'));
const ws = path.join(tmp, 'examples');
fs.cpSync(path.join(repo, 'examples'), ws, { recursive: true });
fs.cpSync(project, path.join(ws, 'SGEMM_CUDA'), { recursive: true });
const data = path.join(tmp, 'run', 'data');
fs.mkdirSync(path.join(data, 'User'), { recursive: true });
fs.writeFileSync(
  path.join(data, 'User', 'settings.json'),
  JSON.stringify(
    {
      'security.workspace.trust.enabled': false,
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'workbench.enableExperiments': false,
      'workbench.colorTheme': 'Default Dark Modern',
      'workbench.layoutControl.enabled': false,
      'git.openRepositoryInParentFolders': 'never',
      'git.enabled': false,
      'telemetry.telemetryLevel': 'off',
      'update.mode': 'none',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'extensions.ignoreRecommendations': true,
      'editor.minimap.enabled': false,
      'editor.fontSize': 14,
      'editor.hover.delay': 300,
      'editor.hover.above': false, // below the launch, where the folded kernel leaves room
      'editor.stickyScroll.enabled': false,
      'breadcrumbs.enabled': false,
      'window.commandCenter': false,
      'chat.commandCenter.enabled': false,
      // runner.cu includes cublas_v2.h: the host-only stand-in the launch evaluation uses (device code untouched).
      'cudaOccupancy.nvcc.includePaths': [path.join(repo, 'eval', 'launches', 'stubs', 'cudalibs')],
    },
    null,
    2,
  ),
);

// 2. code-server with the vsix installed
// (a config file and XDG folders of its own, so nothing lands in ~; its own process group, so
// that its file watchers stop with it)
const codeServer = path.join(rig, 'cs', 'node_modules', '.bin', 'code-server');
const home = path.join(tmp, 'run', 'home');
const csEnv = {
  ...process.env,
  XDG_CONFIG_HOME: path.join(home, 'config'),
  XDG_DATA_HOME: path.join(home, 'data'),
  XDG_CACHE_HOME: path.join(home, 'cache'),
};
const config = path.join(tmp, 'run', 'code-server.yaml');
fs.writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
const common = ['--config', config, '--user-data-dir', data, '--extensions-dir', path.join(tmp, 'run', 'extensions')];
const installed = spawnSync(codeServer, [...common, '--force', '--install-extension', vsix], {
  encoding: 'utf8',
  env: csEnv,
});
if (installed.status !== 0) {
  console.error(installed.stderr || installed.stdout);
  process.exit(1);
}
const server = spawn(
  codeServer,
  [
    ...common,
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--auth',
    'none',
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
  ],
  {
    detached: true,
    stdio: ['ignore', fs.openSync(path.join(tmp, 'run', 'code-server.log'), 'a'), 'ignore'],
    env: csEnv,
  },
);
const url = `http://127.0.0.1:${port}`;
const stopServer = () => {
  try {
    process.kill(-server.pid, 'SIGTERM');
  } catch {
    // already gone
  }
};
for (
  let i = 0;
  i < 600 &&
  !(await fetch(`${url}/healthz`).then(
    (r) => r.ok,
    () => false,
  ));
  i++
)
  await new Promise((r) => setTimeout(r, 100));
log('code-server', server.pid, url);

const pwDir = process.env.RIG_PW_DIR || path.join(rig, 'pw');
let pw;
try {
  pw = createRequire(path.join(pwDir, 'package.json'))('playwright-core');
} catch {
  pw = createRequire(import.meta.url)('playwright-core');
}
const profile = path.join(tmp, 'chromium');
const context = await pw.chromium.launchPersistentContext(profile, {
  executablePath: args.chromium || '/usr/bin/chromium',
  headless: true,
  viewport: { width: W, height: H },
  env: {
    ...process.env,
    XDG_CONFIG_HOME: path.join(profile, 'xdg-config'),
    XDG_CACHE_HOME: path.join(profile, 'xdg-cache'),
  },
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-dev-shm-usage',
  ],
});
const page = context.pages()[0] || (await context.newPage());

const LENS = '.editor-instance .monaco-editor .codelens-decoration';
const HOVER = '.monaco-editor .monaco-hover:not(.hidden) .monaco-hover-content';
const textOf = (sel) => page.evaluate((s) => [...document.querySelectorAll(s)].map((e) => e.innerText).join('\n'), sel);
const waitText = (sel, want, timeout = 30000) =>
  page.waitForFunction(
    ([s, w]) =>
      [...document.querySelectorAll(s)]
        .map((e) => e.innerText)
        .join('\n')
        .includes(w),
    [sel, want],
    { timeout },
  );
const shot = async (name, clip) => {
  const p = path.join(outDir, name);
  await page.screenshot({ path: p, clip });
  log('wrote', p, `${Math.round(fs.statSync(p).size / 1024)} KB`);
};

async function command(title) {
  await page.keyboard.press('Control+Shift+P');
  const box = page.locator('.quick-input-widget input');
  await box.waitFor({ state: 'visible', timeout: 5000 });
  await box.fill(`>${title}`);
  // the row whose label is exactly the title (not "Fold All" for "Fold")
  const row = page
    .locator('.quick-input-list .monaco-list-row')
    .filter({
      has: page.locator('.label-name', { hasText: new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }),
    })
    .first();
  await row.waitFor({ state: 'visible', timeout: 10000 });
  await row.click();
  await box.waitFor({ state: 'hidden', timeout: 5000 });
}

async function openFile(rel) {
  const base = path.basename(rel);
  for (let attempt = 0; ; attempt++) {
    await page.keyboard.press('Control+P');
    const box = page.locator('.quick-input-widget input');
    try {
      await box.waitFor({ state: 'visible', timeout: 5000 });
    } catch {
      if (attempt < 3) continue;
      throw new Error('no quick open');
    }
    await box.fill(rel);
    await page.waitForSelector(`.quick-input-list .monaco-list-row[aria-label*="${base}"]`, { timeout: 15000 });
    await page.keyboard.press('Enter');
    try {
      await page.waitForSelector(`.tabs-container .tab.active[aria-label*="${base}"]`, { timeout: 10000 });
      break;
    } catch (e) {
      if (attempt >= 3) throw e;
    }
  }
  await page.waitForSelector('.editor-instance .monaco-editor .view-lines', { timeout: 20000 });
}

/** Cursor to line:col (1-based) with Go to Line. */
async function goTo(line, col) {
  await page.keyboard.press('Control+G');
  const box = page.locator('.quick-input-widget input');
  await box.waitFor({ state: 'visible', timeout: 5000 });
  await box.fill(`:${line}:${col}`);
  await page.keyboard.press('Enter');
  await box.waitFor({ state: 'hidden', timeout: 5000 });
}

/** The screen box of the editor's cursor. */
const cursorBox = () => page.locator('.editor-instance .monaco-editor .cursors-layer .cursor').first().boundingBox();

/** Moves the mouse away and waits until no hover, menu or toast is left. */
async function clearOverlays() {
  await page.mouse.move(W - 5, H / 2);
  await page.keyboard.press('Escape');
  await page
    .waitForFunction(
      () =>
        !document.querySelector('.monaco-editor .monaco-hover:not(.hidden) .monaco-hover-content') &&
        !document.querySelector('.action-widget'),
      null,
      { timeout: 5000 },
    )
    .catch(() => {});
}

async function closeToasts() {
  for (const b of await page.locator('.notification-toast .codicon-notifications-clear').all())
    await b.click().catch(() => {});
}

/** Hovers the character at line:col and waits for a hover holding `want`. */
async function hoverAt(line, col, want) {
  await goTo(line, col);
  const cur = await cursorBox();
  const charW = await page.evaluate(() => {
    const s = document.querySelector('.editor-instance .monaco-editor .view-line span span');
    return s && s.textContent.length ? s.getBoundingClientRect().width / s.textContent.length : 8;
  });
  const x = cur.x + charW * 1.5,
    y = cur.y + cur.height / 2;
  await page.mouse.move(x + 60, y + 80);
  await page.mouse.move(x, y, { steps: 5 });
  await waitText(HOVER, want, 15000);
  // other providers may still add parts: wait until the text stops changing
  let last = '';
  for (let i = 0; i < 20; i++) {
    const now = await textOf(HOVER);
    if (now === last) break;
    last = now;
    await page.waitForTimeout(250);
  }
  return last;
}

/** 1-based line and column of the first match of `re` in a workspace file. */
function find(file, re) {
  const lines = fs.readFileSync(path.join(ws, file), 'utf8').split('\n');
  const i = lines.findIndex((l) => re.test(l));
  if (i < 0) throw new Error(`${re} not in ${file}`);
  return { line: i + 1, col: lines[i].search(re) + 1, count: lines.length };
}
const kernel = find('nbody.cu', /__global__ void nbody_forces/);
const kernelEnd = find('nbody.cu', /^}/); // the kernel's closing brace
const launch = find('nbody.cu', /nbody_forces<<</);
const gemmLaunch = find('SGEMM_CUDA/src/runner.cu', /^\s*sgemmWarptiling</);
// the branch inside the loop over block tiles (the warning; the one before the loop is a hint)
const divergent = find('SGEMM_CUDA/src/kernels/11_kernel_double_buffering.cuh', /^ {4}if \(doubleBufferIdx == 0\) \{$/);

/** The visible hover's content and where its first table sits against what shows without scrolling. */
const tableFit = () =>
  page.evaluate(() => {
    const content = document.querySelector('.monaco-editor .monaco-hover:not(.hidden) .monaco-hover-content');
    const table = content?.querySelector('table');
    if (!content || !table) return null;
    let viewport = content;
    while (viewport && viewport.scrollHeight <= viewport.clientHeight + 1 && viewport.parentElement)
      viewport = viewport.parentElement;
    const v = (viewport ?? content).getBoundingClientRect();
    const t = table.getBoundingClientRect();
    return { tableTop: t.top, tableBottom: t.bottom, shownTop: v.top, shownBottom: v.bottom };
  });

const report = {};
try {
  await page.goto(`${url}/?folder=${encodeURIComponent(ws)}`, { waitUntil: 'domcontentloaded', timeout: 60000 });
  await page.waitForSelector('.monaco-workbench .part.statusbar', { timeout: 60000 });
  await page.waitForSelector('.explorer-folders-view .monaco-list-row', { timeout: 60000 });
  log('workbench up');
  await page
    .locator('.monaco-workbench .part.editor')
    .click({ position: { x: 400, y: 300 } })
    .catch(() => {});

  // nbody.cu: wait for the ptxas figures in the lens
  await openFile('nbody.cu');
  await waitText(LENS, 'sm_80 50%', 60000);
  await waitText('.statusbar', 'sm_80', 10000).catch(() => {});
  log('figures in:', (await textOf(LENS)).split('\n').filter(Boolean).join(' | '));
  await closeToasts();

  // fold the kernel's body, so the kernel's lens and the launch's lens are both in view (the #pragma lines at
  // column 0 break VS Code's indentation folding, so fold a selection: Ctrl+K Ctrl+,)
  await goTo(kernel.line, 1);
  for (let i = kernel.line; i < kernelEnd.line; i++) await page.keyboard.press('Shift+ArrowDown');
  await page.keyboard.press('Control+K');
  await page.keyboard.press('Control+Comma');
  await page.waitForSelector('.editor-instance .monaco-editor .inline-folded', { timeout: 5000 });
  if (process.env.SHOTS_DEBUG) await page.screenshot({ path: path.join(tmp, 'debug-fold1.png') });
  await goTo(launch.line, launch.col + 2);
  if (process.env.SHOTS_DEBUG) await page.screenshot({ path: path.join(tmp, 'debug-fold2.png') });
  // a lens scrolled into view keeps its old title until VS Code resolves it: wait for the launch's figures
  await waitText(LENS, '(4 blocks/SM)', 30000);

  // lens.png
  if (want('lens')) {
    await goTo(launch.count, 1);
    await clearOverlays();
    await shot('lens.png', { x: 0, y: 0, width: W, height: 430 });
  }

  // chart.png: click the kernel's lens, then give the chart the whole editor area
  if (want('chart')) {
    await goTo(launch.count, 1);
    await page.locator(`${LENS} a`, { hasText: 'limited by registers' }).first().click();
    const frame = async () => {
      for (const f of page.frames()) {
        if (f === page.mainFrame()) continue;
        if (
          (await f
            .locator('canvas')
            .count()
            .catch(() => 0)) >= 3
        )
          return f;
      }
      return null;
    };
    let f = null;
    for (let i = 0; i < 100 && !(f = await frame()); i++) await page.waitForTimeout(200);
    if (!f) throw new Error('chart webview did not render three canvases');
    // (the webview's strict CSP stops Playwright's waitForFunction in its frame, so poll from here)
    const until = async (fn, what, timeout = 20000) => {
      for (const end = Date.now() + timeout; Date.now() < end; await page.waitForTimeout(200)) {
        if (
          await f.evaluate(fn).catch((e) => {
            log('chart frame:', e.message.split('\n')[0]);
            return false;
          })
        )
          return true;
        if (process.env.SHOTS_DEBUG)
          log(
            'chart text:',
            JSON.stringify((await f.evaluate(() => document.body.innerText).catch(() => '')).slice(0, 200)),
          );
      }
      log(`chart: ${what} not seen`);
      return false;
    };
    await until(
      () => /occupancy/.test(document.body.innerText) && /ptxas/.test(document.body.innerText),
      'the figures',
    );
    // give the chart the whole window, so the three charts sit side by side
    await page.keyboard.press('Control+2'); // focus the chart's editor group
    await command('View: Toggle Maximize Editor Group');
    await command('View: Toggle Primary Side Bar Visibility');
    await until(
      () => {
        const c = [...document.querySelectorAll('canvas')];
        return c.length >= 3 && new Set(c.map((e) => Math.round(e.getBoundingClientRect().top))).size === 1;
      },
      'three charts in a row',
      10000,
    );
    await page.waitForTimeout(800); // Chart.js's resize animation (no DOM condition to wait for)
    report.chart = (await f.evaluate(() => document.body.innerText)).slice(0, 400);
    await page.mouse.move(W - 5, H - 40);
    await shot('chart.png', { x: 0, y: 0, width: W, height: 450 });
    await command('View: Toggle Primary Side Bar Visibility');
    await command('View: Toggle Maximize Editor Group');
    await command('View: Close All Editors');
  }

  // hover.png, quick-fix.png: SGEMM_CUDA's runner.cu, the launch of the warp-tiled kernel (a template in a header,
  // 167 registers at 128 threads). The hover at VS Code's default size: the occupancy table must show whole.
  if (want('hover') || want('quick-fix')) {
    await command('View: Close All Editors');
    await openFile('SGEMM_CUDA/src/runner.cu');
    await goTo(gemmLaunch.line, 1);
    // nvcc compiles runner.cu (all the SGEMM kernels) in the background: wait for its figures in the launch's lens
    await waitText(LENS, 'sgemm', 5000).catch(() => {});
    await page
      .waitForFunction(
        (sel) => [...document.querySelectorAll(sel)].some((e) => /\(\d+ blocks?\/SM\)/.test(e.innerText)),
        LENS,
        { timeout: 180000 },
      )
      .catch(() => log('no figures in the lenses yet'));
    await closeToasts();
  }
  if (want('hover')) {
    report.hover = await hoverAt(gemmLaunch.line, gemmLaunch.col + 4, 'ptxas, sm_80');
    report.hoverFit = await tableFit();
    await shot('hover.png');
    await clearOverlays();
    const fit = report.hoverFit;
    if (!fit || fit.tableBottom > fit.shownBottom + 1 || fit.tableTop < fit.shownTop - 1)
      throw new Error(`the hover's occupancy table is cut off: ${JSON.stringify(fit)}`);
  }

  // quick-fix.png: Ctrl+. on the launch
  if (want('quick-fix')) {
    await goTo(gemmLaunch.line, gemmLaunch.col + 4);
    await page.keyboard.press('Control+.');
    await waitText('.action-widget', '__launch_bounds__', 15000);
    // the checks by ptxas (the titles say "checking…" until they end)
    await page
      .waitForFunction(() => !document.querySelector('.action-widget')?.innerText.includes('checking'), null, {
        timeout: 60000,
      })
      .catch(() => log('the fixes were still being checked'));
    report.quickFixes = await page.$$eval('.action-widget .monaco-list-row', (rows) =>
      rows.map((r) => r.innerText.trim()),
    );
    await shot('quick-fix.png');
    await clearOverlays();
  }

  // diagnostics.png: SGEMM_CUDA's double-buffered kernel, the divergent branch's warning under its squiggle, with
  // the Problems panel of the files open (runner.cu and the kernels' headers)
  if (want('diagnostics')) {
    await openFile('SGEMM_CUDA/src/kernels/2_kernel_global_mem_coalesce.cuh');
    await openFile('SGEMM_CUDA/src/kernels/11_kernel_double_buffering.cuh');
    await goTo(divergent.line, 1);
    await page.waitForSelector('.editor-instance .monaco-editor .squiggly-warning', { timeout: 60000 });
    await page.keyboard.press('Control+Shift+M');
    await waitText('.markers-panel', 'divergent-branch', 15000);
    report.problems = await page.$$eval('.markers-panel .monaco-list-row', (rows) =>
      rows.map((r) => r.innerText.replace(/\s+/g, ' ').trim()),
    );
    await page.locator('.editor-instance .monaco-editor .view-lines').click();
    report.diagnosticHover = await hoverAt(divergent.line, divergent.col + 10, 'divergent-branch');
    await shot('diagnostics.png');
    await clearOverlays();
  }
  log(JSON.stringify(report, null, 2));
} catch (e) {
  log('failed:', e.message);
  await page.screenshot({ path: path.join(tmp, 'failure.png') }).catch(() => {});
  log('failure screenshot', path.join(tmp, 'failure.png'));
  process.exitCode = 1;
} finally {
  await context.close();
  stopServer();
  if (!args.keep && !process.exitCode) fs.rmSync(tmp, { recursive: true, force: true });
}
