/** Small formatting helpers shared by hovers, lenses, messages and the CLI's text output. */
import { INT_MAX } from '../gpu/occupancy';

export function bytes(n: number): string {
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KB`;
  if (n >= 10 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${n} B`;
}

export function percent(fraction: number): string {
  const p = fraction * 100;
  return `${Number.isInteger(p) ? p : p.toFixed(1)}%`;
}

/** "1 block", "8 blocks": a count and its noun in agreement. */
export function counted(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

export function blocks(limit: number): string {
  return limit >= INT_MAX ? 'no limit' : `${limit} block${limit === 1 ? '' : 's'}`;
}

export function ago(producedAt: number | null | undefined, now: number): string | null {
  if (!producedAt) return null;
  const s = Math.max(0, Math.round((now - producedAt) / 1000));
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

/** "cuobjdump of kernels.cu.o", "device code of k.o", "build log build.log and 2 more files": where figures of a build came from. */
export function originText(origin: {
  kind: 'object' | 'log';
  path: string;
  files: number;
  via?: 'cuobjdump' | 'elf';
}): string {
  const name = origin.path.slice(origin.path.replace(/\\/g, '/').lastIndexOf('/') + 1);
  const more = origin.files > 1 ? ` and ${origin.files - 1} more file${origin.files === 2 ? '' : 's'}` : '';
  return `${origin.kind === 'log' ? 'build log' : origin.via === 'elf' ? 'device code of' : 'cuobjdump of'} ${name}${more}`;
}

export function dim3Text(d: { x: number; y: number; z: number }): string {
  if (d.y === 1 && d.z === 1) return `${d.x}`;
  if (d.z === 1) return `${d.x}×${d.y}`;
  return `${d.x}×${d.y}×${d.z}`;
}

export function listAnd(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

export function listOr(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

export const LIMIT_NAMES: Record<string, string> = {
  registers: 'registers',
  sharedMemory: 'shared memory',
  warps: 'warp slots',
  blocks: 'block slots',
  barriers: 'barriers',
  virtualResources: 'virtual resources',
};

/** Text for markdown outside code spans: `<` and `>` would otherwise be read as HTML (`k<float>` loses its arguments). */
export function mdText(text: string): string {
  return text.replace(/[\\<>*]/g, (c) => `\\${c}`);
}
