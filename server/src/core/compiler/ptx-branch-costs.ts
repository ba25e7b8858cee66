/** Branch path costs counted in the compiled PTX (`nvcc -ptx -lineinfo`) instead of estimated from the syntax. */
import { finish, type Branch } from '../body/divergence';
import { countInstructionsInSpans, fileIdsFor, parsePtx, ptxEntriesFor, type PtxModule } from './ptx-line-costs';

/**
 * Replace syntax estimates with PTX instruction counts: for each branch of a
 * kernel found in the PTX, each path costs the instructions whose `.loc` falls
 * in its source. `filePath` names the analysed file as nvcc saw it. A branch
 * whose non-empty paths do not all map to instructions keeps its estimate.
 */
export function refineBranchesWithPtx(branches: readonly Branch[], ptx: PtxModule | string, filePath: string): Branch[] {
  const module = typeof ptx === 'string' ? parsePtx(ptx) : ptx;
  const fileIds = fileIdsFor(module, filePath);
  return branches.map((b) => {
    if (b.kind !== 'divergent' || fileIds.size === 0) return b;
    const entries = ptxEntriesFor(module, b.kernel);
    if (entries.length === 0) return b;
    const counts = b.paths.map((p) => (p.spans.length === 0 ? 0 : countInstructionsInSpans(entries, fileIds, p.spans)));
    if (b.paths.some((p, i) => p.spans.length > 0 && counts[i] === 0)) return b;
    const paths = b.paths.map((p, i) => ({ ...p, cost: counts[i] }));
    const assumptions = b.assumptions
      .filter((a) => !a.startsWith('path costs are estimates') && !a.startsWith('the loop at line'))
      .concat([`path costs are PTX instructions (nvcc -ptx -lineinfo) whose source location falls in each path, per warp and per pass; loops are counted once`]);
    const basis = b.split?.dataDependent ? 'data' : 'lanes';
    return finish({ ...b, paths, costSource: 'ptx', assumptions }, basis, !b.assumptions.some((a) => a.startsWith('no launch of')));
  });
}
