/** Paths as the core keeps them: `/`-separated strings, with `.` and `..` resolved; nothing here touches a disk. */

export function normalizePath(p: string): string {
  const slashed = p.replace(/\\/g, '/');
  const absolute = slashed.startsWith('/');
  // A Windows drive (`C:/`) stays the first component.
  const parts: string[] = [];
  for (const part of slashed.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length > 0 && parts[parts.length - 1] !== '..' && !/^[A-Za-z]:$/.test(parts[parts.length - 1]))
        parts.pop();
      else if (!absolute) parts.push('..');
      continue;
    }
    parts.push(part);
  }
  return (absolute ? '/' : '') + parts.join('/');
}

/** The last component of a path (`kernels/softmax.cu` → `softmax.cu`). */
export function fileName(p: string): string {
  return p.replace(/^.*[\\/]/, '');
}

export function dirname(p: string): string {
  const k = p.lastIndexOf('/');
  return k < 0 ? '.' : k === 0 ? '/' : p.slice(0, k);
}

export function joinPath(dir: string, rel: string): string {
  if (rel.startsWith('/') || /^[A-Za-z]:[\\/]/.test(rel)) return normalizePath(rel);
  return normalizePath(`${dir}/${rel}`);
}

/** The number of leading path components two paths share. */
export function commonDepth(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  let k = 0;
  while (k < x.length && k < y.length && x[k] === y[k]) k++;
  return k;
}
