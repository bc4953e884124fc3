"""The Go text/template renderer: what scheduler_perf's templates use, with Go's semantics."""
import pytest

from fastsched.perf.gotemplate import Template, TemplateError, render

DATA = {"Index": 7, "Count": 10, "ratio": 2.5, "items": ["a", "b"], "labels": {"b": 2, "a": 1}}


@pytest.mark.parametrize("text, want", [
    ("name: node-{{.Index}}", "name: node-7"),
    ("{{ .Index }}/{{ .Count }}", "7/10"),
    ("zone-{{div .Index 3}}", "zone-2"),                       # v1.34's one extra function
    ("{{div -7 2}}", "-3"),                                     # Go truncates toward zero
    ("{{ .Index | printf \"%05d\" }}", "00007"),
    ("a {{- \" b \" -}} c", "a b c"),                           # trim markers
    ("{{/* a comment */}}x", "x"),
    ("{{if eq .Index 7}}yes{{else}}no{{end}}", "yes"),
    ("{{if lt .Index 3}}s{{else if lt .Index 8}}m{{else}}l{{end}}", "m"),
    ("{{range $i, $e := .items}}{{$i}}={{$e}},{{end}}", "0=a,1=b,"),
    ("{{range .labels}}{{.}}{{end}}", "12"),                    # maps range in key order
    ("{{range 3}}{{.}}{{end}}", "012"),
    ("{{range .nothing}}x{{else}}empty{{end}}", "empty"),
    ("{{with .Index}}{{.}}{{end}}", "7"),
    ("{{$x := div .Count 2}}{{$x}}{{$x = 1}}{{$x}}", "51"),
    ("{{.Missing}}", "<no value>"),
    ("{{.ratio}} {{MultiplyInt .ratio 3}} {{Mod 7 3}} {{AddFloat 1 2}} {{DivideInt 9 2}}", "2.5 7 1 3 4"),
    ("{{print 1 2 \"a\" 3}}", "1 2a3"),
    ("{{and 1 0}}{{or 0 \"\" 3}}{{not 0}}", "03true"),
    ("{{len .items}} {{index .items 1}} {{index .labels \"a\"}}", "2 b 1"),
    ("{{ 0x10 }} {{ 1_000 }} {{ 1.50 }} {{ 'a' }}", "16 1000 1.5 97"),
    # v1.37's Int and JSON (operations.go: toInt, toJSON), as the DRA templates use them
    ("{{range (\"3\" | Int)}}{{.}}{{end}} {{Int 2.9}} {{Int -2.9}} {{Int \"+4\"}}", "012 2 -2 4"),
    ("{{$n := (or .numDevices 2) | Int}}{{$n}}", "2"),
    ("{{JSON .labels}} {{JSON .items}} {{JSON .ratio}} {{JSON 3.0}} {{JSON \"a<b\"}}",
     '{"a":1,"b":2} ["a","b"] 2.5 3 "a<b"'),
    ("{{JSON 1e-7}} {{JSON 1e21}} {{JSON 1e20}}", "1e-7 1e+21 100000000000000000000"),
    # nil as an argument (evalArg): the DRA claim templates' (or .selectors nil) | JSON
    ("{{$s := (or .selectors nil) | JSON}}{{$s}}", "null"),
])
def test_render(text, want):
    assert render(text, DATA) == want


@pytest.mark.parametrize("text, message", [
    ("{{.Index", "unclosed action"),
    ("{{nope 1}}", 'function "nope" not defined'),
    # Go's identifiers are Unicode letters and digits (an AttributeError from the lexer before)
    ("{{é 1}}", 'function "é" not defined'),
    ("{{div .Index 0}}", "integer divide by zero"),
    ("{{if 1}}x", "unexpected EOF"),
    ("{{end}}", "unexpected {{end}}"),
    ('{{template "x"}}', "not supported"),
    ("{{.Index.Field}}", "can't evaluate field Field in type int"),
    ("{{$y}}", "undefined variable: $y"),
    ("{{nil}}", "nil is not a command"),
    ('{{Int "1.5"}}', "error calling Int: cannot cast 1.5 to int"),
    ('{{Int " 1"}}', "error calling Int: cannot cast  1 to int"),
    ("{{Int true}}", "error calling Int: cannot cast true to int"),
])
def test_errors_are_clear(text, message):
    with pytest.raises(TemplateError, match="template: t.yaml:1:") as err:
        Template(text, name="t.yaml").execute(DATA)
    assert message in str(err.value)


def test_static_templates_are_rendered_once():
    assert Template("a: {{ div 4 2 }}").is_static
    assert not Template("a: {{ .Index }}").is_static
    assert not Template("{{ range 2 }}{{ . }}{{ end }}").is_static


def _interpreted(t: Template, data) -> str:
    out: list[str] = []
    t._run(t.nodes, data, [("$", data)], out)
    return "".join(out)


def test_flat_path_renders_as_the_interpreter():
    """``execute``'s flat path (root-level text and printing actions) against the interpreter, on
    every vendored template and the table above: the same text, or no flat answer where the
    interpreter raises (``execute`` then raises the interpreter's error)."""
    import re
    from pathlib import Path

    root = Path(__file__).parent / "data" / "upstream-v1.37.2"
    texts = [p.read_text() for p in sorted(root.rglob("*.yaml")) if "{{" in p.read_text()]
    texts += [text for text, _ in test_render.pytestmark[0].args[1]]
    texts += ["{{.Index}}{{.Index.x}}", "{{DivideInt .Index 0}}", "{{.a.b}}", "{{ \"s\" }}-{{ 3 }}-{{ true }}"]
    flat = 0
    for text in texts:
        t = Template(text, name="t.yaml")
        fields = set(re.findall(r"\.([A-Za-z_]\w*)", text))
        for i in (0, 1, 2, 7, 10, 4999, 5000, 123456):
            for data in ({**{f: 3 for f in fields}, "Index": i, "Count": 10}, {"Index": i}, {**DATA, "Index": i},
                         {"Index": i, "a": {"b": i}}):
                try:
                    want = _interpreted(t, data)
                except TemplateError:
                    want = None
                got = t._run_flat(t._flat, data) if t._flat is not None else want
                assert got == want, (text, data)
                assert t.execute(data) == want if want is not None else True
        flat += t._flat is not None
    assert flat >= 30  # the flat path is taken (the upstream pod templates that print .Index)
