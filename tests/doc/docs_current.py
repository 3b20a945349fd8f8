#!/usr/bin/python3
"""Checks that the generated documents are current and complete.

docs/reference.md must be exactly what `convgate docs reference` prints (every command's --help,
from the flag table) and docs/environment.md what `convgate docs environment` prints (the table of
src/cli/environment.cc). Every environment variable the sources name ("CONVGATE_...", "HF_..." as
a string literal, or getenv("NAME")) must be in that table. A failure says how to regenerate.

Usage: docs_current.py CONVGATE_BINARY SOURCE_DIR
"""

import difflib
import os
import re
import subprocess
import sys

# Build options named in messages ("rebuild with CONVGATE_WITH_OPENVINO=ON"), not variables read.
NOT_VARIABLES = re.compile(r"^CONVGATE_WITH_")
LITERAL = re.compile(r'"((?:CONVGATE|HF)_[A-Z0-9_]+)"')
GETENV = re.compile(r'getenv\("([A-Z0-9_]+)"\)|NonEmptyEnv\("([A-Z0-9_]+)"\)|EnvOr\("([A-Z0-9_]+)"')
# Read by the system or a library, not by convgate's own code: documented anyway, never required.
SYSTEM = {"PATH", "HOME", "XDG_CACHE_HOME"}


def generated(binary, what):
    result = subprocess.run([binary, "docs", what], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"convgate docs {what} exited {result.returncode}: {result.stderr}")
    return result.stdout


def check_current(binary, source, what, problems):
    path = os.path.join(source, "docs", f"{what}.md")
    want = generated(binary, what)
    have = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
    if want != have:
        diff = "".join(list(difflib.unified_diff(have.splitlines(True), want.splitlines(True),
                                                 f"docs/{what}.md", "generated"))[:40])
        problems.append(f"docs/{what}.md is not current; regenerate it with\n"
                        f"  build/src/cli/convgate docs {what} > docs/{what}.md\n{diff}")
    return want


def variables_in_sources(source):
    found = {}
    for folder in ("src", "include"):
        for root, _, files in os.walk(os.path.join(source, folder)):
            for name in files:
                if not name.endswith((".cc", ".h")):
                    continue
                path = os.path.join(root, name)
                text = open(path, encoding="utf-8", errors="replace").read()
                names = set(LITERAL.findall(text))
                for groups in GETENV.findall(text):
                    names.update(g for g in groups if g)
                for variable in names:
                    if not NOT_VARIABLES.match(variable) and variable not in SYSTEM:
                        found.setdefault(variable, os.path.relpath(path, source))
    return found


def main():
    binary, source = sys.argv[1], os.path.abspath(sys.argv[2])
    problems = []
    check_current(binary, source, "reference", problems)
    environment = check_current(binary, source, "environment", problems)
    documented = set(re.findall(r"^\| `([A-Z0-9_]+)`", environment, re.M))
    found = variables_in_sources(source)
    for variable, where in sorted(found.items()):
        if variable not in documented:
            problems.append(f"{where} reads {variable}, which src/cli/environment.cc does not "
                            "list")
    print(f"docs: reference.md and environment.md checked; {len(found)} variables named in the "
          f"sources, {len(documented)} documented")
    for problem in problems:
        print("PROBLEM: " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
