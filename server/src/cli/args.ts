/** A small, strict flag parser: unknown flags and missing values are usage errors. */
import { UsageError } from './cli-io';

export interface FlagSpec {
  /** `list`: a string option that may be given several times (its values in order). */
  [flag: string]: 'string' | 'boolean' | 'list';
}

export interface ParsedArgs {
  flags: Record<string, string | boolean | string[]>;
  positional: string[];
}

export function parseArgs(args: string[], spec: FlagSpec, aliases: Record<string, string> = {}): ParsedArgs {
  const flags: ParsedArgs['flags'] = {};
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--') {
      positional.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
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
      if (value === undefined || (eq < 0 && value.startsWith('--'))) throw new UsageError(`option ${rawName} needs a value`);
      if (kind === 'list') flags[name] = [...((flags[name] as string[] | undefined) ?? []), value];
      else flags[name] = value;
    }
  }
  return { flags, positional };
}

export function intFlag(flags: ParsedArgs['flags'], name: string, fallback: number | undefined, { min = -Infinity, max = Infinity } = {}): number | undefined {
  const value = flags[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^-?\d+$/.test(value.trim())) throw new UsageError(`${name} needs an integer, got ${JSON.stringify(value)}`);
  const n = Number(value);
  if (n < min || n > max) throw new UsageError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}
