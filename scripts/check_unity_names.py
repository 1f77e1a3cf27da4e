#!/usr/bin/env python3
"""Guards the unity build (TRAINSIM_UNITY_BUILD, on in CI's sanitized build) against its one silent hazard.

A unity batch compiles several .cc files of a target as one translation unit, so a file-local function
(anonymous namespace or `static`) of one file becomes visible to the files after it in the batch. Two
file-local definitions with the same signature fail loudly ("redefinition"), but a call in another file
to a same-named function with other parameters can silently bind to the file-local one when it is a better
overload match. This check refuses any file-local function whose name also appears as an identifier in
another source of the same target followed by "(" (a call or a declaration, not a member access), so
that no call can be captured whatever the batching.

  check_unity_names.py TARGETS_DIR    one TARGET.txt per unity target, one source path per line (absolute,
                                      or relative to TARGETS_DIR)
                                      (CMakeLists.txt's trainsim_unity writes them into the build tree)
Exit 0 when clean; 1 with one line per clash.
"""
import os
import re
import sys

IDENT = re.compile(r"[A-Za-z_]\w*")
# A name as a call can use it: followed by "(", not a member access (which never finds a free function),
# not qualified by std:: or a class (CamelCase here); qualified by a namespace it can (the anonymous
# namespace's names are visible to qualified lookup in the namespace around it).
CALL_SITE = re.compile(r"(?<![\w.>])((?:[A-Za-z_]\w*::)*)([A-Za-z_]\w*)\s*\(")


def called_names(code):
    names = set()
    for qualifier, name in CALL_SITE.findall(code):
        last = qualifier[:-2].rsplit("::", 1)[-1] if qualifier else ""
        if last != "std" and not last[:1].isupper():
            names.add(name)
    return names
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "decltype", "alignof", "static_assert",
            "catch", "operator", "noexcept", "requires", "defined"}


def strip_comments_and_literals(text):
    """Source with comments, string and character literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == 'R' and text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(' ""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(' "" ')
            i = j + 1
        else:
            out.append(c)
            i += 1
    # Preprocessor lines (with their continuations) are no statements.
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", "", "".join(out), flags=re.M)


def file_local_functions(code):
    """Names of functions declared at namespace scope inside an anonymous namespace, or `static`."""
    names = set()
    scopes = []  # per open brace: "anon", "namespace" or "other"
    pending = ""  # the text since the last statement boundary at namespace scope
    paren = 0
    for ch in code:
        at_namespace_scope = all(s != "other" for s in scopes)
        if ch == "(":
            paren += 1
        elif ch == ")":
            paren -= 1
        if ch == "{" and paren == 0:
            header = pending.strip()
            if at_namespace_scope:
                m = re.search(r"\bnamespace\s*([\w:]*)\s*$", header)
                if m:
                    scopes.append("namespace" if m.group(1) else "anon")
                    pending = ""
                    continue
                record(header, scopes, names)
            scopes.append("other")
            pending = ""
        elif ch == "}" and paren == 0:
            if scopes:
                scopes.pop()
            pending = ""
        elif ch == ";" and paren == 0:
            if at_namespace_scope:
                record(pending.strip(), scopes, names)
            pending = ""
        else:
            pending += ch
    return names


def record(statement, scopes, names):
    """Adds the function a namespace-scope statement declares, if it is file-local."""
    local = "anon" in scopes or re.match(r"(template\s*<[^;{]*>\s*)?(\[\[\w+\]\]\s*)*static\b", statement)
    if not local or "(" not in statement:
        return
    head = statement[: statement.index("(")]
    if "=" in head or re.match(r"\s*(using|typedef|struct|class|enum|union)\b", head):
        return
    words = IDENT.findall(head)
    if words and words[-1] not in KEYWORDS and not head.rstrip().endswith("operator"):
        names.add(words[-1])


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    clashes = []
    for listing in sorted(os.listdir(sys.argv[1])):
        if not listing.endswith(".txt"):
            continue
        with open(os.path.join(sys.argv[1], listing)) as f:
            # Relative paths are relative to the listing (the test's fixture); CMake writes absolute ones.
            sources = [os.path.join(sys.argv[1], line.strip()) for line in f if line.strip().endswith(".cc")]
        code = {}
        for path in sources:
            with open(path, errors="replace") as f:
                code[path] = strip_comments_and_literals(f.read())
        called = {path: called_names(text) for path, text in code.items()}
        for path in sources:
            for name in sorted(file_local_functions(code[path])):
                for other in sources:
                    if other != path and name in called[other]:
                        clashes.append(f"{path}: file-local function '{name}' is also named in {other} "
                                       f"(target {listing[:-4]}): in a unity batch a call there could bind "
                                       "to it; give it a name unique in its target")
    for line in clashes:
        print(line)
    return 1 if clashes else 0


if __name__ == "__main__":
    sys.exit(main())
