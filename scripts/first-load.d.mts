export interface BundlePart {
  file: string;
  bytes: number;
  gzip_bytes: number;
  part: 'first' | 'lazy' | 'sw';
}
export function bundleParts(dist: string): BundlePart[];
export const FIRST_LOAD_BUDGET_KB: number;
