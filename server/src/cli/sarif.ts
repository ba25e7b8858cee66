/**
 * `cuda-occupancy check --format sarif`: the findings of a `check --format json` object as a
 * SARIF 2.1.0 log, for GitHub code scanning and other SARIF viewers. Pure: works on the JSON
 * object only, so it follows the contract rather than the analysis internals.
 */
import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CheckJson, CheckJsonDiagnostic, CheckJsonFile } from './check-json-types';
import { knownRules, levelOf, ruleFor, type RuleInfo } from './rule-catalog';

export const SARIF_SCHEMA_URI =
  'https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json';
/** Mirrors package.json's repository. */
export const SRCROOT = '%SRCROOT%';

export interface SarifOptions {
  /** The tool's version (package.json's). */
  toolVersion: string;
  /** Absolute directory the check's file paths are relative to; it becomes %SRCROOT%. */
  baseDir: string;
  informationUri?: string;
}

export function toSarif(check: CheckJson, options: SarifOptions): object {
  const rules: RuleInfo[] = [...knownRules()];
  const ruleIndex = new Map(rules.map((rule, index) => [rule.id, index]));
  const indexOf = (diagnostic: CheckJsonDiagnostic): number => {
    let index = ruleIndex.get(diagnostic.code);
    if (index === undefined) {
      index = rules.push(ruleFor(diagnostic.code, levelOf(diagnostic.severity))) - 1;
      ruleIndex.set(diagnostic.code, index);
    }
    return index;
  };
  const results = check.files.flatMap((file) => sarifResults(file, options.baseDir, indexOf));
  return sarifLog(rules, results, check.archs, options);
}

/**
 * One file's results; `indexOf` says where a diagnostic's rule is in the log's rules (undefined:
 * the result names its rule by id alone).
 */
export function sarifResults(
  file: CheckJsonFile,
  baseDir: string,
  indexOf: (diagnostic: CheckJsonDiagnostic) => number | undefined,
): object[] {
  const artifactLocation = artifactFor(file.path, path.resolve(baseDir));
  const seen = new Map<string, number>();
  return file.diagnostics.map((diagnostic) => {
    const index = indexOf(diagnostic);
    const identity = `${diagnostic.code}\u0000${file.path.replace(/\\/g, '/')}\u0000${diagnostic.message}`;
    const ordinal = seen.get(identity) ?? 0;
    seen.set(identity, ordinal + 1);
    return {
      ruleId: diagnostic.code,
      ...(index !== undefined ? { ruleIndex: index } : {}),
      level: levelOf(diagnostic.severity),
      message: { text: diagnostic.message },
      locations: [
        {
          physicalLocation: {
            artifactLocation,
            region: { startLine: Math.max(1, diagnostic.line), startColumn: Math.max(1, diagnostic.column) },
          },
        },
      ],
      // Stable across edits that move code: rule, file, message and which repeat of it, no line.
      partialFingerprints: { 'cudaOccupancyFinding/v1': fingerprint(`${identity}\u0000${ordinal}`) },
    };
  });
}

/** The log around `results`, with `rules` as the tool's. */
export function sarifLog(
  rules: readonly RuleInfo[],
  results: object[],
  archs: readonly string[],
  options: SarifOptions,
): object {
  const baseDir = path.resolve(options.baseDir);
  return {
    $schema: SARIF_SCHEMA_URI,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'cuda-occupancy',
            ...(options.informationUri ? { informationUri: options.informationUri } : {}),
            version: options.toolVersion,
            ...(/^\d+\.\d+\.\d+/.test(options.toolVersion) ? { semanticVersion: options.toolVersion } : {}),
            rules: rules.map(ruleDescriptor),
          },
        },
        originalUriBaseIds: { [SRCROOT]: { uri: directoryUri(baseDir) } },
        results,
        columnKind: 'utf16CodeUnits',
        properties: { archs },
      },
    ],
  };
}

function ruleDescriptor(rule: RuleInfo): object {
  return {
    id: rule.id,
    name: rule.name,
    shortDescription: { text: rule.short },
    fullDescription: { text: rule.full },
    help: {
      text: `${plain(rule.full)}\n\nHow to fix: ${plain(rule.fix)}`,
      markdown: `${rule.full}\n\n**How to fix:** ${rule.fix}`,
    },
    defaultConfiguration: { level: rule.level },
    properties: {
      tags: rule.tags,
      precision: rule.tags.includes('baseline') || rule.tags.includes('correctness') ? 'very-high' : 'high',
    },
  };
}

/** A file inside baseDir as a relative URI against %SRCROOT%; one outside it as an absolute file URI. */
function artifactFor(filePath: string, baseDir: string): { uri: string; uriBaseId?: string } {
  const absolute = path.resolve(baseDir, filePath);
  const relative = path.relative(baseDir, absolute);
  if (relative && !relative.startsWith('..') && !path.isAbsolute(relative)) {
    return { uri: relative.split(path.sep).map(encodeURIComponent).join('/'), uriBaseId: SRCROOT };
  }
  return { uri: pathToFileURL(absolute).href };
}

function directoryUri(dir: string): string {
  const href = pathToFileURL(dir).href;
  return href.endsWith('/') ? href : `${href}/`;
}

/** Markdown code spans and emphasis as plain text. */
function plain(markdown: string): string {
  return markdown.replace(/`([^`]*)`/g, '$1').replace(/\*\*([^*]*)\*\*/g, '$1');
}

function fingerprint(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}
