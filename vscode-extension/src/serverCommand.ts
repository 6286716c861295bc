/**
 * Which command starts the server: `qwen.server.path`, else the server bundled in the .vsix
 * (bundled/launch.py, run by the Python extension's interpreter or `python3`/`python` on PATH,
 * the first that is CPython 3.11+ with native libraries in the bundle), else, in a build without
 * the bundle, the Python extension's interpreter when it has `qwen_lsp`, else `qwen-lsp` on PATH.
 * Pure apart from the injected probes, so the order and the messages are unit-tested.
 *
 * No directory of the workspace is ever on the server's module path: a repository's `yaml.py` or
 * `qwen_lsp/__main__.py` must not run in place of the real one. Every Python the extension starts
 * runs with `-P` (Python 3.11+, the server's minimum: no script directory, no current directory
 * on sys.path), and in a directory outside every workspace folder (serverCwd); the server learns
 * its folders from the LSP initialize request, not from its working directory (docs/security.md).
 */
import * as path from 'node:path';
import { within } from './within';
import type { PathOps } from './within';

export interface ServerCommand {
  command: string;
  args: string[];
  source: 'setting' | 'bundled' | 'python-extension' | 'path';
}

export interface Probes {
  /** True when `file` exists and is executable. */
  isExecutable(file: string): Promise<boolean>;
  /** True when `python -c "import qwen_lsp"` succeeds. */
  hasPackage(python: string): Promise<boolean>;
  /** The Python extension's interpreter for the workspace, if that extension is installed. */
  pythonInterpreter(): Promise<string | undefined>;
  /** bundled/launch.py when the .vsix carries the server (bundled/libs), else undefined. */
  bundledLauncher: string | undefined;
  /** Undefined when `python launch.py --probe` says this interpreter runs the bundle, else why not. */
  bundleUnfit(python: string, launcher: string): Promise<string | undefined>;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
}

export class ServerNotFound extends Error {
  constructor(message: string, readonly fix: 'install' | 'setting') {
    super(message);
  }
}

/** The oldest Python the server runs on (pyproject.toml's requires-python). */
export const MIN_PYTHON = '3.11';
const SERVE = ['serve', '--stdio'];
/** Python's "safe path" flag (3.11+): nothing from the current or the script's directory is importable. */
export const SAFE_PATH = '-P';
const PYTHON_RE = /^python(\d+(\.\d+)*)?(\.exe)?$/i;
const FROM_SOURCE = 'a qwen-lsp built from source (see the README, "Building from source")';

export function looksLikePython(file: string): boolean {
  return PYTHON_RE.test(path.basename(file));
}

export async function findOnPath(name: string, probes: Probes): Promise<string | undefined> {
  const dirs = (probes.env.PATH ?? probes.env.Path ?? '').split(probes.platform === 'win32' ? ';' : ':').filter(Boolean);
  const names = probes.platform === 'win32' ? [`${name}.exe`, `${name}.cmd`, name] : [name];
  for (const dir of dirs) for (const n of names) {
    const candidate = path.join(dir, n);
    if (await probes.isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** The bundled server with the first fitting Python: the Python extension's, then python3, then python on PATH. */
async function bundled(launcher: string, python: string | undefined, probes: Probes): Promise<ServerCommand> {
  const candidates: string[] = [];
  for (const p of [python, await findOnPath('python3', probes), await findOnPath('python', probes)]) if (p && !candidates.includes(p)) candidates.push(p);
  const reasons: string[] = [];
  for (const p of candidates) {
    const why = await probes.bundleUnfit(p, launcher);
    if (why === undefined) return { command: p, args: [SAFE_PATH, launcher, ...SERVE], source: 'bundled' };
    reasons.push(why);
  }
  const found = reasons.length ? ` Found: ${reasons.join('; ')}.` : ' No python3 or python was found on PATH, and the Python extension selected none.';
  throw new ServerNotFound(
    `Qwen's server (bundled with the extension) needs Python ${MIN_PYTHON} or newer.${found} Install Python ${MIN_PYTHON}+ so that python3 is on PATH, or select one with the Python extension, then run "Qwen: Restart Server".`,
    'install',
  );
}

export async function resolveServerCommand(settingPath: string | undefined, probes: Probes): Promise<ServerCommand> {
  const configured = settingPath?.trim();
  if (configured) {
    if (!(await probes.isExecutable(configured))) {
      throw new ServerNotFound(`qwen.server.path is set to "${configured}", which is not an executable file. Fix the path or clear the setting.`, 'setting');
    }
    if (looksLikePython(configured)) {
      if (!(await probes.hasPackage(configured))) {
        const clear = probes.bundledLauncher ? 'Clear the setting to use the server bundled with the extension, or set it to ' : 'Set it to ';
        throw new ServerNotFound(`The interpreter in qwen.server.path (${configured}) has no qwen_lsp package (or is older than Python ${MIN_PYTHON}). ${clear}${FROM_SOURCE}.`, 'setting');
      }
      return { command: configured, args: [SAFE_PATH, '-m', 'qwen_lsp', ...SERVE], source: 'setting' };
    }
    return { command: configured, args: SERVE, source: 'setting' };
  }
  const python = await probes.pythonInterpreter();
  if (probes.bundledLauncher) return bundled(probes.bundledLauncher, python, probes);
  if (python && (await probes.hasPackage(python))) {
    return { command: python, args: [SAFE_PATH, '-m', 'qwen_lsp', ...SERVE], source: 'python-extension' };
  }
  const onPath = await findOnPath('qwen-lsp', probes);
  if (onPath) return { command: onPath, args: SERVE, source: 'path' };
  throw new ServerNotFound(
    `This build of the extension carries no server, and none was found (no qwen-lsp on PATH). Install the .vsix for your platform: code --install-extension qwen-lsp-<target>.vsix (e.g. qwen-lsp-linux-x64.vsix), or set qwen.server.path to ${FROM_SOURCE}.`,
    'install',
  );
}

/**
 * The working directory for the server and the probes: the first candidate (the extension's own
 * folder, then the home folder, then the temporary folder) that is inside no workspace folder and
 * holds none of them. `-P` already keeps it off sys.path; this keeps a relative entry of the
 * user's PYTHONPATH, and a tool that reads its working directory, out of the repository too.
 */
export function serverCwd(folders: readonly string[], candidates: readonly string[], p: PathOps = path): string | undefined {
  const fold = p === path.win32 || (p === path && process.platform === 'darwin');
  return candidates.find((c) => folders.every((f) => !within(c, f, p, fold) && !within(f, c, p, fold)));
}

/** Dotted numeric versions: negative when a < b. Missing parts count as 0; other text is ignored. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.+-]/).map((x) => parseInt(x, 10) || 0);
  const pb = b.split(/[.+-]/).map((x) => parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}

/**
 * What to tell the user when a server the extension did not bring (qwen.server.path, PATH) is
 * older than the extension, from initialize's serverInfo.version; undefined when it is not.
 * The bundled server is built from the same commit, so it is never checked.
 */
export function staleServerWarning(cmd: ServerCommand, serverVersion: string | undefined, extensionVersion: string): string | undefined {
  if (cmd.source === 'bundled') return undefined;
  if (serverVersion && compareVersions(serverVersion, extensionVersion) >= 0) return undefined;
  const where = cmd.source === 'setting' ? 'qwen.server.path points at' : 'The extension started';
  const fix = cmd.source === 'setting' ? ' Clear qwen.server.path to use the server bundled with the extension, or update that server.' : ' Update that server.';
  return `${where} qwen-lsp ${serverVersion ?? '(version unknown)'} (${cmd.command}), older than this extension (${extensionVersion}); some features may not work.${fix}`;
}
