/** A small, strict flag parser: unknown flags and missing values are usage errors. */
import { UsageError } from './cli-io';

/** `list`: may be repeated, each value kept in order; a two-character list flag (`-I`) also takes its value glued (`-Iinclude`). */
export interface FlagSpec {
  [flag: string]: 'string' | 'boolean' | 'list';
}

export interface ParsedArgs {
  flags: Record<string, string | boolean>;
  /** Values of `list` flags, in the order given. */
  lists: Record<string, string[]>;
  positional: string[];
  /** What follows `--` when the caller takes it as arguments for another tool (see `afterDoubleDash`). */
  rest: string[];
}

export interface ParseOptions {
  /** What follows `--`: more positional arguments (default), or `rest` (arguments the command passes on, as a compiler driver does). */
  afterDoubleDash?: 'positional' | 'rest';
}

export function parseArgs(
  args: string[],
  spec: FlagSpec,
  aliases: Record<string, string> = {},
  options: ParseOptions = {},
): ParsedArgs {
  const flags: Record<string, string | boolean> = {};
  const lists: Record<string, string[]> = {};
  const positional: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') {
      (options.afterDoubleDash === 'rest' ? rest : positional).push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
      continue;
    }
    const glued = arg.length > 2 && !arg.startsWith('--') && spec[arg.slice(0, 2)] === 'list' ? arg.slice(0, 2) : null;
    if (glued) {
      (lists[glued] ??= []).push(arg.slice(2));
      continue;
    }
    const eq = arg.indexOf('=');
    const rawName = eq > 0 ? arg.slice(0, eq) : arg;
    const name = aliases[rawName] ?? rawName;
    const kind = spec[name];
    if (!kind) throw new UsageError(`unknown option ${rawName}`);
    if (kind === 'boolean') {
      if (eq > 0) throw new UsageError(`option ${rawName} takes no value`);
      flags[name] = true;
    } else {
      const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
      if (value === undefined || (eq < 0 && value.startsWith('--')))
        throw new UsageError(`option ${rawName} needs a value`);
      if (kind === 'list') (lists[name] ??= []).push(value);
      else flags[name] = value;
    }
  }
  return { flags, lists, positional, rest };
}

export function intFlag(
  flags: ParsedArgs['flags'],
  name: string,
  fallback: number | undefined,
  { min = -Infinity, max = Infinity } = {},
): number | undefined {
  const value = flags[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^-?\d+$/.test(value.trim()))
    throw new UsageError(`${name} needs an integer, got ${JSON.stringify(value)}`);
  const n = Number(value);
  if (n < min || n > max) throw new UsageError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}
