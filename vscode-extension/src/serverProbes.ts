/**
 * The probes behind serverCommand.ts's choice, on the real machine: is a file executable, does a
 * Python import qwen_lsp, does it run the bundled server. No vscode import, so tests run them.
 * Each runs in `cwd` (outside the workspace, serverCommand.serverCwd) with `-P` where Python is
 * known to be new enough: a workspace's own `qwen_lsp/` must not answer for the real package.
 */
import { execFile } from 'node:child_process';
import { access, constants, stat } from 'node:fs/promises';
import { SAFE_PATH } from './serverCommand';

export async function isExecutable(file: string): Promise<boolean> {
  try {
    if (!(await stat(file)).isFile()) return false;
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `python -P -c "import qwen_lsp"` in `cwd`; false also for a Python older than 3.11 (it does not know -P). */
export function hasPackage(python: string, cwd: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(python, [SAFE_PATH, '-c', 'import qwen_lsp'], { timeout: 20_000, cwd }, (err) => resolve(!err));
  });
}

/**
 * bundled/launch.py --probe: exit 0 when `python` runs the bundled server, else the reason it printed.
 * Without -P, so that a Python too old to know it still says why; a script's own folder (bundled/)
 * is what goes on sys.path then, never `cwd`.
 */
export function bundleUnfit(python: string, launcher: string, cwd: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(python, [launcher, '--probe'], { timeout: 20_000, cwd }, (err, _stdout, stderr) => {
      if (!err) resolve(undefined);
      else resolve(stderr.trim().replace(/^qwen-lsp: /, '') || `${python} did not run (${err.message.split('\n')[0]})`);
    });
  });
}
