/** The coordinator's model catalog, as GET /api/models/catalog answers it. */
export type CatalogModels = {
  id: string;
  family: string;
  parameters?: string;
  licence?: { name: string; url: string };
  note?: string;
  files: {
    quant: string;
    file: string;
    sizeBytes: number;
    /** Absent while the catalog has not pinned the file's hash (unverified). */
    sha256?: string;
    /** The memory it takes to serve with a 4,096-token context. */
    memoryBytes?: number;
    url?: string;
  }[];
}[];

/**
 * The coordinator's catalog (GET /api/models/catalog on the app URL of the first coordinator
 * listed), or undefined when it can't be read.
 */
export async function fetchCatalogModels(coordinator: string): Promise<CatalogModels | undefined> {
  const url = new URL(coordinator.split(',')[0]!.trim());
  url.protocol = url.protocol === 'wss:' || url.protocol === 'https:' ? 'https:' : 'http:';
  url.pathname = '/api/models/catalog';
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) return undefined;
    return ((await res.json()) as { models: CatalogModels }).models;
  } catch {
    return undefined;
  }
}
