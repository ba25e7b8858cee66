/**
 * Questions about what the VS Code window shows, which the extension host cannot see: the suite
 * writes `<n>.request.json` into $CUDA_OCC_RIG_PROBES and test/rig/code-server-shim.mjs, which
 * drives the workbench in chromium, answers with `<n>.response.json`. Outside that rig (a
 * downloaded Electron VS Code) there is no one to answer: `probesAvailable()` is false.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

export interface HoverMeasure {
  ok: boolean;
  error?: string;
  window: { width: number; height: number };
  screenshot: string;
  /** The hover's text as rendered. */
  text: string;
  contentHeight: number;
  /** The part of the hover that shows without scrolling, in window pixels. */
  visibleTop: number;
  visibleBottom: number;
  /** The rendered line that starts with the requested text. */
  lineTop: number | null;
  lineBottom: number | null;
  /** The hover's first table (the occupancy table), or null when it has none. */
  tableTop: number | null;
  tableBottom: number | null;
  /** Pixels of the hover's content that only scrolling reveals. */
  scrollHidden: number;
}

let next = 0;

export function probesAvailable(): boolean {
  const dir = process.env.CUDA_OCC_RIG_PROBES;
  return dir !== undefined && existsSync(dir);
}

/** Waits for the visible hover to hold `waitFor`, then measures it and the line starting with `line`. */
export async function measureHover(options: {
  waitFor: string;
  line: string;
  screenshot: string;
  timeoutMs?: number;
}): Promise<HoverMeasure> {
  const dir = process.env.CUDA_OCC_RIG_PROBES!;
  const id = `${process.pid}${String(next++).padStart(3, '0')}`;
  writeFileSync(path.join(dir, `${id}.request.json`), JSON.stringify({ kind: 'hover', ...options }));
  const response = path.join(dir, `${id}.response.json`);
  const deadline = Date.now() + (options.timeoutMs ?? 15_000) + 10_000;
  while (!existsSync(response)) {
    if (Date.now() > deadline) throw new Error('the rig did not answer the hover probe');
    await new Promise((r) => setTimeout(r, 100));
  }
  const answer = JSON.parse(readFileSync(response, 'utf8')) as HoverMeasure;
  if (!answer.ok) throw new Error(`hover probe: ${answer.error}`);
  return answer;
}
