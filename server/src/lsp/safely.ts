/**
 * Run a request handler so that a failure answers that request empty and is
 * logged once per feature, while everything else keeps working.
 */
export function makeSafely(log: (message: string) => void) {
  const reported = new Set<string>();
  return function safely<T>(feature: string, fallback: T, run: () => T): T {
    try {
      return run();
    } catch (error) {
      const key = `${feature}: ${String(error)}`;
      if (!reported.has(key)) {
        reported.add(key);
        log(`[error] ${feature} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      }
      return fallback;
    }
  };
}
