/**
 * When nvcc fails for a file: what the user is told, where they look (the hover's figures line,
 * the status bar, one diagnostic at the top of the file), with nvcc's first error in short and
 * what to set so the next compile works: include folders for a missing header, macros for an
 * undefined name, a `compile_commands.json` in general. The setting names depend on the surface
 * (the editor's settings, the CLI's flags). Pure.
 */
import type { Finding, Span } from '../types';

/** nvcc's first error, as the adapter found it in its output. */
export interface CompileError {
  /** The line as the compiler printed it. */
  text: string;
  /** The message without file and position. */
  message: string;
  file: string | null;
  /** 1-based, or null. */
  line: number | null;
}

/** Where the figures are shown: the editor (settings) or the CLI (flags). */
export type Surface = 'editor' | 'cli';

export interface FailureText {
  /** nvcc's error in short: "`cublas_v2.h`: no such file". */
  summary: string;
  /** What to set, or null when nothing would help (nvcc was stopped). */
  hint: string | null;
}

const SETTINGS: Record<
  Surface,
  { includes: string; defines: string; database: string; args: string; timeout: string; archs: string }
> = {
  editor: {
    includes: '`cudaOccupancy.nvcc.includePaths`',
    defines: '`cudaOccupancy.nvcc.defines`',
    database: 'a `compile_commands.json` (`cudaOccupancy.compileCommandsDir`)',
    args: '`cudaOccupancy.nvcc.args`',
    timeout: '`cudaOccupancy.nvcc.timeoutSeconds`',
    archs: '`cudaOccupancy.architectures`',
  },
  cli: {
    includes: '`-I DIR`',
    defines: '`-D NAME=VALUE`',
    database: "`-p DIR` with the build's `compile_commands.json`",
    args: 'nvcc arguments after `--`',
    timeout: '`--timeout SECONDS`',
    archs: '`--arch`',
  },
};

export function describeCompileFailure(error: CompileError | null, surface: Surface): FailureText {
  const s = SETTINGS[surface];
  const message = error?.message ?? error?.text ?? 'nvcc failed';
  const missing =
    /cannot open source file "([^"]+)"/.exec(message) ??
    /^([^:\s]+(?:\.\w+)?): No such file or directory/.exec(message);
  if (missing)
    return {
      summary: `\`${missing[1]}\`: no such file`,
      hint: `set ${s.includes} to the folder that holds it, or use ${s.database}`,
    };
  const undefinedName = /identifier "([^"]+)" is undefined/.exec(message) ?? /'([^']+)' was not declared/.exec(message);
  if (undefinedName)
    return {
      summary: `\`${undefinedName[1]}\` is undefined`,
      hint: `if the build defines it or includes its header, set ${s.defines} or ${s.includes}, or use ${s.database}`,
    };
  if (/did not finish within/.test(message)) return { summary: message, hint: `raise ${s.timeout}` };
  if (/unsupported gpu architecture|is not defined for option 'gpu-name'/i.test(message))
    return { summary: message, hint: `this nvcc does not compile for it: choose others in ${s.archs}` };
  if (/^cancelled$/.test(message)) return { summary: message, hint: null };
  return {
    summary: short(message),
    hint: `if the build compiles it with other flags, set ${s.includes}, ${s.defines} or ${s.args}, or use ${s.database}`,
  };
}

/** The one diagnostic at the top of a file whose compile failed (or, for a header, the compiles of the files that include it). */
export function compileFailureFinding(input: {
  error: CompileError | null;
  text: FailureText;
  firstLine: Span;
  unit: string | null;
  relatedPath?: (file: string) => string | null;
}): Finding {
  const { error, text } = input;
  const where = input.unit ? ` (compiling ${baseName(input.unit)})` : '';
  const file = error?.file && input.relatedPath ? input.relatedPath(error.file) : null;
  return {
    code: 'nvcc-failed',
    severity: 'info',
    message: `nvcc failed${where}, so register figures are missing: ${short(error?.text ?? text.summary)}${text.hint ? `. To fix it, ${text.hint}.` : '.'}`,
    span: input.firstLine,
    related:
      file && error?.line
        ? [
            {
              uri: file,
              span: { start: { line: error.line - 1, character: 0 }, end: { line: error.line - 1, character: 0 } },
              message: `nvcc: ${short(error.message)}`,
            },
          ]
        : [],
  };
}

function short(text: string): string {
  const t = text.trim();
  return t.length > 240 ? `${t.slice(0, 237)}...` : t;
}

function baseName(path: string): string {
  return path.slice(path.replace(/\\/g, '/').lastIndexOf('/') + 1);
}

/**
 * A `.cu` file nvcc is clearly not meant to compile on its own: kernel source that a program
 * compiles at run time (NVRTC, cuModuleLoadData after prepending its own definitions), as
 * OpenMM's kernels are. It includes nothing and has no host code (no launch, no runtime or driver
 * API call, no `main`), so the names it uses come from elsewhere. Its failed compile is not shown.
 */
export function looksCompiledAtRunTime(text: string): boolean {
  if (/^[ \t]*#[ \t]*include\b/m.test(text)) return false;
  if (!/__global__/.test(text)) return false;
  return !/<<<|\bmain\s*\(|\bcu(?:da)?[A-Z]\w*\s*\(/.test(text);
}
