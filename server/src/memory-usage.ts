/** The server process's memory, in MB (the answer to MEMORY_USAGE_REQUEST). */
import type { MemoryUsage } from './protocol';

export function memoryUsage(openDocuments: number): MemoryUsage {
  const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
  const { rss, heapTotal, heapUsed, external } = process.memoryUsage();
  return { rssMb: mb(rss), heapTotalMb: mb(heapTotal), heapUsedMb: mb(heapUsed), externalMb: mb(external), openDocuments };
}
