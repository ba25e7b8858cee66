/** `cuda-occupancy check FILE_OR_DIR...`: the editor's analysis for terminals and CI. */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { UsageError, type CliIO } from './cli-io';
import { parseArgs } from './args';
import { collectSourceFiles } from './source-files';
import { checkJson, type CheckFile } from './check-json';
import { checkText } from './check-text';
import { createCudaParser } from '../core/cuda-parser';
import { readGrammarBytes } from '../grammar-files';
import { analyzeDocument } from '../core/analyze-document';
import { buildDocumentReport } from '../features/document-report';
import { documentFindings } from '../features/diagnostics';
import { resolveArchs } from '../core/launch-analysis';
import { FiguresRegistry } from '../figures-registry';
import type { Severity } from '../core/types';

const FLAGS = {
  '--arch': 'string',
  '--format': 'string',
  '--nvcc': 'string',
  '--no-nvcc': 'boolean',
  '-p': 'string',
  '--ptxas-log': 'string',
  '--fail-on': 'string',
  '--help': 'boolean',
} as const;

export const CHECK_USAGE = `usage: cuda-occupancy check [--arch sm_80,sm_90] [--format text|json] [--nvcc PATH | --no-nvcc] [-p DIR] [--ptxas-log FILE] [--fail-on error|warning|never] FILE_OR_DIR...`;

const RANK: Record<Severity, number> = { error: 3, warning: 2, info: 1, hint: 0 };

export async function checkCommand(args: string[], io: CliIO): Promise<number> {
  const { flags, positional } = parseArgs(args, { ...FLAGS }, { '-h': '--help' });
  if (flags['--help']) {
    io.out(CHECK_USAGE + '\n');
    return 0;
  }
  const format = (flags['--format'] as string | undefined) ?? 'text';
  if (!['text', 'json'].includes(format)) throw new UsageError(`--format must be text or json, got ${format}`);
  const failOn = (flags['--fail-on'] as string | undefined) ?? 'error';
  if (!['error', 'warning', 'never'].includes(failOn)) throw new UsageError(`--fail-on must be error, warning or never, got ${failOn}`);
  if (positional.length === 0) throw new UsageError(`no files given\n${CHECK_USAGE}`);
  const requested = typeof flags['--arch'] === 'string' ? (flags['--arch'] as string).split(',').map((s) => s.trim()).filter(Boolean) : ['sm_80'];
  const { archs, unknown } = resolveArchs(requested);
  if (unknown.length) throw new UsageError(`unknown architecture ${unknown.join(', ')} (use e.g. sm_80, sm_90a, 9.0)`);

  const files = collectSourceFiles(positional, io.cwd);
  const parser = await createCudaParser(readGrammarBytes());
  const figures = new FiguresRegistry();
  const checked: CheckFile[] = [];
  for (const file of files) {
    const text = readSource(file, io.cwd);
    const tree = parser.parse(text);
    try {
      const facts = analyzeDocument({ uri: file, version: 1, text, tree });
      const report = buildDocumentReport({ facts, archs, figuresFor: figures.figuresFor, findings: documentFindings });
      checked.push({ path: path.relative(io.cwd, file) || file, report });
    } finally {
      tree.delete();
    }
  }
  parser.dispose();

  io.out(format === 'json' ? JSON.stringify(checkJson(archs, checked), null, 2) + '\n' : checkText(archs, checked, io.cwd));
  if (failOn === 'never') return 0;
  const worst = Math.max(-1, ...checked.flatMap((f) => f.report.findings.map((x) => RANK[x.severity])));
  return worst >= RANK[failOn as Severity] ? 1 : 0;
}

function readSource(file: string, cwd: string): string {
  let buffer: Buffer;
  try {
    buffer = readFileSync(file);
  } catch (error) {
    throw new UsageError(`cannot read ${path.relative(cwd, file) || file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  if (buffer.subarray(0, 8000).includes(0)) throw new UsageError(`${path.relative(cwd, file) || file} is not a text file`);
  return buffer.toString('utf8');
}
