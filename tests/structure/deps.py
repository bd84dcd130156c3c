#!/usr/bin/python3
"""Dependencies point one way (DESIGN.md, "Layout"): a check that fails on an
include or a call that points back up.

    engine -> fabric -> mem -> core -> {diktamo, axle} -> {node, models} -> app

A module may use the modules to its left, itself, and the leaves (stats,
config, workload) — which themselves use only leaves. camp stands apart: it
reads counters and never reaches into the simulator, so it may use only
leaves. Two checks:

  includes  every #include "cxlsim/X.h" in src/<module>/ and in the public
            headers maps X.h to its module (the table below: a header missing
            from it fails the check, so a new one must be placed) and must be
            allowed; a private header of another module ("../m/x_priv.h") never is.
  calls     with BUILD_DIR given: every symbol a module's static library
            (libcxs_<module>.a) leaves undefined and another of the project's
            libraries defines must come from an allowed module (nm).

    deps.py SRC_DIR [BUILD_DIR]
Exit status 0 when both hold, 1 listing every violation.
"""
import os
import re
import subprocess
import sys

LEAVES = {"stats", "config", "workload"}
# Programs built apart from the simulator (a Valgrind tool: no libc, Valgrind's
# own libraries) may use the leaves' headers only.
TOOLS = {"vgtool"}
LEVEL = {"engine": 0, "fabric": 1, "mem": 2, "core": 3, "diktamo": 4, "axle": 4,
         "node": 5, "models": 5, "app": 6}
APART = {"camp"}

# Public header -> the module that implements it.
HEADER_MODULE = {
    "engine.h": "engine", "model.h": "engine", "startup.h": "engine",
    "stats.h": "stats", "h5out.h": "stats", "publish.h": "stats",
    "config.h": "config", "errmsg.h": "config", "utf8.h": "config",
    "kthread.h": "workload", "trace.h": "workload", "trace_record.h": "workload",
    "page_map.h": "workload", "lock_order.h": "workload", "cxltrace.h": "workload",
    "cxltrace_proto.h": "workload",
    "fabric.h": "fabric", "nport.h": "fabric",
    "addr_map.h": "mem", "cache.h": "mem", "coherence.h": "mem", "dram.h": "mem",
    "line_map.h": "mem", "tier.h": "mem",
    "core.h": "core", "tester.h": "core", "protocol.h": "core",
    "diktamo.h": "diktamo", "axle.h": "axle",
    "memsys.h": "node", "phold.h": "models",
    "camp.h": "camp",
}

# Library name -> module (src/CMakeLists.txt).
LIB_MODULE = {"cxs_engine": "engine", "cxs_stats": "stats", "cxs_config": "config",
              "cxs_workload": "workload", "cxs_fabric": "fabric", "cxs_mem": "mem",
              "cxs_core": "core", "cxs_diktamo": "diktamo", "cxs_axle": "axle",
              "cxs_node": "node", "cxs_phold": "models", "cxs_camp": "camp"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def allowed(user, used):
    if user == used or used in LEAVES:
        return True
    if user in LEAVES or user in APART or user in TOOLS or used in APART:
        return False
    return LEVEL[used] < LEVEL[user]


def module_of_source(rel):
    parts = rel.split(os.sep)
    return parts[1] if len(parts) > 2 and parts[0] == "src" else None


def check_includes(src):
    bad = []
    files = []
    for root, _, names in os.walk(os.path.join(src, "src")):
        files += [os.path.join(root, n) for n in names if n.endswith((".c", ".h"))]
    for name in os.listdir(os.path.join(src, "include", "cxlsim")):
        files.append(os.path.join(src, "include", "cxlsim", name))
    for path in sorted(files):
        rel = os.path.relpath(path, src)
        if rel.startswith("include"):
            user = HEADER_MODULE.get(os.path.basename(path))
            if user is None:
                bad.append(f"{rel}: public header not placed in a module (tests/structure/deps.py)")
                continue
        else:
            user = module_of_source(rel)
            if user not in LEVEL and user not in LEAVES and user not in APART and user not in TOOLS:
                bad.append(f"{rel}: module '{user}' has no place in the dependency order")
                continue
        text = open(path, encoding="utf-8").read()
        for inc in INCLUDE.findall(text):
            line = text[:text.find(f'"{inc}"')].count("\n") + 1
            if inc.startswith("cxlsim/"):
                used = HEADER_MODULE.get(inc[len("cxlsim/"):])
                if used is None:
                    bad.append(f"{rel}:{line}: includes {inc}, a header not placed in a module")
                elif not allowed(user, used):
                    bad.append(f"{rel}:{line}: {user} includes {inc} of {used}, which "
                               f"is not to its left")
            elif "/" in inc:
                bad.append(f"{rel}:{line}: includes {inc}: another module's private header")
    return bad


def nm(lib):
    out = subprocess.run(["nm", "-g", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    defined = {l.split()[-1] for l in out.splitlines() if len(l.split()) >= 3}
    out = subprocess.run(["nm", "-g", "-u", lib], capture_output=True, text=True,
                         check=True).stdout
    undefined = {l.split()[-1] for l in out.splitlines() if l.strip() and ":" not in l}
    return defined, undefined


def check_calls(build):
    libs = {}
    for root, _, names in os.walk(build):
        for n in names:
            m = re.fullmatch(r"lib(cxs_\w+)\.a", n)
            if m and m.group(1) in LIB_MODULE:
                libs[m.group(1)] = os.path.join(root, n)
    if not libs:
        return [f"{build}: no libcxs_*.a found (build first)"]
    info = {name: nm(path) for name, path in libs.items()}
    owner = {}
    for name, (defined, _) in info.items():
        for sym in defined:
            owner.setdefault(sym, name)
    bad = []
    for name, (_, undefined) in sorted(info.items()):
        user = LIB_MODULE[name]
        for sym in sorted(undefined):
            lib = owner.get(sym)
            if lib is None or lib == name:
                continue
            used = LIB_MODULE[lib]
            if not allowed(user, used):
                bad.append(f"lib{name}.a ({user}) calls {sym} of {used}, which is not to its left")
    return bad


def main(argv):
    src = argv[1]
    bad = check_includes(src)
    if len(argv) > 2:
        bad += check_calls(argv[2])
    for b in bad:
        print("dependency: " + b)
    if bad:
        print(f"{len(bad)} dependencies point the wrong way")
        return 1
    print("dependencies: every include and call points left (or at a leaf)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
