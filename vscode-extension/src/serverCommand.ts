/**
 * Which command starts the server: `qwen.server.path`, else the Python extension's interpreter
 * (`python -m qwen_lsp`) when it has the package, else `qwen-lsp` on PATH. Pure apart from the
 * injected probes, so the order and the messages are unit-tested.
 */
import * as path from 'node:path';

export interface ServerCommand {
  command: string;
  args: string[];
  source: 'setting' | 'python-extension' | 'path';
}

export interface Probes {
  /** True when `file` exists and is executable. */
  isExecutable(file: string): Promise<boolean>;
  /** True when `python -c "import qwen_lsp"` succeeds. */
  hasPackage(python: string): Promise<boolean>;
  /** The Python extension's interpreter for the workspace, if that extension is installed. */
  pythonInterpreter(): Promise<string | undefined>;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
}

export class ServerNotFound extends Error {
  constructor(message: string, readonly fix: 'install' | 'setting') {
    super(message);
  }
}

const SERVE = ['serve', '--stdio'];
const PYTHON_RE = /^python(\d+(\.\d+)*)?(\.exe)?$/i;

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

export async function resolveServerCommand(settingPath: string | undefined, probes: Probes): Promise<ServerCommand> {
  const configured = settingPath?.trim();
  if (configured) {
    if (!(await probes.isExecutable(configured))) {
      throw new ServerNotFound(`qwen.server.path is set to "${configured}", which is not an executable file. Fix the path or clear the setting.`, 'setting');
    }
    if (looksLikePython(configured)) {
      if (!(await probes.hasPackage(configured))) {
        throw new ServerNotFound(`The interpreter in qwen.server.path (${configured}) has no qwen_lsp package. Run: "${configured}" -m pip install qwen-lsp`, 'setting');
      }
      return { command: configured, args: ['-m', 'qwen_lsp', ...SERVE], source: 'setting' };
    }
    return { command: configured, args: SERVE, source: 'setting' };
  }
  const python = await probes.pythonInterpreter();
  if (python && (await probes.hasPackage(python))) {
    return { command: python, args: ['-m', 'qwen_lsp', ...SERVE], source: 'python-extension' };
  }
  const onPath = await findOnPath('qwen-lsp', probes);
  if (onPath) return { command: onPath, args: SERVE, source: 'path' };
  const hint = python
    ? `The selected Python interpreter (${python}) does not have it either: run "${python}" -m pip install qwen-lsp, or `
    : 'Install it with "pipx install qwen-lsp" (or pip install qwen-lsp), or ';
  throw new ServerNotFound(`The qwen-lsp server was not found on PATH. ${hint}set qwen.server.path to its executable.`, 'install');
}
