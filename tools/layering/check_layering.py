#!/usr/bin/python3
"""Checks Tessel's folder graph: no cycle between packages, and no dependency against the order of
tools/layering/layers.txt between top-level folders.

Reads every rule's direct dependencies from `bazel query --output=xml` (run in the workspace, or
given with --xml FILE). Libraries, binaries (benchmarks, fuzzers, tools) and genrules are checked.
Tests and test-only libraries are not: nothing depends on them, so they cannot close a cycle, and an
integration test may drive a component through the layers above it.

usage: check_layering.py [--xml FILE] [--layers FILE]
       check_layering.py --self-test
"""
import argparse
import collections
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

LABEL_ATTRS = ("deps", "data", "srcs", "hdrs", "tools", "tests", "actual", "script")


def read_layers(path):
    ranks = {}
    for line in open(path):
        line = line.split("#", 1)[0].split()
        if line:
            ranks[line[1]] = int(line[0])
    return ranks


def query_xml(root):
    return subprocess.run(
        ["bazel", "query", "--noshow_progress", "--noimplicit_deps", "kind(rule, //...)", "--output=xml"],
        cwd=root, check=True, capture_output=True, text=True).stdout


def parse_rules(xml_text):
    """{label: (kind, testonly, [dependency labels])} for the workspace's own rules."""
    rules = {}
    for rule in ET.fromstring(xml_text).iter("rule"):
        name, kind = rule.get("name"), rule.get("class")
        testonly = kind.endswith("_test") or kind == "test_suite"
        deps = []
        for child in rule:
            attr = child.get("name")
            if child.tag == "boolean" and attr == "testonly" and child.get("value") == "true":
                testonly = True
            if attr in LABEL_ATTRS:
                deps += [e.get("value") for e in child.iter("label")]
                if child.tag == "label" and child.get("value"):
                    deps.append(child.get("value"))
        rules[name] = (kind, testonly, [d for d in deps if d and d.startswith("//")])
    return rules


def package(label):
    return label[2:].split(":", 1)[0]


def top(pkg):
    return pkg.split("/", 1)[0]


def check(rules, ranks):
    problems = []
    edges = collections.defaultdict(set)  # package -> packages, with one example edge each
    example = {}
    for label, (kind, testonly, deps) in sorted(rules.items()):
        if testonly or kind.endswith("_test") or kind == "test_suite":
            continue
        src = package(label)
        for dep in deps:
            dst = package(dep)
            if dst == src:
                continue
            edges[src].add(dst)
            example.setdefault((src, dst), "%s -> %s" % (label, dep))
            a, b = top(src), top(dst)
            if a == b:
                continue
            if a not in ranks or b not in ranks:
                problems.append("%s -> %s: folder %r is not in layers.txt" % (label, dep, a if a not in ranks else b))
            elif ranks[b] >= ranks[a]:
                problems.append("%s -> %s: %s (rank %d) may not depend on %s (rank %d)"
                                % (label, dep, a, ranks[a], b, ranks[b]))
    # Package cycles (Tarjan's strongly connected components).
    index, low, stack, on, sccs = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    for comp in sccs:
        members = set(comp)
        lines = [example[(a, b)] for a in comp for b in sorted(edges[a]) if b in members]
        problems.append("package cycle between %s:\n    %s" % (", ".join(comp), "\n    ".join(lines)))
    return problems


def self_test(ranks):
    """The checker must catch what it is for: an upward dependency and a cycle."""
    def rule(name, kind, deps, testonly=False):
        return name, (kind, testonly, deps)
    ok = dict([rule("//graph:g", "cc_library", ["//support:s"]), rule("//support:s", "cc_library", []),
               rule("//graph:t", "cc_test", ["//graph:g", "//tools/frontend:models", "//cli:tessel"]),
               rule("//graph:u", "cc_library", ["//graph:g", "//runtime:r"], testonly=True),
               rule("//tools/frontend:models", "_py_testdata", [])])
    assert check(ok, ranks) == [], check(ok, ranks)
    upward = dict(ok, **dict([rule("//support:s", "cc_library", ["//graph:g"])]))
    found = check(upward, ranks)
    assert any("support (rank 1) may not depend on graph" in p for p in found), found
    assert any("package cycle between graph, support" in p for p in found), found
    cycle = dict([rule("//kernels/a:x", "cc_library", ["//kernels/b:y"]), rule("//kernels/b:y", "cc_library", ["//kernels/a:z"]),
                  rule("//kernels/a:z", "cc_library", [])])
    found = check(cycle, ranks)
    assert len(found) == 1 and "package cycle between kernels/a, kernels/b" in found[0], found
    print("self-test passed")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--xml", help="bazel query --output=xml of kind(rule, //...), instead of running it")
    ap.add_argument("--layers", default=os.path.join(here, "layers.txt"))
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    ranks = read_layers(args.layers)
    if args.self_test:
        self_test(ranks)
        return 0
    xml_text = open(args.xml).read() if args.xml else query_xml(os.path.dirname(os.path.dirname(here)))
    rules = parse_rules(xml_text)
    problems = check(rules, ranks)
    for p in problems:
        print("layering: " + p)
    print("layering: %d rules in %d packages checked, %d problem(s)"
          % (len(rules), len({package(r) for r in rules}), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
