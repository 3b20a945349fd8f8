#!/usr/bin/python3
"""One spelling for includes in src/ (issue 11, module boundaries).

Every `#include "..."` in src/MODULE/ is either a public header, "convgate/...", or one of the
module's own private headers spelled from the module's name, "MODULE/...". The build already
refuses another module's private header (each module's include path holds only a link to its own
folder, src/CMakeLists.txt); this check catches the second spelling the compiler would accept, a
bare "header.h" found beside the including file, and says which line to change.

Third-party headers included with quotes are listed in THIRD_PARTY. Usage: private_includes.py
[SOURCE_DIR] (default: the checkout this file is in). Exits 1 listing every offending line.
"""
import os
import re
import sys

THIRD_PARTY = ("hwy/",)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def offending_lines(source_dir):
    src = os.path.join(source_dir, "src")
    for root, _, files in os.walk(src):
        module = os.path.relpath(root, src).split(os.sep)[0]
        for name in sorted(files):
            if not name.endswith((".h", ".cc")):
                continue
            path = os.path.join(root, name)
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    header = match.group(1)
                    allowed = ("convgate/", module + "/") + THIRD_PARTY
                    if module != "." and not header.startswith(allowed):
                        yield "%s:%d: \"%s\" (spell it \"convgate/...\" or \"%s/...\")" % (
                            os.path.relpath(path, source_dir), number, header, module)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    source_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(here))
    bad = list(offending_lines(source_dir))
    for line in bad:
        print(line)
    print("private includes: %d offending line(s)" % len(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
