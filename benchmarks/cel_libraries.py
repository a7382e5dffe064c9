"""Compare the Python CEL libraries kapi could build x-kubernetes-validations on.

Run: ``python benchmarks/cel_libraries.py``. For each candidate (cel-expr-python, cel-python,
common-expression-language) it prints, side by side, the compile time and evaluation time of
representative CRD rules, and what each offers for the Kubernetes CEL libraries: typed custom
functions, macros, type checking, cel-go-compatible error text and cost tracking. A library that
is not installed is reported as such.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

OBJ: dict[str, Any] = {
    "replicas": 3,
    "maxReplicas": 5,
    "items": [{"name": f"x{i}"} for i in range(50)],
    "host": "foo.example.com",
}
RULES = {
    "compare": "self.replicas <= self.maxReplicas",
    "all(50)": "self.items.all(i, i.name.startsWith('x'))",
    "regex": "self.host.matches('^[a-z.]+$') && self.host.endsWith('.com')",
}
BAD_RULE = "self.foo > "


def _per_call(fn: Callable[[], Any], seconds: float = 0.3) -> float:
    """Mean seconds per call over about ``seconds`` of repetitions."""
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn()
        n += 1
    return (time.perf_counter() - start) / n


def _error_text(compile_: Callable[[str], Any]) -> str:
    try:
        compile_(BAD_RULE)
    except Exception as e:  # each library raises its own type
        return str(e).splitlines()[0][:90]
    return "(accepted)"


def bench_cel_expr_python() -> dict[str, Any]:
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_strings

    t = cel.Type
    env = cel.NewEnv(
        variables={"self": t.Map(t.STRING, t.DYN)},
        extensions=[ext_strings.ExtStrings()],
        functions=[
            cel.FunctionDecl(
                "isSorted",
                [
                    cel.Overload(
                        "list_is_sorted",
                        t.BOOL,
                        [t.List(t.DYN)],
                        is_member=True,
                        impl=lambda xs: list(xs) == sorted(xs),
                    )
                ],
            )
        ],
    )
    out: dict[str, Any] = {}
    for name, rule in RULES.items():
        out[f"compile {name}"] = _per_call(lambda r=rule: env.compile(r))
        expr = env.compile(rule)
        assert expr.eval(data={"self": OBJ}).value() is True
        out[f"eval {name}"] = _per_call(lambda e=expr: e.eval(data={"self": OBJ}))
    custom = env.compile("[1, 2, 3].isSorted() && 'A'.lowerAscii() == 'a'")
    out["custom functions"] = f"typed overloads: {custom.eval().value()}"
    out["type checker"] = "yes"
    out["error text"] = _error_text(env.compile)
    out["cost tracking"] = "no (estimate over the serialized checked AST)"
    return out


def bench_cel_python() -> dict[str, Any]:
    import celpy

    env = celpy.Environment()
    act = {"self": celpy.json_to_cel(OBJ)}
    out: dict[str, Any] = {}
    for name, rule in RULES.items():
        out[f"compile {name}"] = _per_call(lambda r=rule: env.program(env.compile(r)))
        prg = env.program(env.compile(rule))
        out[f"eval {name}"] = _per_call(lambda p=prg: p.evaluate(act))
    prg = env.program(
        env.compile("[1, 2, 3].isSorted()"),
        functions={"isSorted": lambda xs: celpy.celtypes.BoolType(list(xs) == sorted(xs))},
    )
    out["custom functions"] = f"untyped, by name: {bool(prg.evaluate({}))}"
    out["type checker"] = "no"
    out["error text"] = _error_text(env.compile)
    out["cost tracking"] = "no (pure Python: evaluator could be instrumented)"
    return out


def bench_common_expression_language() -> dict[str, Any]:
    import cel

    out: dict[str, Any] = {}
    ctx = {"self": OBJ}
    for name, rule in RULES.items():
        out[f"compile {name}"] = _per_call(lambda r=rule: cel.compile(r))
        prg = cel.compile(rule)
        out[f"eval {name}"] = _per_call(lambda p=prg: p.execute(ctx))
    context = cel.Context(functions={"isSorted": lambda xs: list(xs) == sorted(xs)})
    ok = cel.evaluate("isSorted([1, 2, 3])", context)
    out["custom functions"] = f"untyped, global only: {ok}"
    out["type checker"] = "no"
    out["error text"] = _error_text(cel.compile)
    out["cost tracking"] = "no"
    return out


CANDIDATES = {
    "cel-expr-python": bench_cel_expr_python,
    "cel-python": bench_cel_python,
    "common-expression-language": bench_common_expression_language,
}


def _fmt(v: Any) -> str:
    return f"{v * 1e6:10.1f} µs" if isinstance(v, float) else str(v)


def main() -> None:
    results: dict[str, dict[str, Any]] = {}
    for name, bench in CANDIDATES.items():
        try:
            results[name] = bench()
        except ImportError:
            results[name] = {}
    rows = next((list(r) for r in results.values() if r), [])
    for row in rows:
        print(row)
        for name, r in results.items():
            print(f"  {name:28} {_fmt(r[row]) if r else 'not installed'}")
    base = results.get("cel-expr-python")
    if base:
        print("\nevaluation time relative to cel-expr-python:")
        for rule in RULES:
            ratios = ", ".join(
                f"{n} {r[f'eval {rule}'] / base[f'eval {rule}']:.1f}x"
                for n, r in results.items()
                if r
            )
            print(f"  {rule}: {ratios}")


if __name__ == "__main__":
    main()
