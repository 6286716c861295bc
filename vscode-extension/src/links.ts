/**
 * Which links from the chat the host opens. Model output is untrusted and the webview only names
 * the href: web and mail links go to the browser, file links open in the editor only when the
 * file they name really is inside a workspace folder, and every other scheme (javascript:,
 * command:, vscode:, data:) is ignored.
 *
 * "Really inside" is decided on the file system, not on the spelling: the path is made absolute
 * and normalised (`..` segments, percent-encoded or not, are resolved), then every symlink on it
 * is followed (fs.realpath), and the result must lie under the real path of a workspace folder.
 * So `/ws/../../etc/passwd`, `/ws/%2e%2e/etc/passwd`, a symlink in the workspace that points out
 * of it, `file://host/share/…` and a path elsewhere all open nothing; a file that does not exist
 * opens nothing either (it cannot be resolved). The editor is given the resolved path.
 */
import { within } from './within';
import type { PathOps } from './within';

export type LinkTarget = 'external' | 'file';

const TARGETS: Record<string, LinkTarget> = { http: 'external', https: 'external', mailto: 'external', file: 'file' };

export function linkTarget(scheme: string): LinkTarget | undefined {
  return Object.hasOwn(TARGETS, scheme.toLowerCase()) ? TARGETS[scheme.toLowerCase()] : undefined;
}

/** The parts of a file: URI that decide where it leads (vscode.Uri's, already percent-decoded). */
export interface FileLink {
  /** The host part: only an empty one (this machine) is followed. */
  authority: string;
  /** The path as the file system spells it (vscode.Uri.fsPath). */
  fsPath: string;
}

export interface ContainmentFs {
  /** fs.promises.realpath: the path with every symlink followed; rejects when it does not exist. */
  realpath(p: string): Promise<string>;
  /** path.posix or path.win32, for the platform the files live on. */
  path: PathOps;
  /** Whether the file system ignores case (Windows, macOS by default): then so does the comparison. */
  caseInsensitive: boolean;
}

/**
 * The real path of the file `link` names when it lies inside one of `folders` (their fsPaths),
 * else undefined. See the module doc for what counts as inside.
 */
export async function resolveInside(link: FileLink, folders: readonly string[], fs: ContainmentFs): Promise<string | undefined> {
  if (link.authority !== '' || !link.fsPath || link.fsPath.includes('\0')) return undefined;
  if (!fs.path.isAbsolute(link.fsPath)) return undefined;
  let real: string;
  try {
    real = await fs.realpath(fs.path.resolve(link.fsPath));
  } catch {
    return undefined;
  }
  for (const folder of folders) {
    let root: string;
    try {
      root = await fs.realpath(fs.path.resolve(folder));
    } catch {
      continue;
    }
    if (within(real, root, fs.path, fs.caseInsensitive)) return real;
  }
  return undefined;
}
