"""Random DRA CEL expressions for the cost-estimator fixture (tests/api/data/dra_cel_cost.json).

Composes selectors and derived-attribute expressions from the constructs the estimator models
(strings, ints, lists, comprehensions, cel.bind, quantities, semvers), in random environments;
many exceed the cost limit, some do not compile or yield a refused type. Usage:

    python random_expressions.py SEED COUNT > /tmp/r.json
    GOFLAGS=-mod=mod GOPROXY=off go run . < /tmp/r.json > /tmp/ro.json

then append entries of /tmp/ro.json to the fixture. The fixture holds 200 of seed 31337, count 600.
"""
import json
import random
import sys

rnd = random.Random(int(sys.argv[1]))
DOM = ['"dra.example.com"', '"gpu.example.com"', 'device.driver']
def attr(): return f'device.attributes[{rnd.choice(DOM)}].{rnd.choice(["model","count","healthy","version","models"])}'
def cap(): return f'device.capacity[{rnd.choice(DOM)}].{rnd.choice(["memory","cores"])}'
def s(d):
    opts = [lambda: '"' + rnd.choice(["", "a", "abc", "日本", "x-y-z"]) + '"', lambda: 'device.driver', attr,
            lambda: f'{s(d+1)} + {s(d+1)}', lambda: f'{s(d+1)}.lowerAscii()', lambda: f'{s(d+1)}.substring(1)',
            lambda: f'{s(d+1)}.replace({s(d+1)}, {s(d+1)})', lambda: f'{s(d+1)}.split("-")[0]',
            lambda: f'{s(d+1)}.split("-").join(",")', lambda: f'({b(d+1)} ? {s(d+1)} : {s(d+1)})',
            lambda: f'string({i(d+1)})', lambda: f'{s(d+1)}.trim()']
    return rnd.choice(opts[:3] if d > 2 else opts)()
def i(d):
    opts = [lambda: str(rnd.randint(0, 100)), attr, lambda: f'{s(d+1)}.size()', lambda: f'{i(d+1)} + {i(d+1)}',
            lambda: f'{i(d+1)} * {i(d+1)}', lambda: f'{cap()}.asInteger()', lambda: f'{s(d+1)}.indexOf({s(d+1)})',
            lambda: f'device.attributes.size()', lambda: f'{l(d+1)}.size()', lambda: f'{attr()}.major()']
    return rnd.choice(opts[:2] if d > 2 else opts)()
def l(d):
    opts = [lambda: '[' + ', '.join(s(d+1) for _ in range(rnd.randint(0, 3))) + ']', lambda: f'{s(d+1)}.split(",")',
            lambda: f'{l(d+1)}.filter(x, {b(d+1, "x")})', lambda: f'{l(d+1)}.map(x, x + "a")',
            lambda: f'{l(d+1)} + {l(d+1)}', lambda: 'device.attributes.map(k, k)']
    return rnd.choice(opts[:2] if d > 2 else opts)()
def b(d, var=None):
    opts = [lambda: rnd.choice(["true", "false"]), lambda: f'{s(d+1)} == {s(d+1)}', lambda: f'{i(d+1)} > {i(d+1)}',
            lambda: f'{s(d+1)}.startsWith({s(d+1)})', lambda: f'{s(d+1)}.contains({s(d+1)})',
            lambda: f'{s(d+1)}.matches("^a.*")', lambda: f'{b(d+1)} && {b(d+1)}', lambda: f'{b(d+1)} || !{b(d+1)}',
            lambda: f'{l(d+1)}.exists(y, y == {s(d+1)})', lambda: f'{l(d+1)}.all(y, y.size() < {i(d+1)})',
            lambda: f'device.attributes.exists(k, device.attributes[k].exists(j, j == {s(d+1)}))',
            lambda: f'{s(d+1)} in {l(d+1)}', lambda: f'has(device.attributes[{rnd.choice(DOM)}].model)',
            lambda: f'{cap()}.isGreaterThan(quantity("1Gi"))', lambda: f'{attr()}.isLessThan(semver("1.0.0"))',
            lambda: f'cel.bind(v, {s(d+1)}, v.size() > {i(d+1)})', lambda: f'{attr()}', lambda: f'{s(d+1)} < {s(d+1)}',
            lambda: f'{l(d+1)}.exists_one(y, y.endsWith({s(d+1)}))']
    if var: opts.append(lambda: f'{var}.startsWith({s(d+1)})')
    return rnd.choice(opts[:3] if d > 2 else opts)()
out = []
for n in range(int(sys.argv[2])):
    lt = rnd.random() < 0.4
    if rnd.random() < 0.2:
        e = rnd.choice([s, i, l])(0)
        out.append(dict(expression=e, consumableCapacity=True, listTypeAttributes=lt, derivedAttribute=True))
    else:
        out.append(dict(expression=b(0), consumableCapacity=rnd.random() < 0.7, listTypeAttributes=lt, derivedAttribute=False))
print(json.dumps(out, indent=1))
