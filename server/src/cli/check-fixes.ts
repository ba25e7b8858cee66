/**
 * `check --check-fixes`: each register cap the fixes propose (`__launch_bounds__(threads, blocks)` on
 * a kernel, `-maxrregcount=N` for the file) compiled by ptxas, as the editor checks them
 * (nvcc/compile-variant.ts: a copy in the temp dir with the fix, the unit's flags, one cache for the
 * run), after the units' own figures; then `launches[].nextSteps` in the JSON and a line per cap in
 * the text say what ptxas did.
 */
import * as path from 'node:path';
import {
  capCheckText,
  checkedOccupancy,
  registerCaps,
  type Analyzer,
  type DocumentFacts,
  type DocumentReport,
} from '../core/analyzer';
import { compileVariant } from '../nvcc/compile-variant';
import type { CompileCommand } from '../nvcc/compile-commands';
import { unitCompileFlags } from './check-analysis';
import { ResourceCache } from '../nvcc/resource-cache';
import { isValidArchFigures } from '../nvcc/cache-validation';
import type { ArchFigures } from '../nvcc/compile-resources';
import type { ArgumentPolicy } from '../nvcc/argument-policy';
import type { LaunchAnalysis } from '../core/analyzer';

export interface CheckFixesInput {
  units: Array<{ file: string; text: string; facts: DocumentFacts }>;
  analyzer: Analyzer;
  nvccPath: string;
  archs: string[];
  database: CompileCommand[] | null;
  extraFlags: string[];
  policy: ArgumentPolicy;
  timeoutMs: number;
  memoryLimitBytes: number;
  /** Per file, the folders its compile found for headers nvcc could not open (found-includes.ts). */
  foundFolders?: ReadonlyMap<string, readonly string[]>;
}

/** Compiles every unit's caps, one after another, and hands ptxas's figures to the analyzer; returns the notes for stderr. */
export async function checkFixes({
  units,
  analyzer,
  nvccPath,
  archs,
  database,
  extraFlags,
  policy,
  timeoutMs,
  memoryLimitBytes,
  foundFolders,
}: CheckFixesInput): Promise<string[]> {
  const cache = new ResourceCache<ArchFigures>({ dir: null, validate: (v): v is ArchFigures => isValidArchFigures(v) });
  const notes: string[] = [];
  for (const { file, text, facts } of units) {
    const report = analyzer.reportOf(facts);
    const variants = analyzer.capVariants(report);
    if (variants.length === 0) continue;
    const flags = unitCompileFlags(analyzer, { database, extraFlags, policy }, file, foundFolders);
    for (const variant of variants) {
      const result = await compileVariant({
        nvccPath,
        filePath: file,
        text: variant.text,
        extraFlags: variant.flags,
        archs,
        flags: flags.flags,
        cwd: flags.cwd ?? path.dirname(file),
        timeoutMs,
        cache,
        memoryLimitBytes,
      });
      if (result.status === 'missing') return notes;
      if (result.status !== 'ok')
        notes.push(
          `${file}: checking ${variant.fix} for ${variant.kernel.name}: nvcc ${result.status}${result.firstError ? `: ${result.firstError.text}` : ''}`,
        );
      analyzer.setCapCheck(
        file,
        text,
        variant,
        result.status === 'ok'
          ? { state: 'done', entries: result.entries }
          : { state: 'failed', message: result.firstError?.text ?? `nvcc ${result.status}` },
      );
    }
  }
  return notes;
}

/** `launches[].nextSteps`: each register cap the launch's fixes propose, and what ptxas did with it per architecture (null: not checked). */
export function nextStepsJson(report: DocumentReport, analysis: LaunchAnalysis) {
  return registerCaps(report)
    .filter((c) => c.analysis === analysis)
    .map(({ cap, arch }) => {
      const p = analysis.perArch.find((x) => x.arch === arch);
      const check = report.capChecks.get(cap.key);
      return {
        kind: cap.kind,
        fix: cap.fix,
        arch,
        maxRegsPerThread: p?.atRegisterCap?.numRegs ?? null,
        activeBlocksPerMultiprocessor: p?.atRegisterCap?.activeBlocks ?? null,
        occupancy: p?.atRegisterCap?.occupancy ?? null,
        checked: checkedOccupancy(analysis, check),
        checkFailed: check?.state === 'failed' ? check.message : null,
      };
    });
}

/** "    next step __launch_bounds__(256, 5) (sm_80): ptxas: 48 registers, no spills → 62.5%", for the checked caps. */
export function nextStepLines(report: DocumentReport, analysis: LaunchAnalysis): string[] {
  if (report.capChecks.size === 0) return [];
  return registerCaps(report)
    .filter((c) => c.analysis === analysis)
    .flatMap(({ cap, arch }) => {
      const text = capCheckText(analysis, arch, report.capChecks.get(cap.key));
      return text ? [`    next step ${cap.fix} (${arch}): ${text}`] : [];
    });
}
