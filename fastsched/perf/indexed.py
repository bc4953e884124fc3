"""A template's YAML parsed once for every ``Index``: per-object values substituted in the parsed
document where that is provably what rendering and parsing would give.

Why: scheduler_perf's createPods renders the pod template once per pod; a template that prints
``{{.Index}}`` (``pod-with-extended-resource.yaml``: ``foo.com/bar-{{.Index}}``) gives every pod
its own text, and each text was parsed as YAML (~80 µs a pod, ~30% of making one).

:func:`index_plan` renders the template once with a sentinel ``Index`` and parses that text; the
plan's :meth:`IndexPlan.document` then makes the document for any index by putting the index's
digits where the sentinel's are. That is the rendering's parse when all of these hold (checked
when the plan is made; otherwise there is no plan and the caller renders and parses):

- the template's output depends on ``Index`` only through root-level actions that print it,
  ``{{.Index}}`` (no function, no condition, no range or with body, no ``.`` or ``$``): so the text
  for index ``i`` is the sentinel's text with ``str(i)`` for each sentinel;
- every sentinel of the text is inside a scalar (key or value) with no tag, anchor or alias in the
  document, and the scalar's value holds as many whole sentinels as its source text (a
  double-quoted escape that reads digits, ``"\\x4{{.Index}}"``, breaks one): digits for digits
  then changes neither where the scalar starts and ends nor its other characters (no YAML syntax
  is made of digits outside escapes), so the scalar's value is the sentinel's value with the
  index's digits;
- the scalar's type is resolved again for each index, as go-yaml v2 resolves it (a plain
  ``{{.Index}}`` is an int, ``bar-{{.Index}}`` a string, ``0b{{.Index}}`` a string or an int by
  the digits): a string or an int of the sentinel's own type is made here, anything else makes
  :meth:`IndexPlan.document` answer None (the caller renders); a key that becomes equal to another
  key of its mapping answers None too.

The document is the typed decoding's (``convert``: :func:`fastsched.api.schema.typed_yaml`): an
int slot in a string field (a label ``index: {{.Index}}``) is the int's text, as upstream's
sigs.k8s.io/yaml makes it; the plan records which slots those are from the sentinel's document.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

import yaml

from ..util.goyaml import GoYAMLTypedLoader, go_resolve
from .gotemplate import DEFAULT_FUNCS, MISSING

__all__ = ["IndexPlan", "ResiduePlan", "index_plan", "prints_index_only", "residue_plan"]

#: the sentinel index: digits no template is likely to contain (checked: the plan is refused when
#: the rendering holds them where no ``{{.Index}}`` put them)
SENTINEL = 9073614825
_S = str(SENTINEL)
_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_INT64_MAX = (1 << 63) - 1


def _resolve(text: str) -> str:
    return go_resolve(text)[0]


def prints_index_only(template: Any) -> bool:
    """Whether ``template`` (a :class:`~fastsched.perf.gotemplate.Template`) reads ``Index`` only in
    root-level actions that print ``.Index`` alone, and reads no ``.`` or ``$`` (through which it
    could reach ``Index`` otherwise)."""
    def pipe_refs(pipe: Any) -> tuple[bool, bool]:
        # (reads Index, reads dot / $ / a field chain through Index)
        index = other = False
        for cmd in pipe.cmds:
            for op in cmd:
                if isinstance(op, tuple):
                    i, o = pipe_refs(op[1])
                    index, other = index or i, other or o
                elif op.kind == "dot" or (op.kind == "var" and op.value[0] == "$"):
                    other = True   # ``.`` or the root variable ``$``: the data itself
                elif op.kind == "field" and op.value and op.value[0] == "Index":
                    index = True
        return index, other

    def plain_print(node: Any) -> bool:
        pipe = node.pipe
        return (not pipe.decl and len(pipe.cmds) == 1 and len(pipe.cmds[0]) == 1
                and not isinstance(pipe.cmds[0][0], tuple) and pipe.cmds[0][0].kind == "field"
                and pipe.cmds[0][0].value == ["Index"])

    def ok(nodes: list, root: bool) -> bool:
        for n in nodes:
            if n.pipe is not None:
                index, other = pipe_refs(n.pipe)
                if other:
                    return False
                if index and not (root and n.kind == "action" and plain_print(n)):
                    return False
            if not ok(n.body, False) or not ok(n.orelse, False):
                return False
        return True

    return ok(template.nodes, True)


class IndexPlan:
    """The parsed document of a template for the sentinel index and where its sentinels are."""

    def __init__(self, doc: Any, slots: list[tuple[tuple, bool, list[str], str]],
                 texts: list[tuple[str, bool]] | None = None):
        self.doc = doc
        #: (path of containers to the scalar, is a mapping key, the scalar's parts around the
        #: sentinels, plain or quoted)
        self.slots = slots
        #: per slot: the tag the sentinel's scalar resolved to, and whether the typed decoding
        #: made its value text (an int in a string field)
        self.texts = texts if texts is not None else [(_STR, True)] * len(slots)

    def document(self, index: int) -> Any | None:
        """The document rendering and parsing the template for ``index`` gives, or None: a value
        whose type is not a string or an int, or a key that collides (the caller renders)."""
        digits = str(index)
        values: list[Any] = []
        for (_path, is_key, parts, style), (sentinel_tag, as_text) in zip(self.slots, self.texts):
            text = digits.join(parts)
            if style == "plain":
                tag, value = go_resolve(text)
                if tag != sentinel_tag:
                    return None  # another type than the sentinel's: its target is not known here
                if tag == _INT:
                    if value > _INT64_MAX:
                        return None  # (a uint64: sigs.k8s.io/yaml refuses it as a key)
                    values.append(str(value) if is_key or as_text else value)
                    continue
                if tag != _STR:
                    return None
            values.append(text)
        return _substituted(self.doc, self.slots, values)


def _copy(x: Any) -> Any:
    # fresh containers, as a parse makes (the decoder may keep or change what it is given)
    if type(x) is dict:
        return {k: _copy(v) for k, v in x.items()}
    if type(x) is list:
        return [_copy(v) for v in x]
    return x


def _substituted(doc: Any, slots: list, values: list[Any]) -> Any | None:
    out = _copy(doc)
    # keys last: a key's path names the containers by the sentinel keys above it, so values (whose
    # paths read the sentinel keys) go first, then keys from the deepest up
    order = sorted(range(len(slots)), key=lambda i: (slots[i][1], -len(slots[i][0])))
    for i in order:
        path, is_key, _parts, _style = slots[i]
        container = out
        for step in path[:-1]:
            container = container[step]
        last = path[-1]
        if is_key:
            if values[i] in container:
                return None  # two keys equal: the parse would keep one, not reproduced here
            # the mapping's order stays the parse's: rebuild it with the key renamed
            items = [(values[i] if k == last else k, v) for k, v in container.items()]
            container.clear()
            container.update(items)
        else:
            container[last] = values[i]
    return out


def index_plan(text: str, loader: Callable[[str], Any] = GoYAMLTypedLoader,
               convert: Callable[[Any], Any] | None = None, sentinel: str = _S) -> IndexPlan | None:
    """The plan for ``text``, a template rendered with ``Index`` = :data:`SENTINEL` (by a template
    for which :func:`prints_index_only` holds), or None when the conditions above do not hold.
    ``convert`` turns the loaded document into the decoder's (the typed conversion); a YAML
    error from it is no plan (the caller's parse reports it). ``sentinel``: the digits the Index
    printed as, when not :data:`SENTINEL`'s (:class:`ResiduePlan`'s renderings)."""
    if not text.isascii():
        return None  # the parser's marks would be byte offsets where the text has wider characters
    try:
        ldr = loader(text)
        try:
            node = ldr.get_single_node()
            if node is None:
                return None
            doc = ldr.construct_document(node)
        finally:
            ldr.dispose()
    except yaml.YAMLError:
        return None
    slots: list[tuple[tuple, bool, list[str], str]] = []
    seen: set[int] = set()
    found = 0

    def scalar_slot(n: Any, path: tuple, is_key: bool) -> bool:
        nonlocal found
        raw = text[n.start_mark.index:n.end_mark.index]
        count = raw.count(sentinel)
        if count == 0:
            return sentinel not in n.value
        if n.value.count(sentinel) != count or raw[:1] in ("!", "&", "*"):
            return False
        style = "plain" if n.style in (None, "") else "quoted"
        if style == "quoted" and n.tag != _STR:
            return False
        if style == "plain" and n.tag != _resolve(n.value):
            return False  # an explicit tag
        found += count
        slots.append((path, is_key, n.value.split(sentinel), style))
        return True

    def walk(n: Any, d: Any, path: tuple) -> bool:
        if id(n) in seen:
            return False  # an alias: one object at two paths
        seen.add(id(n))
        if isinstance(n, yaml.ScalarNode):
            return scalar_slot(n, path, False)
        if isinstance(n, yaml.SequenceNode):
            if type(d) is not list or len(d) != len(n.value):
                return False
            return all(walk(c, d[i], path + (i,)) for i, c in enumerate(n.value))
        if isinstance(n, yaml.MappingNode):
            if type(d) is not dict or len(d) != len(n.value):
                return False  # merge keys (<<) or duplicate keys
            for k, v in n.value:
                if not isinstance(k, yaml.ScalarNode):
                    return False
                key = ldr_key(k)
                if key not in d:
                    return False
                if not scalar_slot(k, path + (key,), True) or not walk(v, d[key], path + (key,)):
                    return False
            return True
        return False

    def ldr_key(k: Any) -> Any:
        # the constructed key of a scalar key node: its text as sigs.k8s.io/yaml writes it
        if k.tag == _INT:
            value = go_resolve(k.value)[1]
            return str(value) if value <= _INT64_MAX else object()
        if k.tag == _STR:
            return k.value
        return object()  # other key types: not in the document's keys, refused above

    try:
        if not walk(node, doc, ()):
            return None
    except RecursionError:
        return None  # nested deeper than the walk's stack: no plan, the caller parses each text
    if found == 0 or found != text.count(sentinel):
        return None
    if convert is not None:
        try:
            doc = convert(doc)
        except yaml.YAMLError:
            return None
    texts = []
    for path, is_key, parts, style in slots:
        tag = _resolve(sentinel.join(parts)) if style == "plain" else _STR
        as_text = True
        if tag == _INT and not is_key:
            container = doc
            for step in path[:-1]:
                container = container[step]
            as_text = type(container[path[-1]]) is str
        texts.append((tag, as_text))
    return IndexPlan(doc, slots, texts)


# -- pods that differ by their name only, per residue of the index ---------------------------------
#: how many indices from :data:`SENTINEL` on are tried for one with given residues
_RESIDUE_SEARCH = 4096


def _flat_field(data: Any, chain: tuple) -> Any:
    # a field chain as the template's flat path reads it (``Template._run_flat``)
    x = data
    for name in chain:
        if type(x) is dict or isinstance(x, Mapping):
            x = x.get(name, MISSING)
        else:
            raise TypeError("a field of a non-map")  # (the interpreter's error: the caller renders)
    return x


class ResiduePlan:
    """Where a flat template reads ``Index``: printed alone (``{{.Index}}``) or as the first
    argument of ``Mod`` with a second one that is not ``Index`` (``{{Mod .Index .classes}}``,
    ``pod-with-extended-resource.yaml`` of dra/extendedresource), each as a whole root-level action.

    Why: createPods renders the template once per pod (~10 µs) and looks its text up with the
    name masked (another ~8 µs) to find that pods of one class share all but their names (issue
    27: every measured pod of the ExtendedResource cases). The rendering for index ``i`` is then
    the same for every ``i`` with the same ``Mod`` values (its *residues*) up to the ``{{.Index}}``
    prints, which print ``str(i)``. :meth:`name_parts` renders once per residues, with an index
    that has those residues, and keeps where its prints are when they are all in
    ``metadata.name`` (so pods of one residues differ by their name alone); the caller then makes
    each later pod of those residues by its name, without rendering (``WorkloadOps._residue_factory``,
    which also checks the first pod's rendered name against the kept parts).

    ``prints``: how many ``{{.Index}}`` prints; ``mods``: the ``Mod`` calls, (function, its second
    operand as the flat path reads it), each distinct call once; ``entries``: residues -> what the
    caller keeps for them."""

    __slots__ = ("prints", "mods", "entries")

    def __init__(self, prints: int, mods: tuple[tuple[Callable[..., Any], tuple[bool, Any]], ...]):
        self.prints = prints
        self.mods = mods
        self.entries: dict[tuple, Any] = {}

    def residues(self, env: Mapping[str, Any]) -> tuple:
        """The ``Mod`` values of the rendering with ``env`` (the same calls on the same arguments as
        the rendering; it raises what they raise)."""
        index = env.get("Index", MISSING)
        return tuple(fn(index, _flat_field(env, operand) if is_field else operand)
                     for fn, (is_field, operand) in self.mods)

    def name_parts(self, template: Any, env: Mapping[str, Any], residues: tuple) -> tuple[tuple[str, ...], bool] | None:
        """(``metadata.name``'s text split where ``Index`` prints, whether it is a plain scalar)
        of the renderings with ``env`` but ``Index`` whose residues are ``residues``, or None when
        some print is elsewhere (or the rendering is not one plain document, or no index near
        :data:`SENTINEL` has these residues)."""
        for k in range(_RESIDUE_SEARCH):
            candidate = {**env, "Index": SENTINEL + k}
            try:
                if self.residues(candidate) == residues:
                    break
            except Exception:  # noqa: BLE001 - no plan: the caller renders
                return None
        else:
            return None
        sentinel = str(candidate["Index"])
        try:
            text = template.execute(candidate)
        except Exception:  # noqa: BLE001
            return None
        if text.count(sentinel) != self.prints:
            return None  # digits of the sentinel elsewhere in the text
        plan = index_plan(text, sentinel=sentinel)
        if plan is None or type(plan.doc) is not dict or len(plan.slots) != 1:
            return None
        path, is_key, parts, style = plan.slots[0]
        if is_key or path != ("metadata", "name") or len(parts) != self.prints + 1:
            return None
        return tuple(parts), style == "plain"


def residue_plan(template: Any) -> ResiduePlan | None:
    """The :class:`ResiduePlan` of ``template`` (a flat, non-static template that prints
    ``{{.Index}}``), or None when it reads ``Index`` in any other way."""
    parts = template.flat_parts
    if parts is None or template.is_static:
        return None
    mod = DEFAULT_FUNCS["Mod"]
    index_op = (True, ("Index",))
    prints = 0
    mods = []
    for part in parts:
        if type(part) is str:
            continue
        if not any(is_field and v[:1] == ("Index",) for _fn, ops in part for is_field, v in ops):
            continue
        if len(part) != 1:
            return None  # a pipeline: its later commands read the value
        fn, ops = part[0]
        if fn is None and ops == (index_op,):
            prints += 1
        elif (fn is mod and len(ops) == 2 and ops[0] == index_op
              and not (ops[1][0] and ops[1][1][:1] == ("Index",))):
            if (fn, ops[1]) not in mods:  # (the same call twice prints the same value twice)
                mods.append((fn, ops[1]))
        else:
            return None
    if not prints:
        return None  # (the name does not change with the index: nothing to share by name)
    return ResiduePlan(prints, tuple(mods))
