/** The server process's memory, in MB (the answer to MEMORY_USAGE_REQUEST). */
import { getHeapStatistics } from 'node:v8';
import type { MemoryUsage } from '../protocol';

export function memoryUsage(
  openDocuments: number,
  idle: { collections: number; compactions: number } | null,
): MemoryUsage {
  const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
  const { rss, heapTotal, heapUsed, external } = process.memoryUsage();
  const heapLimitMb = mb(getHeapStatistics().heap_size_limit);
  return {
    rssMb: mb(rss),
    heapTotalMb: mb(heapTotal),
    heapUsedMb: mb(heapUsed),
    heapLimitMb,
    externalMb: mb(external),
    openDocuments,
    idleCollections: idle?.collections ?? null,
    idleCompactions: idle?.compactions ?? null,
  };
}
