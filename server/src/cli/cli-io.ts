/** What a CLI command may touch: injected so commands can be tested in-process. */
export interface CliIO {
  readonly stdin: NodeJS.ReadableStream;
  out(text: string): void;
  /**
   * Resolves once what `out` was given is taken by the reader, or nearly (a pipe's writes are
   * queued in this process until the event loop runs: a long synchronous run would hold its whole
   * output). Absent: `out` takes it at once.
   */
  drained?(): Promise<void>;
  err(text: string): void;
  readonly cwd: string;
}

/** A usage or input error: printed as one line on stderr, exit status 2. */
export class UsageError extends Error {}

/** Output queued for stdout past which `drained` waits for the reader. */
const QUEUED_BYTES = 1 << 20;

export const processIO = (): CliIO => ({
  stdin: process.stdin,
  out: (text) => process.stdout.write(text),
  drained: () =>
    process.stdout.writableLength < QUEUED_BYTES
      ? Promise.resolve()
      : new Promise((resolve) => {
          // A reader gone (EPIPE) closes the stream: no drain will come.
          const done = () => {
            process.stdout.off('drain', done).off('close', done);
            resolve();
          };
          process.stdout.once('drain', done).once('close', done);
        }),
  err: (text) => process.stderr.write(text),
  cwd: process.cwd(),
});
