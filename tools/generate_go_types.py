#!/usr/bin/env python3
"""Generate ``fastsched/api/_go_types.py``: the Go type of every field of ``_schema.json``.

Developer script, not run by CI. The Python client's models say ``int`` for int32 and int64 and
``str`` for strings, named string types and resource quantities alike; the API server's decoder
(encoding/json) refuses by the Go type, and names it in its message (``json: cannot unmarshal
string into Go struct field PodSpec.spec.volumes of type []v1.Volume``). This script reads the Go
structs of ``k8s.io/api`` and ``k8s.io/apimachinery`` (git checkouts) and writes, for each model
of the schema, each JSON field's Go type as encoding/json prints it, with pointers dropped (the
decoder allocates them)::

    python3 tools/generate_go_types.py --api ~/src/api --apimachinery ~/src/apimachinery
    python3 tools/generate_go_types.py ... --check   # exit 1 if the file is stale

Output: a module (packaged like any other, unlike a data file) whose ``GO_TYPES`` is
``{"types": {"V1Volume": {"persistentVolumeClaim": "v1.PersistentVolumeClaimVolumeSource",
...}}, "kinds": {"v1.PodPhase": "string", "v1.ResourceList": "map[v1.ResourceName]resource.Quantity",
...}}``: ``kinds`` maps each named non-struct type to its underlying type, so the decoder can tell
which JSON values a field takes.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "fastsched" / "api" / "_schema.json"
OUTPUT = ROOT / "fastsched" / "api" / "_go_types.py"

# k8s.io/api groups whose types the schema uses (package name v1 throughout)
API_GROUPS = ("core", "apps", "batch", "policy", "scheduling", "storage", "resource", "node")
# client model prefixes that name the group of an ambiguous struct name
PREFIXED = {"CoreV1": "core", "ResourceV1": "resource", "StorageV1": "storage"}
# package aliases of the Go sources -> the package name reflect prints
PACKAGE_NAMES = {"metav1": "v1", "v1": "v1", "resource": "resource", "intstr": "intstr",
                 "types": "types", "runtime": "runtime", "corev1": "v1", "apiv1": "v1", "apiresource": "resource",
                 "schedulingv1alpha3": "v1alpha3"}
BUILTINS = {"string", "bool", "int", "int32", "int64", "uint", "uint32", "uint64", "float32",
            "float64", "byte"}

_STRUCT_RE = re.compile(r"^type (\w+) struct \{\n(.*?)^\}", re.M | re.S)
_NAMED_RE = re.compile(r"^type (\w+) ([^\s{=][^\n{]*)$", re.M)
_FIELD_RE = re.compile(r"^\s*(?:(\w+)\s+)?([\w.*\[\]]+)\s+`[^`]*json:\"([^\"]*)\"")


def _sources(root: Path, pattern: str) -> str:
    return "\n".join(path.read_text() for path in sorted(root.glob(pattern)))


def _parse(text: str, package: str) -> tuple[dict, dict]:
    """(structs, named): struct name -> [(field name or None for embedded, go type, json name)]
    and named non-struct type -> underlying type text."""
    text = re.sub(r"//[^\n]*", "", text)
    structs = {}
    for match in _STRUCT_RE.finditer(text):
        fields = []
        for line in match.group(2).splitlines():
            field = _FIELD_RE.match(line)
            if field:
                fields.append((field.group(1), field.group(2), field.group(3).split(",")[0]))
        structs[match.group(1)] = fields
    named = {name: underlying.strip() for name, underlying in _NAMED_RE.findall(text)
             if not underlying.startswith(("interface", "func"))}
    return structs, named


def _qualify(go_type: str, package: str) -> str:
    """The type as reflect prints it, pointers dropped: ``*PodSpec`` -> ``v1.PodSpec``."""
    go_type = go_type.lstrip("*")
    if go_type.startswith("[]"):
        return "[]" + _qualify(go_type[2:], package)
    if go_type.startswith("map["):
        depth, index = 0, 3
        for index in range(3, len(go_type)):
            depth += {"[": 1, "]": -1}.get(go_type[index], 0)
            if depth == 0:
                break
        return f"map[{_qualify(go_type[4:index], package)}]{_qualify(go_type[index + 1:], package)}"
    if go_type in BUILTINS:
        return go_type
    if "." in go_type:
        alias, name = go_type.split(".", 1)
        return f"{PACKAGE_NAMES[alias]}.{name}"
    return f"{package}.{go_type}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--api", type=Path, required=True, help="a k8s.io/api checkout")
    parser.add_argument("--apimachinery", type=Path, required=True, help="a k8s.io/apimachinery checkout")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()

    groups: dict[str, tuple[dict, dict]] = {}
    for group in API_GROUPS:
        groups[group] = _parse(_sources(args.api / group / "v1", "types.go"), "v1")
    meta = args.apimachinery / "pkg" / "apis" / "meta" / "v1"
    groups["meta"] = _parse(_sources(meta, "*types.go") + _sources(meta, "*time.go"), "v1")

    kinds: dict[str, str] = {}
    for group, (structs, named) in groups.items():
        for name, underlying in named.items():
            kinds[f"v1.{name}"] = _qualify(underlying, "v1")
        for name in structs:
            kinds.setdefault(f"v1.{name}", "struct")

    schema = json.loads(SCHEMA.read_text())
    out: dict[str, dict[str, str]] = {}
    # scheduling.k8s.io/v1beta1 and v1alpha3 models: their Go types are written beside the models in
    # generate_api_schema.py (this parser reads package v1 only)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from generate_api_schema import GO_KINDS_AFTER_CLIENT, MODELS_AFTER_CLIENT
    kinds.update(GO_KINDS_AFTER_CLIENT)
    for model, model_fields in MODELS_AFTER_CLIENT.items():
        for version in ("v1beta1", "v1alpha3"):  # scheduling.k8s.io/v1alpha3: a Job's spec.scheduling
            prefix = "V1" + version[2:]
            if model.startswith(prefix):
                kinds[f"{version}.{model[len(prefix):]}"] = "struct"
    for model, fields in schema["types"].items():
        if model.startswith(("V1beta1", "V1alpha3")):
            out[model] = {json_name: MODELS_AFTER_CLIENT[model][json_name][1] for json_name in fields}
            continue
        prefix = next((p for p in PREFIXED if model.startswith(p + "V1") or model.startswith(p)), None)
        name = re.sub(r"^(?:CoreV1|ResourceV1|StorageV1|V1)", "", model)
        candidates = [PREFIXED[prefix]] if prefix else [g for g in groups if name in groups[g][0]]
        found = None
        for group in candidates:
            flat = _flatten(groups, group, name)
            if flat is not None and set(fields) <= set(flat) | {"apiVersion", "kind"}:
                found = flat
                break
        if found is None:
            print(f"no Go struct for {model} ({candidates})", file=sys.stderr)
            return 1
        out[model] = {json_name: found.get(json_name, "string") for json_name in fields}

    table = json.dumps({"types": out, "kinds": dict(sorted(kinds.items()))}, separators=(",", ":"))
    text = ('"""The Go type of every field of ``_schema.json`` (generated by tools/generate_go_types.py;\n'
            'do not edit)."""\n# fmt: off\nGO_TYPES = ' + table + "\n")
    if args.check:
        if OUTPUT.read_text() != text:
            print(f"{OUTPUT} is stale", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text)
    return 0


def _flatten(groups: dict, group: str, name: str) -> dict[str, str] | None:
    """JSON name -> Go type of a struct's fields, embedded (inline) structs flattened in."""
    structs = groups[group][0]
    if name not in structs:
        return None
    flat: dict[str, str] = {}
    for field_name, go_type, json_name in structs[name]:
        if field_name is None and json_name == "":
            embedded = go_type.lstrip("*")
            inner_group, inner = ("meta", embedded.split(".", 1)[1]) if embedded.startswith("metav1.") \
                else (group, embedded)
            inner_flat = _flatten(groups, inner_group, inner)
            if inner_flat is not None:
                flat.update(inner_flat)
            continue
        if json_name == "-":
            continue
        flat[json_name] = _qualify(go_type, "v1")
    return flat


if __name__ == "__main__":
    sys.exit(main())
