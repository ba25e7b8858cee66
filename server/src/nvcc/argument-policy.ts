/**
 * What nvcc may be told to do. Pure: the caller resolves names on PATH and reads the allow-list.
 *
 * Two kinds of options are filtered out of every argument list before nvcc sees it:
 * - options that write outside the compile's temporary directory, run a program, or read more options from a
 *   file (`-o`, `-keep`, `-keep-dir`, `--run`, `-odir`, `-MF`, `--options-file`, ...): dropped whoever gave them,
 *   the user's own settings included, in every spelling (`-x`, `--x`, `-x=v`, `-x v`, attached `-ov`);
 * - options that name a program nvcc runs (`-ccbin`/`--compiler-bindir`), or hand options to the host
 *   compiler, which can name programs too (`-Xcompiler -B/dir`, `-forward-unknown-to-host-compiler`): from
 *   the workspace (compile_commands.json, workspace settings), dropped unless the program's absolute path
 *   matches the user's allow-list (`cudaOccupancy.nvcc.allowedCompilers`, the CLI's `--allow-compiler`).
 * And from every origin, options with a word a shell would read (`$(...)`, backticks, `;`, quotes, spaces): nvcc
 * pastes the source path and option values into the command lines of its own stages and runs them with
 * `/bin/sh -c`, some in double quotes and some bare (dropShellWords). Paths are not dropped: the compile reaches
 * them through links under plain names (staged-inputs.ts).
 * Every dropped option is reported, so that the caller can log one line for it.
 */
import * as path from 'node:path';

/** Who wrote an argument: the user (user settings, the CLI's own options), or the workspace. */
export type ArgumentOrigin = 'user settings' | 'workspace settings' | 'compile_commands.json';

export interface DroppedArgument {
  /** The option as written, with its value (`-ccbin /tmp/x/gcc`). */
  readonly text: string;
  readonly origin: ArgumentOrigin;
  readonly reason: string;
}

export interface ArgumentPolicy {
  /** Absolute-path globs of compilers the workspace may name (the user's allow-list). */
  readonly allowedCompilers: readonly string[];
  /** Where a bare program name (`g++-12`) is found on PATH, or null. */
  readonly findOnPath?: (name: string) => string | null;
}

/** Options (without their leading dashes) that write files outside the temporary directory, or run the program. */
const WRITES_OR_RUNS = new Set([
  'o',
  'output-file',
  'odir',
  'output-directory',
  'objtemp',
  'objdir-as-tempdir',
  'keep',
  'keep-dir',
  'save-temps',
  'run',
  'run-args',
  'MF',
  'MD',
  'MMD',
  'MT',
  'MQ',
  'MP',
  'M',
  'MM',
  'dependency-output',
  'dependency-target-name',
  'generate-dependency-targets',
  'generate-dependencies',
  'generate-nonsystem-dependencies',
  'generate-dependencies-with-compile',
  'generate-nonsystem-dependencies-with-compile',
  'optf',
  'options-file',
  // We never link: options for the linkers and the archiver only name files.
  'Xlinker',
  'linker-options',
  'Xnvlink',
  'nvlink-options',
  'Xarchive',
  'archive-options',
]);

/** Options that name a program nvcc runs: their value must match the allow-list. */
const NAMES_COMPILER = new Set(['ccbin', 'compiler-bindir']);

/** Options that pass options on to the host compiler (`-B DIR`, `-fplugin=`, `-wrapper` name programs): the user's only. */
const TO_HOST_COMPILER = new Set([
  'Xcompiler',
  'compiler-options',
  'forward-unknown-to-host-compiler',
  'forward-unknown-opts',
  'forward-unknown-to-host-linker',
  'Xcudafe',
  'cudafe-options',
]);

/** Options (of the sets above) whose value is the next argument when not written with `=` or attached. */
const TAKES_VALUE = new Set([
  'o',
  'output-file',
  'odir',
  'output-directory',
  'keep-dir',
  'run-args',
  'MF',
  'MT',
  'MQ',
  'dependency-output',
  'dependency-target-name',
  'optf',
  'options-file',
  'Xlinker',
  'linker-options',
  'Xnvlink',
  'nvlink-options',
  'Xarchive',
  'archive-options',
  'ccbin',
  'compiler-bindir',
  'Xcompiler',
  'compiler-options',
  'Xcudafe',
  'cudafe-options',
  'Xptxas',
  'ptxas-options',
]);

/** ptxas options that write a file (inside `-Xptxas a,b` / `--ptxas-options=a,b`). */
const PTXAS_WRITES = new Set(['o', 'output-file']);

/** nvcc options starting with `-o` that are not `-o` with its value attached. */
const OTHER_O_OPTIONS = new Set([
  'opt-info',
  'optimization-info',
  'optix-ir',
  'odir',
  'optf',
  'options-file',
  'output-file',
  'output-directory',
  'objtemp',
  'objdir-as-tempdir',
]);

interface Parsed {
  /** The option name without leading dashes. */
  name: string;
  /** Its value when written in the same argument (`=v` or attached), else null. */
  value: string | null;
}

function parseOption(arg: string): Parsed | null {
  const m = /^(-{1,2})([^=]*)(?:=(.*))?$/s.exec(arg);
  if (!m || m[2] === '') return null;
  const name = m[2];
  const value = m[3] ?? null;
  if (value === null && m[1] === '-') {
    // Attached values: `-o/x`, `-MF/x`, `-MTtarget`.
    if (name.length > 1 && name.startsWith('o') && !OTHER_O_OPTIONS.has(name) && !WRITES_OR_RUNS.has(name))
      return { name: 'o', value: name.slice(1) };
    const dependency = /^(MF|MT|MQ)(.+)$/.exec(name);
    if (dependency) return { name: dependency[1], value: dependency[2] };
  }
  return { name, value };
}

/** Whether `file` (absolute) matches one of `globs`: `*` and `?` stay within a path component, `**` crosses them. */
export function matchesAllowList(file: string, globs: readonly string[]): boolean {
  const wanted = normalizeForMatch(file);
  return globs.some(
    (glob) =>
      typeof glob === 'string' && glob.trim() !== '' && globToRegExp(normalizeForMatch(glob.trim())).test(wanted),
  );
}

function normalizeForMatch(p: string): string {
  const n = p.replace(/\\/g, '/');
  return process.platform === 'win32' ? n.toLowerCase() : n;
}

/** A glob as a regular expression over the whole path. Pure. */
export function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') {
      if (glob[i + 1] === '*' && glob[i + 2] === '/') {
        out += '(?:.*/)?';
        i += 2;
      } else if (glob[i + 1] === '*') {
        out += '.*';
        i++;
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const close = glob.indexOf(']', i + 2);
      if (close < 0) out += '\\[';
      else {
        const body = glob.slice(i + 1, close).replace(/\\/g, '\\\\');
        out += `[${body.startsWith('!') ? `^${body.slice(1)}` : body}]`;
        i = close;
      }
    } else out += /[\\^$.|+(){}]/.test(c) ? `\\${c}` : c;
  }
  return new RegExp(`^${out}$`, 's');
}

/**
 * A compiler path the workspace names, checked against the allow-list: the path resolved against `cwd` (a bare
 * name is looked up on PATH), or null when it may not run.
 */
export function allowedCompilerPath(value: string, cwd: string | null, policy: ArgumentPolicy): string | null {
  const trimmed = value.trim();
  if (!trimmed || trimmed.includes('\0')) return null;
  let absolute: string | null;
  if (!trimmed.includes('/') && !trimmed.includes('\\')) absolute = policy.findOnPath?.(trimmed) ?? null;
  else absolute = path.resolve(cwd ?? '/', trimmed);
  return absolute && matchesAllowList(absolute, policy.allowedCompilers) ? absolute : null;
}

/**
 * `args` with the options nvcc may not be given removed (see the file's comment), and what was removed.
 * `cwd` resolves relative compiler paths. Pure.
 */
export function applyArgumentPolicy(
  args: readonly string[],
  origin: ArgumentOrigin,
  policy: ArgumentPolicy,
  cwd: string | null = null,
): { args: string[]; dropped: DroppedArgument[] } {
  const kept: string[] = [];
  const dropped: DroppedArgument[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const parsed = typeof arg === 'string' ? parseOption(arg) : null;
    if (!parsed) {
      if (typeof arg === 'string' && arg.startsWith('@') && origin !== 'user settings') {
        dropped.push({ text: arg, origin, reason: 'a response file can hold any option' });
        continue;
      }
      if (typeof arg === 'string') kept.push(arg);
      continue;
    }
    const { name } = parsed;
    if (
      !WRITES_OR_RUNS.has(name) &&
      !NAMES_COMPILER.has(name) &&
      !TO_HOST_COMPILER.has(name) &&
      name !== 'Xptxas' &&
      name !== 'ptxas-options'
    ) {
      kept.push(arg);
      continue;
    }
    let value = parsed.value;
    let separate = false;
    if (value === null && TAKES_VALUE.has(name) && i + 1 < args.length) {
      value = args[++i];
      separate = true;
    }
    const written = separate ? [arg, value as string] : [arg];
    const text = written.join(' ');
    if (WRITES_OR_RUNS.has(name)) {
      dropped.push({
        text,
        origin,
        reason:
          name === 'run' || name === 'run-args'
            ? 'it runs the program'
            : name === 'optf' || name === 'options-file'
              ? 'it reads options from a file'
              : 'it writes files outside the temporary directory',
      });
      continue;
    }
    if (NAMES_COMPILER.has(name)) {
      if (origin === 'user settings') kept.push(...written);
      else {
        const allowed = value === null ? null : allowedCompilerPath(value, cwd, policy);
        if (allowed) kept.push(`--compiler-bindir=${allowed}`);
        else
          dropped.push({ text, origin, reason: 'the compiler it names is not in cudaOccupancy.nvcc.allowedCompilers' });
      }
      continue;
    }
    if (TO_HOST_COMPILER.has(name)) {
      if (origin === 'user settings') kept.push(...written);
      else dropped.push({ text, origin, reason: 'host compiler options can name programs to run' });
      continue;
    }
    // -Xptxas / --ptxas-options: kept unless one of the options it passes writes a file.
    const options = (value ?? '').split(',').map((o) => o.trim());
    if (options.some((o) => PTXAS_WRITES.has(/^-{1,2}([^=]*)/.exec(o)?.[1] ?? '') || /^-o\S/.test(o))) {
      dropped.push({ text, origin, reason: 'it writes files outside the temporary directory' });
      continue;
    }
    kept.push(...written);
  }
  const plain = dropShellWords(kept, origin);
  return { args: plain.args, dropped: [...dropped, ...plain.dropped] };
}

/**
 * A word that reads the same to a POSIX shell bare, in double quotes or in single quotes: the characters
 * Python's `shlex.quote` leaves unquoted. nvcc runs its stages (the host compiler, cicc, ptxas) with `sh -c`
 * and a command line it pastes the source path and option values into, so these are the only words it is given.
 */
const PLAIN_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;
/** A path nvcc may be given as it is: a plain word without nvcc's list separator `,`, nor `=`, `:`, `@`, `%`. */
const PLAIN_PATH = /^[A-Za-z0-9_./+-]+$/;

/** Whether nvcc (and the shell it runs its stages with) may be given `word` as it is. */
export function isPlainWord(word: string): boolean {
  return PLAIN_WORD.test(word);
}

/** Whether a path may reach nvcc as it is (else it is reached through a link: staged-inputs.ts). */
export function isPlainPath(file: string): boolean {
  return PLAIN_PATH.test(file);
}

/**
 * nvcc options (without leading dashes) whose value may be the next argument (nvcc 13's `--help`): a dropped
 * option takes its value with it, so that the value is never read as an option or an input.
 */
const NVCC_TAKES_VALUE = new Set([
  ...TAKES_VALUE,
  ...['pre-include', 'include', 'library', 'l', 'define-macro', 'D', 'undefine-macro', 'U', 'include-path', 'I'],
  ...['system-include', 'isystem', 'library-path', 'L', 'archiver-binary', 'arbin', 'libdevice-directory', 'ldir'],
  ...['target-directory', 'target-dir', 'optimization-info', 'opt-info', 'optimize', 'O', 'Ofast-compile', 'Ofc'],
  ...['dopt', 'ftemplate-backtrace-limit', 'ftemplate-depth', 'threads', 't', 'split-compile'],
  ...['split-compile-extended', 'fdevice-time-trace', 'time', 'input-drive-prefix', 'idp'],
  ...['dependency-drive-prefix', 'ddp', 'drive-prefix', 'dp', 'gpu-architecture', 'arch', 'gpu-code', 'code'],
  ...['generate-code', 'gencode', 'maxrregcount', 'Werror', 'diag-error', 'diag-suppress', 'diag-warn'],
  ...['jump-table-density', 'jtd', 'frandom-seed', 'sanitize', 'cudart', 'cudadevrt', 'x', 'std', 'machine', 'm'],
  ...['static-global-template-stub', 'device-entity-has-hidden-visibility', 'relocatable-device-code', 'rdc'],
  ...['entries', 'e', 'ftz', 'prec-div', 'prec-sqrt', 'fmad', 'default-stream', 'host-linker-script', 'hls'],
  ...['brief-diagnostics', 'brief-diag', 'device-stack-protector', 'compress-mode'],
]);

/** Options whose value is a folder (nvcc's lists: several, comma-separated) or a file to include. */
export const DIRECTORY_OPTIONS = new Set(['I', 'include-path', 'isystem', 'system-include']);
export const FILE_OPTIONS = new Set(['include', 'pre-include']);

/** The reason given for an option dropped by dropShellWords. */
export const SHELL_WORD_REASON =
  'it holds a character a shell would interpret, and nvcc runs its compiler stages through /bin/sh';

/** One option of an argument list as nvcc reads it, from `args[index]` on. */
export interface NvccOption {
  /** The option's name without dashes (`I`, `include-path`), or null for an argument that is not an option. */
  readonly name: string | null;
  /** How it is written: `-x v` (separate), `-x=v` (equals), `-Iv` (attached), `-x` alone (bare), or not an option. */
  readonly form: 'separate' | 'equals' | 'attached' | 'bare' | 'positional';
  /** The option as written, up to its value (`-I`, `--include-path=`), or the whole argument. */
  readonly head: string;
  readonly value: string | null;
  /** The arguments it spans (1, or 2 for a separate value). */
  readonly span: number;
}

/** Reads the option at `args[index]`: `-x v`, `-x=v`, `-Iv`, or a word alone. Pure. */
export function nvccOptionAt(args: readonly string[], index: number): NvccOption {
  const arg = args[index];
  if (!arg.startsWith('-') || arg === '-') return { name: null, form: 'positional', head: arg, value: null, span: 1 };
  const equals = /^(-{1,2})([^=]+)=(.*)$/s.exec(arg);
  if (equals && NVCC_TAKES_VALUE.has(equals[2]))
    return { name: equals[2], form: 'equals', head: `${equals[1]}${equals[2]}=`, value: equals[3], span: 1 };
  const attached = /^-I(.+)$/s.exec(arg);
  if (attached) return { name: 'I', form: 'attached', head: '-I', value: attached[1], span: 1 };
  const name = arg.replace(/^-{1,2}/, '');
  if (NVCC_TAKES_VALUE.has(name) && index + 1 < args.length)
    return { name, form: 'separate', head: arg, value: args[index + 1], span: 2 };
  return { name, form: 'bare', head: arg, value: null, span: 1 };
}

/** Whether an option's value is a path the compile stages (DIRECTORY_OPTIONS, FILE_OPTIONS). */
export function isPathOption(option: NvccOption): boolean {
  return (
    option.name !== null &&
    option.value !== null &&
    (DIRECTORY_OPTIONS.has(option.name) || FILE_OPTIONS.has(option.name))
  );
}

/**
 * `args` less the options with a word that is not plain (isPlainWord), each reported with its value. The value of a
 * path option (`-I`, `-isystem`, `-include` and their long forms, `-I/x` too) passes whatever it holds when
 * `paths` is 'staged' (the compile gives nvcc a link under a plain name instead: staged-inputs.ts); with
 * 'checked' it must be plain too. Pure.
 */
export function dropShellWords(
  args: readonly string[],
  origin: ArgumentOrigin,
  paths: 'staged' | 'checked' = 'staged',
): { args: string[]; dropped: DroppedArgument[] } {
  const kept: string[] = [];
  const dropped: DroppedArgument[] = [];
  for (let i = 0; i < args.length;) {
    const option = nvccOptionAt(args, i);
    const written = args.slice(i, i + option.span);
    i += option.span;
    const head = option.form === 'equals' ? option.head.slice(0, -1) : option.head;
    const value = option.value;
    const valueOk =
      value === null ||
      (paths === 'staged' && isPathOption(option) ? value !== '' && !value.includes('\0') : isPlainWord(value));
    if (isPlainWord(head) && valueOk) kept.push(...written);
    else dropped.push({ text: written.join(' '), origin, reason: SHELL_WORD_REASON });
  }
  return { args: kept, dropped };
}

/** One log line for a dropped option. */
export function droppedLine(d: DroppedArgument): string {
  return `dropped nvcc option \`${d.text}\` from ${d.origin}: ${d.reason}`;
}
