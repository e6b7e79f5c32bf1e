#!/usr/bin/env python3
"""The layering docs/architecture.md promises, checked on a built tree:
no call loop between two files of one folder (from the objects' symbol
tables), no include loop, oci/ includes only runtime.h and config.h from
runtime/, and nothing includes oci/.  Prints each violation; exit 1 if any.
usage: layering.py TOP"""
import glob, os, re, subprocess, sys

top = sys.argv[1]
bad = []

def call_graph(folder):
    defs, und = {}, {}
    for o in glob.glob(os.path.join(top, 'build/obj', folder, '*.o')):
        f = os.path.basename(o)[:-2] + '.c'
        und[f] = set()
        out = subprocess.run(['nm', o], capture_output=True, text=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'TDBR':
                defs[p[2]] = f
            elif len(p) == 2 and p[0] == 'U':
                und[f].add(p[1])
    return {f: {defs[s] for s in u if s in defs and defs[s] != f}
            for f, u in und.items()}

def reach(g, a):
    seen, todo = set(), [a]
    while todo:
        for y in g.get(todo.pop(), ()):
            if y not in seen:
                seen.add(y)
                todo.append(y)
    return seen

def loops(g, what):
    r = {f: reach(g, f) for f in g}
    for a in sorted(g):
        for b in sorted(r[a]):
            if a < b and a in r.get(b, ()):
                bad.append('%s loop: %s <-> %s' % (what, a, b))

folders = ['common', 'runtime', 'image', 'oci', 'cow', 'criu-lite']
for d in folders:
    if glob.glob(os.path.join(top, 'build/obj', d, '*.o')):
        loops(call_graph(d), 'call (%s)' % d)
    inc = {}
    for f in glob.glob(os.path.join(top, d, '*.[ch]')):
        rel = os.path.relpath(f, top)
        inc[rel] = set()
        for m in re.findall(r'#include "([^"]+)"', open(f).read()):
            for c in (os.path.join(d, m), m):
                if os.path.exists(os.path.join(top, c)):
                    inc[rel].add(os.path.normpath(c))
                    break
            if m.startswith('oci/') or '/oci/' in m:
                bad.append('%s includes %s: nothing includes oci/' % (rel, m))
            if d == 'oci' and m.startswith('runtime/') and \
                    m not in ('runtime/runtime.h', 'runtime/config.h'):
                bad.append('%s includes %s: oci/ takes only runtime.h '
                           'and config.h' % (rel, m))
    loops(inc, 'include (%s)' % d)

for b in bad:
    print(b)
print('%d violation(s)' % len(bad))
sys.exit(1 if bad else 0)
