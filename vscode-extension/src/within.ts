/**
 * Whether one absolute path lies inside another, by path arithmetic on paths already resolved
 * (the caller follows symlinks first where that matters, e.g. links.ts). One helper for the
 * links' containment check and for choosing the server's working directory (serverCommand.ts).
 */
import type * as path from 'node:path';

export type PathOps = Pick<typeof path, 'resolve' | 'relative' | 'isAbsolute'>;

/** True when `child` is `parent` or lies under it; `caseInsensitive` for Windows and macOS file systems. */
export function within(child: string, parent: string, p: PathOps, caseInsensitive = false): boolean {
  const fold = (s: string) => p.resolve(caseInsensitive ? s.toLowerCase() : s);
  const rel = p.relative(fold(parent), fold(child));
  return rel === '' || (rel !== '..' && !rel.startsWith('../') && !rel.startsWith('..\\') && !p.isAbsolute(rel));
}
