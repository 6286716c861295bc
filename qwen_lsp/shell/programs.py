"""The read-only programs and each one's whole option table: what may run without a person.

The set is Qwen Code 0.24.4's ``READ_ONLY_ROOT_COMMANDS`` (``shellAstParser.ts``)
plus ``file``, judged more strictly where the CLI would let a command read
or run something it should not (each such case is listed in
docs/security.md, "Commands"):

* every option is looked up in the program's table (``options.py``: GNU
  abbreviations, bundles, ``=``) and an unknown one asks, where the CLI
  lets any option through but a few;
* options that follow symbolic links out of a walk or read file names from
  a file (``grep -R``, ``ls -L``, ``du -L``, ``--files0-from``, ``find -L``)
  ask: the walk could leave the workspace;
* ``awk``, ``less`` and ``more`` ask (an awk program can run commands and
  write files; the pagers run ``LESSOPEN``/``!``); ``sed`` runs alone only
  as a line printer (``sed -n '5p'``, ``sed -n '1,20p'``);
* ``ps`` runs with the listing options, never ``e``/``-e``'s relatives that
  print other processes' environments.

A :class:`Program` says which operands name files; the caller checks those
(and every ``PATH`` value) resolve inside the workspace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .options import Parsed, Refusal, Table, parse, table


@dataclass(frozen=True)
class Program:
    options: Table
    operands: str = "paths"
    """``paths`` (every operand is a file), ``pattern`` (the first is a pattern unless ``-e``/``-f`` gave one),
    ``none`` (operands are not files: names, text), ``one-path`` (at most one file; ``uniq``'s second writes)."""


_HELP = " help version"

PROGRAMS: dict[str, Program] = {
    "cat": Program(table("AbeEnstTuv", long="show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting" + _HELP)),
    "head": Program(table("qvz", "cn", numeric_short=True, long="bytes= lines= quiet silent verbose zero-terminated" + _HELP)),
    "tail": Program(table(
        "qvz", "cns", asks="fF", numeric_short=True,
        long="bytes= follow!a lines= max-unchanged-stats= pid= quiet retry silent sleep-interval= verbose zero-terminated" + _HELP,
    )),
    "wc": Program(table("clLmw", long="bytes chars lines files0-from!l max-line-length words total=" + _HELP)),
    "ls": Program(table(
        "aAbBcCdDfFgGhHiklmnNopqQrRsStuUvxXZ1", "IwT", leaves="L",
        long="all almost-all author escape block-size= ignore-backups color[=] directory dired classify[=] file-type format= "
        "full-time group-directories-first no-group human-readable si dereference-command-line "
        "dereference-command-line-symlink-to-dir hide= hyperlink[=] indicator-style= inode ignore= kibibytes dereference!l "
        "numeric-uid-gid literal hide-control-chars show-control-chars quote-name quoting-style= reverse recursive size sort= "
        "time= time-style= tabsize= width= context zero" + _HELP,
    )),
    "grep": Program(table(
        "EFGPiyvwxcLloqsbHhnTZzaIrUV", "emABCdD", paths="f", leaves="R", numeric_short=True,
        long="extended-regexp fixed-strings basic-regexp perl-regexp regexp= file=path ignore-case no-ignore-case word-regexp "
        "line-regexp null-data no-messages invert-match max-count= byte-offset line-number no-line-number line-buffered "
        "with-filename no-filename label= only-matching quiet silent binary-files= text directories= devices= recursive "
        "dereference-recursive!l include= exclude= exclude-from=path exclude-dir= files-without-match files-with-matches count "
        "initial-tab null before-context= after-context= context= color[=] colour[=] binary" + _HELP,
    ), operands="pattern"),
    "rg": Program(table(
        "cFHhiIlnNopqsSuUvVwxab0", "ABCeEgjmMrtTd", paths="f", leaves="L", writes="z",
        long="after-context= before-context= context= count count-matches color= colors= column no-column context-separator= "
        "crlf debug dfa-size-limit= encoding= engine= field-context-separator= field-match-separator= file=path files "
        "files-with-matches files-without-match fixed-strings follow!l glob= iglob= glob-case-insensitive heading no-heading "
        "hidden no-hidden ignore-case case-sensitive ignore-file=path ignore-file-case-insensitive include-zero invert-match "
        "json line-buffered line-number no-line-number line-regexp max-columns= max-columns-preview max-count= max-depth= "
        "maxdepth= max-filesize= mmap no-mmap multiline multiline-dotall no-config no-filename no-ignore no-ignore-dot "
        "no-ignore-exclude no-ignore-files no-ignore-global no-ignore-parent no-ignore-vcs no-messages no-require-git null "
        "null-data one-file-system only-matching passthru path-separator= pcre2 pre!w pre-glob!w pretty quiet "
        "regex-size-limit= regexp= replace= search-zip!w smart-case sort= sortr= stats text threads= trim type= type-not= "
        "type-add= type-clear= type-list unrestricted vimgrep with-filename word-regexp hostname-bin!w hyperlink-format= "
        "binary no-binary" + _HELP,
    ), operands="pattern"),
    "sort": Program(table(
        "bdfgiMhnRrVcCmsuz", "kSt", writes="oT",
        long="ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting month-sort "
        "human-numeric-sort numeric-sort random-sort random-source=path reverse sort= version-sort batch-size= check[=] "
        "compress-program!w debug files0-from!l key= merge output!w stable buffer-size= field-separator= "
        "temporary-directory!w unique zero-terminated parallel=" + _HELP,
    )),
    "uniq": Program(table(
        "cdDiuz", "fsw",
        long="count repeated all-repeated[=] skip-fields= ignore-case skip-chars= unique zero-terminated check-chars= group[=]" + _HELP,
    ), operands="one-path"),
    "cut": Program(table("nsz", "bcfd", long="bytes= characters= delimiter= fields= complement only-delimited output-delimiter= zero-terminated" + _HELP)),
    "du": Program(table(
        "0abcDHhklmsSx", "Bdt", paths="X", leaves="L",
        long="null all apparent-size block-size= bytes total dereference-args dereference!l max-depth= human-readable inodes si "
        "summarize separate-dirs threshold= time[=] time-style= exclude-from=path exclude= one-file-system count-links "
        "files0-from!l" + _HELP,
    )),
    "df": Program(table(
        "ahHiklPTv", "BtxF",
        long="all block-size= human-readable si inodes local no-sync sync output[=] portability total type= print-type exclude-type=" + _HELP,
    )),
    "stat": Program(table("ft", "c", leaves="L", long="dereference!l file-system format= printf= terse cached=" + _HELP)),
    "file": Program(table(
        "bhiklnNprsE0", "eFP", paths="m", writes="zZC", leaves="Lf",
        long="brief mime mime-type mime-encoding keep-going no-buffer no-pad dereference!l no-dereference preserve-date raw "
        "special-files uncompress!w uncompress-noreport!w magic-file=path files-from!l compile!w separator= print0 extension "
        "apple exclude= exclude-quiet= parameter=" + _HELP,
    )),
    "tree": Program(table(
        "adfxpugshDFqNQrtvcSnCAJXi", "LPITH", writes="oR", leaves="l",
        long="inodes device noreport dirsfirst filesfirst filelimit= charset= du si prune timefmt= sort= matchdirs ignore-case "
        "gitignore fromfile!l" + _HELP,
    )),
    "column": Program(table("tnxeJ", "scoNRHWOEd", long="table separator= output-separator= columns= fillrows json table-columns=" + _HELP)),
    "pwd": Program(table("LP"), operands="none"),
    "echo": Program(table("neE"), operands="none"),
    "printf": Program(table("", writes="v"), operands="none"),
    "which": Program(table("as"), operands="none"),
    "where": Program(table(""), operands="none"),
    "whoami": Program(table("", long=_HELP), operands="none"),
    "printenv": Program(table("0", long="null" + _HELP), operands="none"),
    "basename": Program(table("az", "s", long="multiple suffix= zero" + _HELP), operands="none"),
    "dirname": Program(table("z", long="zero" + _HELP), operands="none"),
}

WRITING_PROGRAMS = frozenset(
    "chgrp chmod chown cp install ln mkdir mkfifo mknod mv rename rm rmdir shred touch truncate unlink tee dd".split()
)
"""Known to change files: plan mode refuses them outright (0.24.4's ``WRITE_ROOT_COMMAND``)."""

_ECHO_OPTIONS = frozenset({"-n", "-e", "-E", "-ne", "-en", "-nE", "-En"})


def judge_options(name: str, args: list[str]) -> tuple[Parsed, list[str]]:
    """The parsed arguments and the operands that name files, for a program of :data:`PROGRAMS`."""
    program = PROGRAMS[name]
    if name in ("echo", "printf"):
        return _text_only(name, args), []
    parsed = parse(name, args, program.options)
    if parsed.refusal is not None:
        return parsed, []
    operands = parsed.operands
    if program.operands == "none":
        return parsed, []
    if program.operands == "pattern":
        given = any(o in ("e", "f", "regexp", "file") for o in parsed.options) or "files" in parsed.options
        return parsed, operands if given else operands[1:]
    if program.operands == "one-path" and len(operands) > 1:
        parsed.refusal = Refusal(f"'{name}' with a second file operand writes its output to that file", writes=True)
    return parsed, operands


def _text_only(name: str, args: list[str]) -> Parsed:
    """``echo`` and ``printf`` print their words: only ``printf -v`` (assigns a variable) is refused, spotted
    anywhere before ``--`` as 0.24.4 does (a later ``-v`` is printed, but the rule stays one simple test)."""
    parsed = Parsed(operands=list(args))
    options = args[: args.index("--")] if "--" in args else args
    if name == "printf" and any(re.match(r"^-[^-]*v", a) for a in options):
        parsed.refusal = Refusal("'printf -v' assigns a shell variable")
    return parsed


_SED_ADDRESS = r"(?:\d+(?:,(?:\d+|\$))?|\$)?"
_SED_SCRIPTS = (
    re.compile(rf"^{_SED_ADDRESS}[p=dq]$"),
    # s/…/…/ with any delimiter that is not a letter, digit, backslash or space; flags that only print or match
    re.compile(rf"^{_SED_ADDRESS}s([^\w\s\\])(?:(?!\1)[^\\\n]|\\[^\n])*\1(?:(?!\1)[^\\\n]|\\[^\n])*\1[gipIM0-9]*$"),
)
"""The sed scripts that can only print: ``5p``, ``1,20p``, ``$=``, ``s/a/b/g``. ``w``/``W``/``r``/``R``/``e``
commands and the ``w``/``e`` flags are what sed writes, reads or runs with; none of these shapes holds one."""
_SED_OPTIONS = frozenset({"-n", "--quiet", "--silent", "-E", "-r", "--regexp-extended", "-s", "--separate", "-u", "--unbuffered", "-z", "--null-data", "--posix"})


def judge_sed(args: list[str]) -> tuple[Refusal | None, list[str]]:
    """A sed whose one script (the first operand) is a printing shape of :data:`_SED_SCRIPTS`, with only
    printing options; the rest of its operands are files. Anything else asks (``-i``, ``-f``, ``w``, ``e``…)."""
    words = [a for a in args if a not in _SED_OPTIONS]
    if not words or any(w.startswith("-") for w in words) or not any(p.match(words[0]) for p in _SED_SCRIPTS):
        return Refusal("a sed script can write files or run commands; only printing scripts ('5p', 's/a/b/g') run without asking"), []
    return None, words[1:]


_PS_WORDS = re.compile(r"^(?:-[AadfFjlLTy]+|-?aux|-?ax|-?aux?w*|-e|-ef|-eF|-efH|--forest|--no-headers|--sort=[-+A-Za-z0-9_,]+)$")
_PS_VALUE = {"-o", "-p", "-u", "-U", "-g", "-G", "-C", "--pid", "--user", "--ppid", "--sort", "-O"}
_PS_VALUE_TEXT = re.compile(r"^[-+A-Za-z0-9_,:=%.]+$")


def judge_ps(args: list[str]) -> Refusal | None:
    """Listing options only; ``e`` in BSD style (environments) and unknown ones ask."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _PS_VALUE and i + 1 < len(args) and _PS_VALUE_TEXT.match(args[i + 1]) and "environ" not in args[i + 1]:
            i += 2
            continue
        if not _PS_WORDS.match(arg) or (not arg.startswith("-") and "e" in arg):
            return Refusal(f"'ps {arg}' is not a listing option known to be harmless")
        i += 1
    return None


ALIASES = {"ripgrep": "rg"}
"""Other names a read-only program is installed under."""

ASK_ALWAYS = {
    "awk": "an awk program can run commands and write files",
    "gawk": "an awk program can run commands and write files",
    "less": "a pager runs the programs LESSOPEN and its '!' command name",
    "more": "a pager can run commands",
}
