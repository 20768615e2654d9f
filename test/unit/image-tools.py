#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# test/unit/image-tools.py - run by test/unit/deploy.sh from the top of the
# tree: does deploy/Containerfile install every program the DaemonSet's DKMS
# build and the node script run?  The path is deploy/gpreempt-node.sh,
# dkms.conf's MAKE script, the scripts they and
# the Makefile's BTF layout, BPF maps and modules recipes run (transitively),
# and those recipes.  Every interpreter (#!) and every command found there
# (shell: words in command position; Python: ["prog", "-opt", ...] lists)
# must be in TOOLS, the table below, and its Debian package installed by the
# Containerfile or part of every Debian image (Essential or required: BASE).
# A new command on the path fails here until the table names its package.
# Prints what it found; exits 1 with one line per missing program.
# --list: only the commands, one a line (test/image-check looks for each in
# the built image).
import os
import re
import sys

# command -> the Debian package that has it
TOOLS = {
    "bash": "bash", "sh": "dash", "python3": "python3",
    "make": "make", "gcc": "gcc", "clang": "clang", "bpftool": "bpftool",
    "objcopy": "binutils", "objdump": "binutils", "readelf": "binutils",
    "pahole": "dwarves", "modinfo": "kmod", "dkms": "dkms",
    "xz": "xz-utils", "zstd": "zstd", "gzip": "gzip", "awk": "mawk",
    "sed": "sed", "grep": "grep", "cmp": "diffutils", "find": "findutils", "xargs": "findutils",
    "jq": "jq", "nsenter": "util-linux",
    **{c: "coreutils" for c in """cat chmod cp cut date dirname head ln mkdir mktemp mv nproc od readlink rm
        rmdir sha256sum sleep sort tail tr uname""".split()},
}
# In every Debian image (Essential or Priority: required), slim ones too.
BASE = set("bash dash coreutils sed grep findutils mawk gzip diffutils tar util-linux debianutils".split())
SHELL_WORDS = set("""case esac if then elif else fi for in do done while until function select
    local set trap echo printf exit return cd test [ [[ read shift export true false : eval wait
    unset readonly declare break continue type command exec pwd kill""".split())
# Case labels (keep|unload|skip|init) and words of deploy/gpreempt-node.sh that the
# scanner takes for commands.
NOT_COMMANDS = set("keep unload skip init line module-params mismatch signature src-id health features".split())

def apt_packages(path):
    text = open(path).read().replace("\\\n", " ")
    pkgs = set()
    for m in re.finditer(r"apt-get install ([^&;]*)", text):
        pkgs |= {w for w in m.group(1).split() if not w.startswith("-")}
    return pkgs

def unquote(s, i=0, sub=None):
    """Shell code of text s: quoted strings, ${...}, $((...)) and comments
    blanked ("Q"); each command substitution $(...), inside double quotes
    too, replaced by "Q" and its code added as a line of its own.  With sub
    (a list), scan a substitution from i to its ")": return (code, end)."""
    out, extra, depth, dq = [], [], 0, False
    while i < len(s):
        ch = s[i]
        if s.startswith("$((", i):
            j = s.find("))", i)
            out.append("Q")
            i = len(s) if j < 0 else j + 2
        elif s.startswith("$(", i):
            code, i = unquote(s, i + 2, extra)
            extra.append(code)
            out.append("Q")
        elif dq:
            if ch == "\\":
                i += 1
            elif ch == '"':
                dq = False
            i += 1
        elif ch == "\\":
            out.append(" ")
            i += 2
        elif ch == "'":
            j = s.find("'", i + 1)
            out.append("Q")
            i = len(s) if j < 0 else j + 1
        elif ch == '"':
            dq = True
            out.append("Q")
            i += 1
        elif s.startswith("${", i):
            j = s.find("}", i)
            out.append("Q")
            i = len(s) if j < 0 else j + 1
        elif ch == "#" and (i == 0 or s[i - 1] in " \t\n;"):
            j = s.find("\n", i)
            i = len(s) if j < 0 else j
        elif sub is not None and ch == "(":
            depth += 1
            out.append(ch)
            i += 1
        elif sub is not None and ch == ")":
            if depth == 0:
                sub.extend(extra)
                return "".join(out), i + 1
            depth -= 1
            out.append(ch)
            i += 1
        else:
            out.append(ch)
            i += 1
    if sub is not None:
        sub.extend(extra)
        return "".join(out), i
    return "\n".join(["".join(out)] + extra)

def sh_commands(text, funcs=()):
    """Words in command position of shell text (a heuristic): commands,
    and paths of scripts/ it runs."""
    found = set()
    for line in unquote(text).splitlines():
        for seg in re.split(r"\|\||&&|[|;&(){}`!]|\b(?:then|do|else|if|elif|while|until|time)\b", line):
            words = [w for w in seg.split() if not re.match(r"[A-Za-z_][A-Za-z0-9_]*=", w)]
            if not words or words[0] in SHELL_WORDS or words[0] in funcs:
                continue
            m = re.fullmatch(r"(?:\./)?(?:MKVAR/|\$top/)?(scripts/[a-z][a-z0-9-]*)", words[0])
            if m:
                found.add(m.group(1))
            elif re.fullmatch(r"[a-z][a-z0-9_.+-]*", words[0]):
                found.add(words[0])
    return found

def py_commands(text):
    """The programs a Python script runs: list literals ["prog", "-opt", ...]."""
    return set(re.findall(r"""\[\s*["']([a-z][a-z0-9_.+-]*)["']\s*,\s*["']-""", text))

def interpreter(path):
    first = open(path, errors="replace").readline()
    if not first.startswith("#!"):
        return None
    words = first[2:].split()
    return os.path.basename(words[1] if os.path.basename(words[0]) == "env" else words[0])

# The Makefile's part the module build runs: from its BTF layout section to
# the matrix target; make's variables for the tools replaced by their value.
mk = open("Makefile").read()
mk = mk[mk.index("# --- BTF layout"):mk.index("# Every cached kernel")]
raw_btf = re.search(r"define raw_btf\n(.*?)\nendef", mk, re.S).group(1)
mk = re.sub(r"\$\(call raw_btf,[^)]*\)", lambda m: raw_btf, mk)
mk = mk.replace("$$", "\0")
for var, val in (("CC_USER", "gcc"), ("CLANG", "clang"), ("BPFTOOL", "bpftool"), ("MAKE", "make"),
                 ("KBUILD_RUN", ""), ("TOP", ".")):
    mk = mk.replace("$(%s)" % var, val)
shell = re.findall(r"\$\(shell ([^()]*(?:\([^()]*\)[^()]*)*)\)", mk)
recipes = [l.lstrip("\t@-") for l in mk.splitlines() if l.startswith("\t")]
mk_sh = "\n".join(recipes + shell)
while re.search(r"\$\([^()]*\)", mk_sh):
    mk_sh = re.sub(r"\$\([^()]*\)", "MKVAR", mk_sh)
mk_sh = mk_sh.replace("\0", "$")

dkms_make = re.search(r'^MAKE\[0\]="([^ "]+)', open("dkms.conf").read(), re.M).group(1)
todo, seen, need = [dkms_make, "deploy/gpreempt-node.sh"], set(), {}
for c in sh_commands(mk_sh):
    if c.startswith("scripts/"):
        todo.append(c)
    else:
        need.setdefault(c, "the Makefile's module recipes")
while todo:
    f = todo.pop()
    if f in seen or not os.path.isfile(f):
        continue
    seen.add(f)
    text = open(f, errors="replace").read()
    interp = interpreter(f)
    if interp is None:
        continue                     # data (layout.spec, ibt-indirect.list) or C
    need.setdefault(interp, f + " (its #!)")
    if interp == "python3":
        cmds = py_commands(text)
    else:
        cmds = sh_commands(text, set(re.findall(r"^\s*([A-Za-z_][\w-]*)\s*\(\)", text, re.M)))
    for c in cmds:
        if c in NOT_COMMANDS:
            continue
        if c.startswith("scripts/"):
            todo.append(c)
        else:
            need.setdefault(c, f)

if sys.argv[1:] == ["--src-id"]:
    # Is every input of the DKMS build in the node script's SRC_ID_PATHS
    # (the id that decides whether a new image rebuilds the module)?  The
    # scripts on the build path, the files the module recipes name
    # ($(TOP)/..., not test/: GP_DKMS=1 builds no test module), module/Kbuild's
    # sources and include directories, dkms.conf, the Makefile, Kbuild.
    node = open("deploy/gpreempt-node.sh").read()
    m = re.search(r'^SRC_ID_PATHS="([^"]*)"', node, re.M)
    if not m:
        print("deploy/gpreempt-node.sh has no SRC_ID_PATHS")
        sys.exit(1)
    paths = m.group(1).split()
    inputs = {f for f in seen if f != "deploy/gpreempt-node.sh"} | {"dkms.conf", "Makefile", "Kbuild"}
    raw = open("Makefile").read()
    raw = raw[raw.index("# --- BTF layout"):raw.index("# Every cached kernel")]
    inputs |= {f.rstrip("/") for f in re.findall(r"\$\(TOP\)/([A-Za-z0-9_./-]+)", raw)
               if not f.startswith(("test/", "build/")) and os.path.exists(f.rstrip("/"))}
    kb = open("module/Kbuild").read().replace("\\\n", " ")
    for o in re.findall(r"([A-Za-z0-9_./-]+)\.o\b", re.search(r"^gpreempt-y :=(.*)$", kb, re.M).group(1)):
        inputs.add(os.path.normpath(os.path.join("module", o + ".c")))
    for d in re.findall(r"-I\$\(src\)/([A-Za-z0-9_./-]+)", kb):
        d = os.path.normpath(os.path.join("module", d))
        if os.path.isdir(d) and d.split("/")[0] != "build":    # build/: the build's own output
            inputs.add(d)
    missing = sorted(f for f in inputs if not any(f == p or f.startswith(p + "/") for p in paths))
    print("module build inputs:", " ".join(sorted(inputs)))
    if missing:
        print("not in deploy/gpreempt-node.sh's SRC_ID_PATHS (a change there would not rebuild the module):",
              " ".join(missing))
        sys.exit(1)
    sys.exit(0)
if sys.argv[1:] == ["--list"]:    # for test/image-check: the commands, one a line
    print("\n".join(sorted(need)))
    sys.exit(0)
have = apt_packages("deploy/Containerfile") | BASE
bad = []
for c, where in sorted(need.items()):
    if c not in TOOLS:
        bad.append("%s (run by %s): not in this test's table: add it with its Debian package" % (c, where))
    elif TOOLS[c] not in have:
        bad.append("%s (run by %s): its package %s is not installed by deploy/Containerfile" % (c, where, TOOLS[c]))
print("scripts on the module build path:", " ".join(sorted(seen)))
print("commands:", " ".join(sorted(need)))
if bad:
    print("\n".join(bad))
    sys.exit(1)
