/**
 * The chart webview's script (bundled for the browser as dist/client/chart-view.js).
 * Draws the three sweeps with Chart.js (and, for a grid of ceil(n / b) blocks, its waves against n): the step line of resident warps, the limiter
 * regions as coloured bands behind it, the launch's own point as a marker, a tooltip
 * with the calculator's exact figures. Colours and font come from the VS Code theme and
 * follow it when it changes.
 */
import {
  Chart,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  type Plugin,
  type TooltipItem,
} from 'chart.js';
import type { ChartData, ChartSweep, LimitingFactor, SweepId, WavesChart } from '../../../server/src/protocol';
import {
  axisMax,
  currentText,
  LIMITER_COLOR_VARS,
  limiterRegions,
  limitersPresent,
  pointLines,
  tickText,
  wavesPointLines,
  wavesTitle,
  xText,
  type FromView,
  type LimiterRegion,
  type ToView,
} from './chart-model';
import { LIMIT_NAMES } from '../../../server/src/protocol';

Chart.register(LineController, LineElement, PointElement, LinearScale, Tooltip);

interface VsCodeApi {
  postMessage(message: FromView): void;
}
declare function acquireVsCodeApi(): VsCodeApi;
const vscode = acquireVsCodeApi();

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

// ---------------------------------------------------------------------------
// Theme
// ---------------------------------------------------------------------------

interface Theme {
  foreground: string;
  muted: string;
  grid: string;
  background: string;
  marker: string;
  font: string;
  fontSize: number;
  limiters: Record<LimitingFactor, string>;
}

function cssVar(name: string, fallback: string): string {
  return (
    getComputedStyle(document.documentElement).getPropertyValue(name).trim() ||
    getComputedStyle(document.body).getPropertyValue(name).trim() ||
    fallback
  );
}

/** `#rrggbb`, `#rgb`, `#rrggbbaa` or `rgb(...)` with the given alpha. */
function withAlpha(color: string, alpha: number): string {
  const hex = /^#([0-9a-f]{3,8})$/i.exec(color);
  if (hex) {
    let h = hex[1];
    if (h.length <= 4) h = [...h].map((c) => c + c).join('');
    const [r, g, b] = [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16));
    return `rgba(${r}, ${g}, ${b}, ${alpha})`;
  }
  const rgb = /^rgba?\(([^,]+),([^,]+),([^,)]+)/.exec(color);
  return rgb ? `rgba(${rgb[1]}, ${rgb[2]}, ${rgb[3]}, ${alpha})` : color;
}

function readTheme(): Theme {
  const foreground = cssVar('--vscode-editor-foreground', '#cccccc');
  const fallbacks: Record<LimitingFactor, string> = {
    warps: '#3794ff',
    registers: '#f14c4c',
    sharedMemory: '#cca700',
    blocks: '#89d185',
    barriers: '#b180d7',
    virtualResources: '#d18616',
  };
  const limiters = Object.fromEntries(
    (Object.keys(LIMITER_COLOR_VARS) as LimitingFactor[]).map((f) => [f, cssVar(LIMITER_COLOR_VARS[f], fallbacks[f])]),
  ) as Record<LimitingFactor, string>;
  return {
    foreground,
    muted: cssVar('--vscode-descriptionForeground', foreground),
    grid: withAlpha(foreground, 0.12),
    background: cssVar('--vscode-editor-background', '#1e1e1e'),
    marker: cssVar('--vscode-charts-foreground', foreground),
    font: cssVar('--vscode-font-family', 'sans-serif'),
    fontSize: parseFloat(cssVar('--vscode-font-size', '13')) || 13,
    limiters,
  };
}

let theme = readTheme();

// ---------------------------------------------------------------------------
// Charts
// ---------------------------------------------------------------------------

type XY = { x: number; y: number };

interface Drawn {
  chart: Chart<'line', XY[]>;
  sweep: ChartSweep;
  regions: LimiterRegion[];
}

const charts = new Map<SweepId, Drawn>();
let data: ChartData | null = null;

const TIE_STRIPE_PX = 3;

/** Limiter regions as bands behind the line (tied limits in alternating stripes), and a guide at the launch's value. */
const bandsPlugin: Plugin<'line'> = {
  id: 'limiterBands',
  beforeDatasetsDraw(chart) {
    const drawn = [...charts.values()].find((d) => d.chart === chart);
    if (!drawn) return;
    const { ctx, chartArea: area, scales } = chart;
    const x = scales.x;
    ctx.save();
    ctx.beginPath();
    ctx.rect(area.left, area.top, area.width, area.height);
    ctx.clip();
    for (const r of drawn.regions) {
      if (r.factors.length === 0) continue;
      const left = x.getPixelForValue(r.from);
      const width = Math.max(x.getPixelForValue(r.to) - left, 1);
      if (r.factors.length === 1) {
        ctx.fillStyle = withAlpha(theme.limiters[r.factors[0]], 0.22);
        ctx.fillRect(left, area.top, width, area.height);
        continue;
      }
      // Tied limits: narrow stripes of each colour over the whole region.
      for (let i = 0, sx = left; sx < left + width; i++, sx += TIE_STRIPE_PX) {
        ctx.fillStyle = withAlpha(theme.limiters[r.factors[i % r.factors.length]], 0.3);
        ctx.fillRect(sx, area.top, Math.min(TIE_STRIPE_PX, left + width - sx), area.height);
      }
    }
    const cx = x.getPixelForValue(drawn.sweep.current);
    ctx.strokeStyle = withAlpha(theme.marker, 0.6);
    ctx.setLineDash([4, 4]);
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(cx, area.top);
    ctx.lineTo(cx, area.bottom);
    ctx.stroke();
    ctx.restore();
  },
};

function tooltipLines(sweep: ChartSweep, item: TooltipItem<'line'>): string[] {
  const isCurrent = item.datasetIndex === 1;
  const point = isCurrent ? data!.current.point : sweep.points[item.dataIndex];
  const lines = pointLines(point, data!.maxWarps);
  return isCurrent ? ['This launch', ...lines] : lines;
}

function buildChart(sweep: ChartSweep, maxWarps: number): Drawn {
  const canvas = $<HTMLCanvasElement>(`chart-${sweep.id}`);
  canvas.setAttribute(
    'aria-label',
    `${sweep.title}: resident warps per SM from ${sweep.points[0]?.x ?? 0} to ${axisMax(sweep)} ${sweep.unit}; this launch at ${sweep.current}.`,
  );
  const current = sweep.points.find((p) => p.x === sweep.current);
  const xmax = axisMax(sweep);
  const step =
    sweep.id === 'blockSize'
      ? 128
      : sweep.id === 'registers'
        ? 32
        : xmax > 128 * 1024
          ? 64 * 1024
          : xmax > 64 * 1024
            ? 32 * 1024
            : 16 * 1024;
  const drawn: Drawn = { sweep, regions: limiterRegions(sweep.points), chart: undefined as never };
  charts.set(sweep.id, drawn);
  drawn.chart = new Chart<'line', XY[]>(canvas, {
    type: 'line',
    data: {
      datasets: [
        {
          label: 'Resident warps per SM',
          data: sweep.points.map((p) => ({ x: p.x, y: p.activeWarps })),
          stepped: 'before',
          borderWidth: 2,
          pointRadius: 0,
          pointHoverRadius: 4,
          pointHitRadius: 3,
        },
        {
          label: 'This launch',
          data: current ? [{ x: current.x, y: current.activeWarps }] : [],
          showLine: false,
          pointStyle: 'triangle',
          pointRadius: 8,
          pointHoverRadius: 10,
          borderWidth: 1,
        },
      ],
    },
    options: {
      animation: false,
      maintainAspectRatio: false,
      parsing: false,
      normalized: true,
      interaction: { mode: 'nearest', axis: 'x', intersect: false },
      scales: {
        x: {
          type: 'linear',
          min: 0,
          max: xmax,
          title: {
            display: true,
            text: sweep.id === 'sharedMemory' ? 'Shared memory per block (static + dynamic)' : sweep.title,
          },
          ticks: { callback: (v) => tickText(sweep.id, Number(v)), maxRotation: 0, autoSkip: true },
          // Round ticks (every 128 threads, 32 registers, 16 or 32 KB) even where the axis ends between two.
          afterBuildTicks: (scale) => {
            scale.ticks = [];
            for (let v = 0; v <= xmax; v += step) scale.ticks.push({ value: v });
          },
        },
        y: {
          type: 'linear',
          min: 0,
          max: maxWarps,
          title: { display: true, text: 'Resident warps per SM' },
          ticks: { stepSize: maxWarps >= 48 ? 8 : 4 },
        },
        y2: {
          type: 'linear',
          position: 'right',
          display: true,
          min: 0,
          max: 100,
          title: { display: true, text: 'Occupancy %' },
          ticks: { stepSize: 25 },
          grid: { drawOnChartArea: false },
        },
      },
      plugins: {
        tooltip: {
          callbacks: {
            title: (items) =>
              items.length
                ? items[0].datasetIndex === 1
                  ? xText(sweep.id, sweep.current)
                  : xText(sweep.id, sweep.points[items[0].dataIndex].x)
                : '',
            label: (item) => tooltipLines(sweep, item),
          },
          filter: (item, index, items) =>
            index === items.findIndex((i) => i.datasetIndex === 1) || !items.some((i) => i.datasetIndex === 1),
          displayColors: false,
        },
      },
    },
    plugins: [bandsPlugin],
  });
  applyTheme(drawn.chart);
  return drawn;
}

let wavesDrawn: Chart<'line', XY[]> | null = null;

/** The tail effect's sawtooth: the share of block slots a grid of ceil(n / b) blocks keeps busy, against n. */
function buildWavesChart(w: WavesChart | null | undefined): void {
  wavesDrawn?.destroy();
  wavesDrawn = null;
  $('waves-section').classList.toggle('hidden', !w);
  if (!w) return;
  $('title-waves').textContent = wavesTitle(w);
  const canvas = $<HTMLCanvasElement>('chart-waves');
  canvas.setAttribute(
    'aria-label',
    `${wavesTitle(w)}: the share of block slots busy drops each time the grid starts a new wave.`,
  );
  const xmax = w.points[w.points.length - 1]?.n ?? w.elementsPerWave;
  wavesDrawn = new Chart<'line', XY[]>(canvas, {
    type: 'line',
    data: {
      datasets: [
        {
          label: 'Block slots busy',
          data: w.points.map((p) => ({ x: p.n, y: Math.round(p.used * 1000) / 10 })),
          borderWidth: 2,
          pointRadius: 0,
          pointHoverRadius: 4,
          pointHitRadius: 3,
        },
        {
          label: 'Whole waves',
          data: w.points.filter((p) => Number.isInteger(p.waves)).map((p) => ({ x: p.n, y: 100 })),
          showLine: false,
          pointStyle: 'triangle',
          pointRadius: 6,
          borderWidth: 1,
        },
      ],
    },
    options: {
      animation: false,
      maintainAspectRatio: false,
      parsing: false,
      interaction: { mode: 'nearest', axis: 'x', intersect: false },
      scales: {
        x: {
          type: 'linear',
          min: 0,
          max: xmax,
          title: { display: true, text: w.variable },
          ticks: { maxRotation: 0, autoSkip: true },
        },
        y: {
          type: 'linear',
          min: 0,
          max: 100,
          title: { display: true, text: 'Block slots busy %' },
          ticks: { stepSize: 25 },
        },
        y2: { type: 'linear', position: 'right', display: false, min: 0, max: 100, grid: { drawOnChartArea: false } },
      },
      plugins: {
        tooltip: {
          callbacks: {
            title: () => '',
            label: (item) => {
              const n = item.parsed.x;
              const point = w.points.find((p) => p.n === n) ?? w.points[item.dataIndex];
              return wavesPointLines(point, w);
            },
          },
          displayColors: false,
        },
      },
    },
  });
  applyTheme(wavesDrawn);
}

function applyTheme(chart: Chart<'line', XY[]>): void {
  const font = { family: theme.font, size: theme.fontSize - 1 };
  const o = chart.options;
  for (const id of ['x', 'y', 'y2'] as const) {
    const s = o.scales![id]!;
    s.ticks!.color = theme.muted;
    s.ticks!.font = font;
    if ('title' in s && s.title) {
      s.title.color = theme.foreground;
      s.title.font = font;
    }
    s.grid!.color = theme.grid;
    s.border = { color: withAlpha(theme.foreground, 0.4) };
  }
  const [line, marker] = chart.data.datasets;
  line.borderColor = theme.foreground;
  line.backgroundColor = theme.foreground;
  // A line dataset's points take the point* colours.
  line.pointBackgroundColor = theme.foreground;
  line.pointBorderColor = theme.foreground;
  marker.pointBackgroundColor = theme.marker;
  marker.pointBorderColor = theme.background;
  const t = o.plugins!.tooltip!;
  t.backgroundColor = cssVar('--vscode-editorHoverWidget-background', theme.background);
  t.titleColor = cssVar('--vscode-editorHoverWidget-foreground', theme.foreground);
  t.bodyColor = t.titleColor;
  t.borderColor = cssVar('--vscode-editorHoverWidget-border', theme.muted);
  t.borderWidth = 1;
  t.titleFont = { ...font, weight: 'bold' };
  t.bodyFont = font;
  // Not update('none'): in that mode Chart.js keeps the points' shared options it resolved before.
  chart.update();
}

// ---------------------------------------------------------------------------
// Page
// ---------------------------------------------------------------------------

function show(message: string | null): void {
  $('message').textContent = message ?? '';
  $('message').classList.toggle('hidden', message === null);
  $('content').classList.toggle('hidden', message !== null || data === null);
}

function renderLegend(d: ChartData): void {
  const legend = $('legend');
  legend.replaceChildren();
  const item = (swatch: HTMLElement, text: string) => {
    const span = document.createElement('span');
    span.append(swatch, text);
    legend.append(span);
  };
  const swatch = (cls: string, color: string, prop: 'backgroundColor' | 'borderBottomColor' = 'backgroundColor') => {
    const i = document.createElement('i');
    i.className = cls;
    i.style[prop] = color;
    return i;
  };
  item(swatch('line', theme.foreground), 'resident warps per SM');
  item(swatch('marker', theme.marker, 'borderBottomColor'), 'this launch');
  for (const f of limitersPresent(d))
    item(swatch('', withAlpha(theme.limiters[f], 0.45)), `limited by ${LIMIT_NAMES[f] ?? f}`);
  if (d.sweeps.some((s) => limiterRegions(s.points).some((r) => r.factors.length > 1))) {
    const note = document.createElement('span');
    note.textContent = 'stripes: limits tied';
    legend.append(note);
  }
}

function renderArchs(d: ChartData): void {
  const select = $<HTMLSelectElement>('arch');
  select.replaceChildren();
  const group = (label: string, target: boolean) => {
    const choices = d.archChoices.filter((c) => c.target === target);
    if (choices.length === 0) return;
    const g = document.createElement('optgroup');
    g.label = label;
    for (const c of choices) {
      const o = document.createElement('option');
      o.value = c.arch;
      o.textContent = `${c.arch} · ${c.family}`;
      o.selected = c.arch === d.arch;
      g.append(o);
    }
    select.append(g);
  };
  group('Target architectures', true);
  group('Other architectures', false);
}

function render(d: ChartData): void {
  data = d;
  const title = $('kernel');
  title.replaceChildren();
  const code = document.createElement('code');
  code.textContent = d.kernel || 'kernel';
  title.append(code, ` on ${d.arch} · ${d.family}`);
  renderArchs(d);
  $('summary').textContent = currentText(d);
  $('source').textContent = d.source ? `Figures: ${d.source}` : '';
  const notes = $('notes');
  notes.replaceChildren(...d.notes.map((n) => Object.assign(document.createElement('li'), { textContent: n })));
  renderLegend(d);
  for (const { chart } of charts.values()) chart.destroy();
  charts.clear();
  show(null);
  for (const sweep of d.sweeps) buildChart(sweep, d.maxWarps);
  buildWavesChart(d.waves);
}

function rethemed(): void {
  const next = readTheme();
  if (JSON.stringify(next) === JSON.stringify(theme)) return;
  theme = next;
  for (const { chart } of charts.values()) applyTheme(chart);
  if (wavesDrawn) applyTheme(wavesDrawn);
  if (data) renderLegend(data);
}

window.addEventListener('message', (event: MessageEvent<ToView>) => {
  const m = event.data;
  if (m.type === 'data') render(m.data);
  else if (m.type === 'message') {
    if (m.loading && data) return; // keep the old chart while a refresh is on its way
    data = m.loading ? data : null;
    show(m.text);
  }
});
$<HTMLSelectElement>('arch').addEventListener('change', (e) =>
  vscode.postMessage({ type: 'arch', arch: (e.target as HTMLSelectElement).value }),
);
$('refresh').addEventListener('click', () => vscode.postMessage({ type: 'refresh' }));
// VS Code swaps the body class and the root's CSS variables when the theme changes.
const observer = new MutationObserver(rethemed);
observer.observe(document.body, { attributes: true, attributeFilter: ['class'] });
observer.observe(document.documentElement, { attributes: true, attributeFilter: ['style', 'class'] });
vscode.postMessage({ type: 'ready' });
