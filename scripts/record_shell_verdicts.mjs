// Record the shell-command verdicts of the real Qwen Code CLI (0.24.4) into
// tests/data/shell_verdicts_qwen_0.24.4.json.
//
// How to run (needs the CLI installed, e.g. `npm install @qwen-code/qwen-code@0.24.4`
// under a prefix; QWEN_CLI_DIR names that prefix, default /opt/qwen-cli):
//
//   node scripts/record_shell_verdicts.mjs [commands.txt] [out.json]
//
// Defaults: tests/data/shell_commands.txt -> tests/data/shell_verdicts_qwen_0.24.4.json.
// The command list format is described at the top of shell_commands.txt.
//
// Nothing here reimplements the CLI's classifier: the script imports the CLI's
// own bundled chunks and calls the functions they export, in the order the
// shell tool's ShellToolInvocation.getDefaultPermission() calls them:
//   hasShellSubstitution(raw) -> "ask"; else
//   isShellCommandReadOnlyASTInDirectory(stripShellWrapper(raw), cwd) -> "allow" | "ask".
// (getDefaultPermission first returns "ask" when a shell execution sandbox is
// configured; none is here, as in a default install.)  With no permission rules
// configured, evaluatePermissionFlow() keeps that default, so it is the verdict
// `default` approval mode acts on.  The commands are only classified, never run.
//
// The "end_to_end_checked" entries of an existing output file (written by
// scripts/e2e_shell_verdicts.py, which runs the real `qwen` binary) are kept.

import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const cliDir = process.env.QWEN_CLI_DIR || "/opt/qwen-cli";
const packageDir = join(cliDir, "node_modules", "@qwen-code", "qwen-code");
const listPath = resolve(process.argv[2] || join(repoRoot, "tests/data/shell_commands.txt"));
const outPath = resolve(process.argv[3] || join(repoRoot, "tests/data/shell_verdicts_qwen_0.24.4.json"));

const WANTED = [
  "classifyShellCommandSafetyInDirectory",
  "isShellCommandReadOnlyASTInDirectory",
  "extractCommandRules",
  "hasShellSubstitution",
  "stripShellWrapper",
  "splitCommands",
];

// Only the repository's own config may matter (the CLI's git-config probe reads
// local scope only), so keep the user's and the system's git config out.
process.env.GIT_CONFIG_GLOBAL = "/dev/null";
process.env.GIT_CONFIG_NOSYSTEM = "1";

/** The chunk files whose export block names each wanted function (chunk names are content hashes). */
function locateExports() {
  const chunksDir = join(packageDir, "chunks");
  const found = {};
  for (const name of readdirSync(chunksDir).filter((n) => n.endsWith(".js")).sort()) {
    const text = readFileSync(join(chunksDir, name), "utf8");
    const at = text.lastIndexOf("\nexport {");
    if (at < 0) continue;
    const block = text.slice(at, text.indexOf("}", at));
    for (const fn of WANTED) {
      if (!found[fn] && new RegExp(`[\\s,]${fn}\\s*[,\\n]`).test(block)) found[fn] = name;
    }
  }
  const missing = WANTED.filter((fn) => !found[fn]);
  if (missing.length) throw new Error(`not exported by any chunk of ${packageDir}: ${missing.join(", ")}`);
  return found;
}

function parseList(text) {
  const entries = [];
  let family = "unsorted";
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("@#")) continue;
    if (line.startsWith("@family ")) family = line.slice(8).trim();
    else if (line.startsWith("@json ")) entries.push({ family, command: JSON.parse(line.slice(6)) });
    else entries.push({ family, command: line });
  }
  return entries;
}

function git(cwd, ...args) {
  execFileSync("git", ["-C", cwd, ...args], { stdio: "ignore" });
}

/** A git repository with one commit and the files the command list names. */
function makeRepo(parent, name, files = {}) {
  const dir = join(parent, name);
  mkdirSync(dir);
  git(dir, "init", "-q", "-b", "main");
  const base = {
    "README.md": "# demo\nTODO: nothing\n",
    "cfg.txt": "b\na\n",
    "data.txt": "x 1\ny 2\nx 1\n",
    "list.txt": "README.md\ncfg.txt\n",
    "docs/guide.md": "PATTERN\n",
    "src/main.py": "print('TODO')\n",
    "script.sh": "echo hi\n",
    "prog.awk": "{ print }\n",
    ...files,
  };
  for (const [rel, body] of Object.entries(base)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), body);
  }
  git(dir, "add", "-A");
  git(dir, "-c", "user.name=recorder", "-c", "user.email=recorder@example.invalid", "commit", "-q", "-m", "init");
  return dir;
}

// Repositories whose .git/config makes some read-only-looking git command run a
// program; [description, git config arguments, extra files, commands].
const CONFIG_REPOS = [
  ["diff.external set in .git/config", [["diff.external", "touch DIFF_EXTERNAL_RAN"]], {},
    ["git diff", "git diff --stat", "git log -p -1", "git show HEAD", "git status"]],
  ["core.fsmonitor set to a program in .git/config", [["core.fsmonitor", "touch FSMONITOR_RAN"]], {},
    ["git status", "git status --short", "git diff", "git grep -n TODO", "git ls-files", "git blame README.md", "git log -1"]],
  ["diff.external set in a file that .git/config includes (include.path)", [["include.path", "extra.cfg"]], {},
    ["git diff"]],
  ["diff.<driver>.textconv in .git/config, selected by a committed .gitattributes", [["diff.tc.textconv", "sh -c 'touch TEXTCONV_RAN; cat \"$0\"'"]],
    { ".gitattributes": "*.md diff=tc\n" }, ["git diff", "git log -p -1", "git show HEAD"]],
  ["filter.<driver>.clean in .git/config, selected by a committed .gitattributes", [["filter.cl.clean", "sh -c 'touch CLEAN_RAN; cat'"]],
    { ".gitattributes": "*.md filter=cl\n" }, ["git diff", "git status"]],
];

const found = locateExports();
const mod = {};
for (const [fn, chunk] of Object.entries(found)) {
  mod[fn] = (await import(pathToFileURL(join(packageDir, "chunks", chunk)).href))[fn];
}
const version = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")).version;

/** The tool's default permission and what the confirmation would offer, computed by the CLI's own functions. */
async function verdict(command, cwd) {
  const substitution = mod.hasShellSubstitution(command);
  const stripped = mod.stripShellWrapper(command);
  let readOnly = false;
  if (!substitution) {
    try {
      readOnly = await mod.isShellCommandReadOnlyASTInDirectory(stripped, cwd);
    } catch {
      readOnly = false; // getDefaultPermission() falls back to "ask"
    }
  }
  const entry = {
    command,
    cli: readOnly ? "allow" : "ask",
    safety: await mod.classifyShellCommandSafetyInDirectory(command, cwd),
    rules: null,
  };
  try {
    entry.rules = await mod.extractCommandRules(command);
  } catch (error) {
    entry.rules_error = String(error?.message ?? error); // the bundled tree-sitter throws on some input (e.g. case ... esac)
  }
  if (substitution) entry.substitution = true;
  if (stripped !== command) {
    entry.stripped = stripped;
    entry.stripped_safety = await mod.classifyShellCommandSafetyInDirectory(stripped, cwd);
  }
  if (!readOnly) {
    // getConfirmationDetails(): the read-only sub-commands of the stripped
    // command are left out of the "Allow always" rules it offers.
    const subs = mod.splitCommands(stripped);
    const asking = [];
    for (const sub of subs) {
      let ro = false;
      try {
        ro = await mod.isShellCommandReadOnlyASTInDirectory(sub, cwd);
      } catch {}
      if (!ro) asking.push(sub);
    }
    const offered = [];
    for (const sub of asking.length ? asking : subs) {
      try {
        offered.push(...(await mod.extractCommandRules(sub)));
      } catch {}
    }
    entry.offered_rules = [...new Set(offered)].map((r) => `Bash(${r})`);
  }
  return entry;
}

const scratch = mkdtempSync(join(tmpdir(), "qwen-verdicts-"));
try {
  const plain = makeRepo(scratch, "repo");
  const entries = [];
  for (const { family, command } of parseList(readFileSync(listPath, "utf8"))) {
    entries.push({ ...(await verdict(command, plain)), family });
  }

  const configCases = [];
  for (const [index, [config, settings, files, commands]] of CONFIG_REPOS.entries()) {
    const dir = makeRepo(scratch, `config-repo-${index}`, files);
    for (const [key, value] of settings) git(dir, "config", key, value);
    if (settings.some(([key]) => key === "include.path")) {
      writeFileSync(join(dir, ".git", "extra.cfg"), "[diff]\n\texternal = touch DIFF_EXTERNAL_RAN\n");
    }
    writeFileSync(join(dir, "README.md"), "# demo\nchanged\n"); // a change for diff/status to show
    for (const command of commands) {
      configCases.push({ ...(await verdict(command, dir)), family: "git-config-repo", repo_config: config, git_config: Object.fromEntries(settings) });
    }
  }

  const counts = {};
  for (const e of entries) {
    counts[e.family] ??= { allow: 0, ask: 0 };
    counts[e.family][e.cli]++;
  }
  const previous = existsSync(outPath) ? JSON.parse(readFileSync(outPath, "utf8")) : {};
  const chunkFiles = [...new Set(Object.values(found))];
  const out = {
    header: {
      recorded_by: `running @qwen-code/qwen-code ${version}'s own classifier (scripts/record_shell_verdicts.mjs imports its bundled chunks ${chunkFiles.join(", ")})`,
      cli_version: version,
      functions: WANTED,
      recorded_at: new Date().toISOString(),
      node: process.version,
      decision: "cli = ShellToolInvocation.getDefaultPermission() as the CLI computes it: hasShellSubstitution(command) -> ask; else isShellCommandReadOnlyASTInDirectory(stripShellWrapper(command), cwd) -> allow, otherwise (including a throw) ask. The functions are the CLI's exported ones, called in that order (the method itself needs a Config object, so the script calls its steps). With no permission rules configured this is the verdict `default` approval mode acts on: allow runs without asking, ask prompts (an interactive dialog, or a can_use_tool control request in a stream-json session; plain headless -p text mode denies run_shell_command altogether in default mode).",
      fields: {
        cli: "allow | ask: the effective default permission",
        safety: "classifyShellCommandSafetyInDirectory(command, cwd) on the command as written",
        rules: "extractCommandRules(command): the prefix rules of every simple command (null with rules_error when it throws)",
        offered_rules: "(ask only) the Bash(...) rules the confirmation's 'Allow always' would save: extractCommandRules of the non-read-only sub-commands of splitCommands(stripShellWrapper(command)), as getConfirmationDetails() computes them with no permission rules configured",
        substitution: "present (true) when hasShellSubstitution(command) made it ask",
        stripped: "present when stripShellWrapper(command) changed the command; stripped_safety is its classification, and the read-only check ran on it",
        family: "grouping from tests/data/shell_commands.txt",
      },
      cwd: "a scratch git repository (one commit; README.md cfg.txt data.txt list.txt docs/guide.md src/main.py script.sh prog.awk) with no special config; GIT_CONFIG_GLOBAL=/dev/null, GIT_CONFIG_NOSYSTEM=1",
      git_config_cases: "separate list: the same commands in repositories whose .git/config names a program (the CLI's getLocalGitConfigRisk() probes diff.external and core.fsmonitor only)",
      counts_per_family: counts,
      total: entries.length,
      end_to_end_method: previous.header?.end_to_end_method ?? null,
      end_to_end_checked: previous.header?.end_to_end_checked ?? [],
    },
    entries,
    git_config_cases: configCases,
  };
  writeFileSync(outPath, JSON.stringify(out, null, 1) + "\n");
  console.log(`${entries.length} commands + ${configCases.length} git-config cases -> ${outPath}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
