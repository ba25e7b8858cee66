/**
 * The flags a file is really built with: its `compile_commands.json` entry, reduced to the flags that
 * change what ptxas sees (includes, macros, language standard, device-code options), or else the
 * flags from settings. Outputs, dependency files, architectures and the source itself are dropped;
 * the architectures the build names are returned so the UI can default to them.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import {
  applyArgumentPolicy,
  dropShellWords,
  type ArgumentOrigin,
  type ArgumentPolicy,
  type DroppedArgument,
} from './argument-policy';
import { readBoundedFile } from '../files/bounded-read';

export interface CompileCommand {
  /** The working directory of the compile. */
  readonly directory: string;
  /** The source file, absolute. */
  readonly file: string;
  /** The compile as an argument vector (from `arguments`, or `command` split like a POSIX shell). */
  readonly arguments: readonly string[];
}

export interface CompileFlags {
  /** Flags to pass to nvcc before our own `-arch`, `-Xptxas -v` and output options. */
  readonly flags: string[];
  /** Architectures the build compiles for (`sm_80`, `sm_90a`), in order, without duplicates. */
  readonly archs: string[];
  /** Directory to run nvcc in. */
  readonly cwd: string | null;
  readonly origin: 'compile_commands' | 'settings';
  /** Options the argument policy removed (see argument-policy.ts), for one log line each. */
  readonly dropped?: readonly DroppedArgument[];
}

export interface FlagSettings {
  readonly includePaths?: readonly string[];
  readonly defines?: readonly string[];
  readonly nvccArgs?: readonly string[];
  /** `c++17`, `17` or `-std=c++17`. */
  readonly std?: string;
}

const DATABASE = 'compile_commands.json';
const MAX_DATABASE_BYTES = 64 * 1024 * 1024;

/**
 * Where compile_commands.json is: the configured directory if set (only there), else each workspace
 * root, then its `build/`. Returns the first that exists, or null.
 */
export async function findCompileCommandsFile(options: {
  workspaceRoots: readonly string[];
  configuredDir?: string | null;
}): Promise<string | null> {
  const candidates: string[] = [];
  if (options.configuredDir) {
    for (const root of options.workspaceRoots.length ? options.workspaceRoots : [process.cwd()]) {
      candidates.push(path.resolve(root, options.configuredDir, DATABASE));
    }
  } else {
    for (const root of options.workspaceRoots)
      candidates.push(path.join(root, DATABASE), path.join(root, 'build', DATABASE));
  }
  for (const candidate of candidates) {
    try {
      if ((await fs.stat(candidate)).isFile()) return candidate;
    } catch {
      // not there
    }
  }
  return null;
}

/**
 * Reads and validates a compilation database: a regular file of at most `maxBytes` (default 64 MiB). Throws
 * with a one-line message on unreadable, special, oversized or invalid input.
 */
export async function loadCompileCommands(file: string, maxBytes = MAX_DATABASE_BYTES): Promise<CompileCommand[]> {
  const read = await readBoundedFile(file, { maxBytes, what: 'compile_commands.json' });
  return parseCompileCommands(read.text, path.dirname(file));
}

/** Parses the JSON text of a compilation database; entries that are not well-formed are skipped. Pure. */
export function parseCompileCommands(text: string, databaseDir: string): CompileCommand[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new Error(`compile_commands.json is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (!Array.isArray(data)) throw new Error('compile_commands.json is not a JSON array');
  const out: CompileCommand[] = [];
  for (const item of data) {
    if (!item || typeof item !== 'object') continue;
    const { directory, file, command, arguments: args } = item as Record<string, unknown>;
    if (typeof file !== 'string' || file.length === 0) continue;
    const dir = typeof directory === 'string' && directory ? path.resolve(databaseDir, directory) : databaseDir;
    let argv: string[] | null = null;
    if (Array.isArray(args) && args.every((a) => typeof a === 'string')) argv = args as string[];
    else if (typeof command === 'string') argv = splitCommandLine(command);
    if (!argv || argv.length === 0) continue;
    out.push({ directory: dir, file: path.resolve(dir, file), arguments: argv });
  }
  return out;
}

/** The entry for a file (the last one when several compile it), matched on the resolved path. */
export function findCompileCommand(database: readonly CompileCommand[], filePath: string): CompileCommand | null {
  const wanted = normalizePath(path.resolve(filePath));
  for (let i = database.length - 1; i >= 0; i--) if (normalizePath(database[i].file) === wanted) return database[i];
  return null;
}

function normalizePath(p: string): string {
  const n = path.normalize(p);
  return process.platform === 'win32' || process.platform === 'darwin' ? n.toLowerCase() : n;
}

/** Splits a command line like a POSIX shell would (quotes and backslashes), without expanding anything. Pure. */
export function splitCommandLine(command: string): string[] {
  const args: string[] = [];
  let current = '';
  let inArg = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote === "'") {
      if (c === "'") quote = null;
      else current += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && i + 1 < command.length && '"\\$`\n'.includes(command[i + 1])) current += command[++i];
      else current += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inArg = true;
    } else if (c === '\\' && i + 1 < command.length) {
      current += command[++i];
      inArg = true;
    } else if (/\s/.test(c)) {
      if (inArg) args.push(current);
      current = '';
      inArg = false;
    } else {
      current += c;
      inArg = true;
    }
  }
  if (inArg) args.push(current);
  return args;
}

/** Flags that take a value in the next argument (or glued with `=`), and are kept. */
const KEEP_WITH_VALUE = new Set([
  '-I',
  '--include-path',
  '-isystem',
  '-D',
  '--define-macro',
  '-U',
  '--undefine-macro',
  '-include',
  '--pre-include',
  '-std',
  '--std',
  '-maxrregcount',
  '--maxrregcount',
  '-Xptxas',
  '--ptxas-options',
  '-ccbin',
  '--compiler-bindir',
  '--default-stream',
  '-default-stream',
  '-rdc',
  '--relocatable-device-code',
  '-ftz',
  '--ftz',
  '-prec-div',
  '--prec-div',
  '-prec-sqrt',
  '--prec-sqrt',
  '-fmad',
  '--fmad',
  '-x',
  '--x',
  '-iquote',
  '-idirafter',
]);
/** Kept flags that take no value. */
const KEEP_BARE = new Set([
  '--expt-relaxed-constexpr',
  '-expt-relaxed-constexpr',
  '--expt-extended-lambda',
  '-expt-extended-lambda',
  '--extended-lambda',
  '-extended-lambda',
  '-G',
  '--device-debug',
  '-lineinfo',
  '--generate-line-info',
  '--use_fast_math',
  '-use_fast_math',
  '-dc',
  '--device-c',
  '-restrict',
  '--restrict',
  '-dopt',
  '--dopt',
  '-allow-unsupported-compiler',
  '--allow-unsupported-compiler',
  '-Wno-deprecated-gpu-targets',
]);
/** Dropped flags that take a value (which is dropped too). */
const DROP_WITH_VALUE = new Set([
  '-o',
  '--output-file',
  '-MF',
  '-MT',
  '-MQ',
  '--dependency-output',
  '--dependency-target-name',
  '-arch',
  '--gpu-architecture',
  '-code',
  '--gpu-code',
  '-gencode',
  '--generate-code',
  '-Xcompiler',
  '--compiler-options',
  '-Xlinker',
  '--linker-options',
  '-Xcudafe',
  '-Xnvlink',
  '--nvlink-options',
  '-Xarchive',
  '-optf',
  '--options-file',
  '-odir',
  '--output-directory',
  '-t',
  '--threads',
  '-l',
  '--library',
  '-L',
  '--library-path',
  '--keep-dir',
  '-keep-dir',
  '-split-compile',
  '--split-compile',
  '--cuda-gpu-arch',
  '--offload-arch',
  '-target',
  '--target',
]);
const ARCH_FLAGS = new Set([
  '-arch',
  '--gpu-architecture',
  '-code',
  '--gpu-code',
  '-gencode',
  '--generate-code',
  '--cuda-gpu-arch',
  '--offload-arch',
]);
/** Resolved against the command's directory. (A compiler path is resolved by the argument policy, which checks it.) */
const PATH_FLAGS = new Set(['-I', '--include-path', '-isystem', '-include', '--pre-include', '-iquote', '-idirafter']);

/**
 * Reduces a compile command to the nvcc flags worth keeping, resolving relative paths against the
 * command's directory. `-dc` becomes `-rdc=true`. Pure.
 */
export function extractNvccFlags(command: CompileCommand): CompileFlags {
  const flags: string[] = [];
  const archs: string[] = [];
  const argv = command.arguments;
  // Skip launchers (ccache) and the compiler itself: everything up to the first argument starting with '-'.
  let i = 0;
  while (i < argv.length && !argv[i].startsWith('-')) i++;

  for (; i < argv.length; i++) {
    const arg = argv[i];
    // Positional arguments: the source file (we pass it ourselves) and other inputs, which do not
    // concern the device compilation of this file.
    if (!arg.startsWith('-')) continue;
    const { name, value, glued } = splitFlag(arg);
    const takesValue = KEEP_WITH_VALUE.has(name) || DROP_WITH_VALUE.has(name);
    let flagValue = value;
    if (takesValue && flagValue === null) {
      if (i + 1 >= argv.length) break;
      flagValue = argv[++i];
    }
    if (ARCH_FLAGS.has(name) && flagValue !== null) {
      for (const arch of archsOf(flagValue)) if (!archs.includes(arch)) archs.push(arch);
      continue;
    }
    if (KEEP_WITH_VALUE.has(name) && flagValue !== null) {
      const resolved = PATH_FLAGS.has(name) ? path.resolve(command.directory, flagValue) : flagValue;
      if (name === '-x' || name === '--x') continue; // we choose the language ourselves
      if (glued === '=') flags.push(`${name}=${resolved}`);
      else if (glued === 'attached') flags.push(`${name}${resolved}`);
      else flags.push(name, resolved);
      continue;
    }
    if (name === '-dc' || name === '--device-c') {
      flags.push('-rdc=true');
      continue;
    }
    if (KEEP_BARE.has(name) && value === null) {
      flags.push(arg);
      continue;
    }
    if (/^-O\d$/.test(arg)) {
      flags.push(arg);
      continue;
    }
    // Everything else is dropped: -c, -o, -M*, -E, -ptx, -cubin, warnings-as-errors, host-only flags.
  }
  return { flags, archs, cwd: command.directory, origin: 'compile_commands' };
}

/** `-I/x` -> (-I, /x); `--std=c++17` -> (--std, c++17); `-DFOO=1` -> (-D, FOO=1); `-isystem` -> (-isystem, null). */
function splitFlag(arg: string): { name: string; value: string | null; glued: '=' | 'attached' | null } {
  const known = (name: string) => KEEP_WITH_VALUE.has(name) || DROP_WITH_VALUE.has(name) || KEEP_BARE.has(name);
  if (known(arg)) return { name: arg, value: null, glued: null };
  const eq = arg.indexOf('=');
  if (eq > 0 && known(arg.slice(0, eq))) return { name: arg.slice(0, eq), value: arg.slice(eq + 1), glued: '=' };
  for (const short of ['-I', '-D', '-U', '-L', '-l', '-o']) {
    if (arg.startsWith(short) && arg.length > short.length)
      return { name: short, value: arg.slice(short.length), glued: 'attached' };
  }
  if (eq > 0) return { name: arg.slice(0, eq), value: arg.slice(eq + 1), glued: '=' };
  return { name: arg, value: null, glued: null };
}

/** Architectures named by `sm_80`, `compute_80`, `arch=compute_80,code=[sm_80,compute_80]`, `sm_80,sm_90`. */
export function archsOf(value: string): string[] {
  const out: string[] = [];
  const codes = /code=\[?([^\]]*)\]?/.exec(value);
  const text = codes ? codes[1] : value;
  for (const m of text.matchAll(/\b(?:sm|compute|lto)_(\d+[a-z]?)\b/g)) {
    const arch = `sm_${m[1]}`;
    if (!out.includes(arch)) out.push(arch);
  }
  return out;
}

/** Flags from settings (for files without a compile_commands.json entry). Pure. */
export function flagsFromSettings(settings: FlagSettings, baseDir: string | null = null): CompileFlags {
  const flags: string[] = [];
  for (const dir of settings.includePaths ?? []) {
    if (typeof dir === 'string' && dir.trim())
      flags.push('-I', baseDir ? path.resolve(baseDir, dir.trim()) : dir.trim());
  }
  for (const define of settings.defines ?? []) {
    if (typeof define === 'string' && define.trim()) flags.push(`-D${define.trim()}`);
  }
  const std = (settings.std ?? '').trim().replace(/^-+std=/, '');
  if (std) flags.push(`-std=${/^\d+$/.test(std) ? `c++${std}` : std}`);
  const archs: string[] = [];
  for (const arg of settings.nvccArgs ?? []) {
    if (typeof arg !== 'string' || arg.length === 0) continue;
    const archFlag = /^(-arch|--gpu-architecture|-gencode|--generate-code)=(.*)$/.exec(arg);
    if (archFlag) {
      for (const arch of archsOf(archFlag[2])) if (!archs.includes(arch)) archs.push(arch);
      continue;
    }
    flags.push(arg);
  }
  return { flags, archs, cwd: baseDir, origin: 'settings' };
}

/** Allows no compiler the workspace names. */
export const NO_COMPILERS: ArgumentPolicy = { allowedCompilers: [] };

/**
 * The flags for a file: its database entry when there is one, else the settings; extra nvccArgs always apply.
 * Both go through the argument policy (argument-policy.ts): the database's as compile_commands.json's, the
 * settings' as `nvccArgsOrigin` says (default: the user's).
 */
export function resolveCompileFlags(options: {
  database: readonly CompileCommand[] | null;
  filePath: string;
  settings: FlagSettings;
  workspaceRoot?: string | null;
  policy?: ArgumentPolicy;
  nvccArgsOrigin?: ArgumentOrigin;
  /** Who set the include paths, defines and standard of `settings` (default: the user). */
  settingsOrigin?: ArgumentOrigin;
  /**
   * Folders the workspace index found the unit's includes in where nothing said where (see
   * WorkspaceIndex.inferredIncludeDirs): added after every other flag for a file no database compiles.
   */
  inferredIncludeDirs?: readonly string[];
}): CompileFlags {
  const policy = options.policy ?? NO_COMPILERS;
  const entry = options.database ? findCompileCommand(options.database, options.filePath) : null;
  const nvccArgs = applyArgumentPolicy(
    (options.settings.nvccArgs ?? []).filter((a) => typeof a === 'string'),
    options.nvccArgsOrigin ?? 'user settings',
    policy,
    options.workspaceRoot ?? null,
  );
  if (entry) {
    const fromDatabase = extractNvccFlags(entry);
    const reduced = applyArgumentPolicy(fromDatabase.flags, 'compile_commands.json', policy, entry.directory);
    const extra = flagsFromSettings({ nvccArgs: nvccArgs.args });
    return {
      ...fromDatabase,
      flags: [...reduced.args, ...extra.flags],
      dropped: [...reduced.dropped, ...nvccArgs.dropped],
    };
  }
  // -I, -D and -std from settings pass the shell rule too (nvccArgs already did, with the rest of the policy).
  const fromSettings = flagsFromSettings({ ...options.settings, nvccArgs: [] }, options.workspaceRoot ?? null);
  const plain = dropShellWords(fromSettings.flags, options.settingsOrigin ?? 'user settings');
  // The workspace's own folders: names a shell would read are dropped like a workspace setting's.
  const inferred = dropShellWords(
    (options.inferredIncludeDirs ?? []).flatMap((dir) => ['-I', dir]),
    'workspace settings',
  );
  const extra = flagsFromSettings({ nvccArgs: nvccArgs.args });
  return {
    ...fromSettings,
    // Searched last: a folder anyone named comes first.
    flags: [...plain.args, ...extra.flags, ...inferred.args],
    archs: [...new Set([...fromSettings.archs, ...extra.archs])],
    dropped: [...plain.dropped, ...inferred.dropped, ...nvccArgs.dropped],
  };
}
