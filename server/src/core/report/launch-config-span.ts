/**
 * Where a launch's configuration is written: `<<<grid, block, smem, stream>>>`. The notes about the
 * configuration (a grid that leaves SMs idle, latency the resident warps do not cover) sit there and
 * not on the kernel's name, so that the hover on the name, which VS Code shows below the
 * diagnostics at the place, leads with the occupancy; hovering the configuration shows them.
 */
import type { Launch, Span } from '../types';
import { offsetAt, positionAt, type SourceText } from '../text/source-text';

/** The span of `<<<...>>>`, or the launch's whole span when it has none (an API call, a macro's use). */
export function launchConfigSpan(source: SourceText, launch: Launch): Span {
  if (launch.via !== 'chevrons') return launch.span;
  const from = offsetAt(source, launch.nameSpan.end);
  const to = offsetAt(source, launch.span.end);
  const masked = source.masked;
  const open = masked.indexOf('<<<', from);
  const close = open < 0 ? -1 : masked.indexOf('>>>', open + 3);
  if (open < 0 || close < 0 || close + 3 > to) return launch.span;
  return { start: positionAt(source, open), end: positionAt(source, close + 3) };
}
