# Starts the qwen-lsp server bundled in the .vsix with whatever Python runs this file, the way
# Microsoft's Python tool extensions start theirs (vscode-python-tools-extension-template): the
# folders under libs/ go first on sys.path, so the user's own packages never shadow the server's.
# libs/common holds qwen_lsp and the pure-Python dependencies; libs/cp3NN the native ones built for
# CPython 3.N on this .vsix's platform (scripts/bundle.py makes them).
#
#   python launch.py --probe          exit 0 when this interpreter can run the bundled server,
#                                     else exit 3 and say why on stderr (the extension shows it)
#   python launch.py serve --stdio    the server, as `qwen-lsp serve --stdio`
#
# Deliberately old-fashioned Python (no f-strings, no annotations) so that even an old interpreter
# gets to print the reason it cannot run the server instead of a SyntaxError.
import json
import os
import platform
import sys

MINIMUM = (3, 11)
HERE = os.path.dirname(os.path.abspath(__file__))
LIBS = os.path.join(HERE, "libs")


def unfit_reason():
    """None when this interpreter fits the bundle, else one sentence saying why not."""
    found = "%s %d.%d.%d" % (sys.executable, sys.version_info[0], sys.version_info[1], sys.version_info[2])
    try:
        with open(os.path.join(LIBS, "target.json")) as f:
            info = json.load(f)
    except (OSError, ValueError):
        return "this build of the extension carries no server (bundled/libs is missing)"
    supported = "CPython " + ", ".join(info["pythons"])
    if sys.version_info[:2] < MINIMUM:
        return "the server needs Python %d.%d or newer (%s); found %s" % (MINIMUM + (supported, found))
    if platform.python_implementation() != "CPython":
        return "the bundled server is built for %s; found %s (%s)" % (supported, found, platform.python_implementation())
    here = host_target()
    if here != info["target"]:
        return "this .vsix carries the server for %s, and this machine is %s: install qwen-lsp-%s.vsix instead" % (info["target"], here, here)
    if not os.path.isdir(native_dir()):
        return "this .vsix (%s) carries the server for %s; found %s" % (info["target"], supported, found)
    return None


def host_target():
    """This machine as VS Code names its targets (linux-x64, darwin-arm64, win32-x64, ...)."""
    system = {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(sys.platform, sys.platform)
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    return system + "-" + arch


def native_dir():
    return os.path.join(LIBS, "cp%d%d" % sys.version_info[:2])


def main():
    reason = unfit_reason()
    if reason is not None:
        sys.stderr.write("qwen-lsp: " + reason + "\n")
        sys.exit(3)
    if sys.argv[1:] == ["--probe"]:
        sys.stdout.write("%d.%d.%d\n" % sys.version_info[:3])
        return
    sys.path[0:0] = [native_dir(), os.path.join(LIBS, "common")]
    sys.argv = ["qwen-lsp"] + sys.argv[1:]
    import runpy

    runpy.run_module("qwen_lsp", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
