/** What a CLI command may touch: injected so commands can be tested in-process. */
export interface CliIO {
  readonly stdin: NodeJS.ReadableStream;
  out(text: string): void;
  err(text: string): void;
  readonly cwd: string;
}

/** A usage or input error: printed as one line on stderr, exit status 2. */
export class UsageError extends Error {}

export const processIO = (): CliIO => ({
  stdin: process.stdin,
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  cwd: process.cwd(),
});
