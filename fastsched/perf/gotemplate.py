"""A small Go ``text/template`` renderer: what scheduler_perf's templates use, with Go's semantics.

scheduler_perf renders every node, pod, namespace and ``createAny``/``updateAny`` file as a Go
template executed with ``{"Index": i, "Count": n}`` (plus the op's ``templateParams`` in newer
releases) before decoding it as YAML. This module implements the part of the language those files
and reasonable user files need, and refuses the rest with a clear error instead of misreading it:

- text, actions ``{{ pipeline }}``, trim markers ``{{-`` / ``-}}``, comments ``{{/* ... */}}``;
- pipelines ``arg | fn a b`` (the piped value is the last argument), parenthesized pipelines,
  variables (``$x := ...``, ``$x = ...``, ``$`` the root data), fields ``.Index``, ``.a.b``,
  ``$x.Field``, ``.``; literals: integers (decimal, ``0x``, ``0o``, ``0b``, ``_`` separators),
  floats, strings ``"..."`` and raw strings, characters ``'a'``, ``true``, ``false``, ``nil``;
- ``if`` / ``else if`` / ``else`` / ``end``, ``with``, ``range`` (lists, maps in key order, and
  integers as Go 1.22 ranges them; ``$i, $e :=``; ``break`` / ``continue``);
- Go's built-in functions ``and or not len index print printf println eq ne lt le gt ge``;
- scheduler_perf's functions: ``div`` (v1.33/v1.34 ``create.go``: integer division) and the later
  ``AddInt AddFloat SubtractInt SubtractFloat MultiplyInt MultiplyFloat DivideInt DivideFloat Mod``,
  and v1.37's ``Int`` (numbers truncated, decimal strings) and ``JSON`` (encoding/json, no HTML
  escaping).

``define``, ``template``, ``block`` and method calls are not supported (no scheduler_perf file
uses them) and are reported as such. Values print as Go's ``fmt.Sprint`` prints them (``3.0`` is
``3``, ``true``, ``<nil>``, ``[a b]``, ``map[k:v]``); a missing map key prints ``<no value>``.

Note: upstream's v1.34 loader imports ``html/template`` (its comments say text/template), which
would HTML-escape interpolated *strings*; upstream's templates interpolate only integers, which
print the same either way. This renderer follows text/template.
"""
from __future__ import annotations

import functools
import json
import math
import re
from decimal import Decimal
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

__all__ = ["Template", "TemplateError", "render", "DEFAULT_FUNCS"]


class TemplateError(ValueError):
    """A template that does not parse, or fails while executing (Go's message shape:
    ``template: NAME:LINE:COL: ...``)."""


class _Missing:
    """A map key that is absent: prints ``<no value>``, is false, compares as Go's zero value."""

    def __repr__(self) -> str:
        return "<no value>"


MISSING = _Missing()


# ------------------------------------------------------------------------------------------------
# lexer
# ------------------------------------------------------------------------------------------------
@dataclass
class _Tok:
    kind: str   # text, field, var, ident, number, string, char, bool, nil, dot, lparen, rparen,
    #             pipe, assign, declare, comma, comment, end
    value: Any
    pos: int


_NUMBER = re.compile(r"[+-]?(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|"
                     r"(\d[\d_]*)?\.?\d[\d_]*([eE][+-]?\d+)?|\d[\d_]*\.)")
_IDENT = re.compile(r"[^\W\d]\w*")  # Go: a letter (unicode.IsLetter) or _, then letters, digits, _
_FIELD_CHAIN = re.compile(r"(\.[A-Za-z_][A-Za-z0-9_]*)+")
_VAR = re.compile(r"\$[A-Za-z0-9_]*")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "a": "\a", "b": "\b",
            "f": "\f", "v": "\v", "0": "\0"}


def _unquote(body: str) -> str:
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1] if i + 1 < len(body) else ""
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[nxt]
            out.append(chr(int(body[i + 2:i + 2 + width], 16)))
            i += 2 + width
        else:
            raise ValueError(f"unknown escape sequence \\{nxt}")
    return "".join(out)


class _Lexer:
    def __init__(self, text: str, name: str):
        self.text, self.name = text, name

    def where(self, pos: int) -> str:
        line = self.text.count("\n", 0, pos) + 1
        col = pos - (self.text.rfind("\n", 0, pos) + 1)
        return f"template: {self.name}:{line}:{col}"

    def error(self, pos: int, message: str) -> TemplateError:
        return TemplateError(f"{self.where(pos)}: {message}")

    def items(self) -> list[list[_Tok] | _Tok]:
        """Text tokens and, for each action, its list of tokens (trimming applied)."""
        text, i = self.text, 0
        out: list[list[_Tok] | _Tok] = []
        while i < len(text):
            start = text.find("{{", i)
            if start < 0:
                out.append(_Tok("text", text[i:], i))
                break
            chunk = text[i:start]
            body_start = start + 2
            if text.startswith("-", body_start) and body_start + 1 < len(text) and text[body_start + 1] in " \t\r\n":
                chunk = chunk.rstrip(" \t\r\n")
                body_start += 2
            if chunk:
                out.append(_Tok("text", chunk, i))
            action, i, trim_right = self._action(body_start, start)
            out.append(action)
            if trim_right:
                while i < len(text) and text[i] in " \t\r\n":
                    i += 1
        return out

    def _action(self, i: int, open_pos: int) -> tuple[list[_Tok], int, bool]:
        text = self.text
        toks: list[_Tok] = []
        while True:
            while i < len(text) and text[i] in " \t\r\n":
                i += 1
            if i >= len(text):
                raise self.error(open_pos, "unclosed action")
            if text.startswith("}}", i):
                return toks, i + 2, False
            if text[i] == "-" and text.startswith("}}", i + 1) and text[i - 1] in " \t\r\n":
                return toks, i + 3, True
            if text.startswith("/*", i):
                end = text.find("*/", i + 2)
                if end < 0:
                    raise self.error(i, "unclosed comment")
                if toks:
                    raise self.error(i, "comment ends before closing delimiter")
                i = end + 2
                toks.append(_Tok("comment", None, i))
                continue
            c = text[i]
            if c == "(":
                toks.append(_Tok("lparen", c, i)); i += 1
            elif c == ")":
                toks.append(_Tok("rparen", c, i))
                i += 1
                m = _FIELD_CHAIN.match(text, i)  # (pipeline).Field
                if m:
                    toks.append(_Tok("chain", m.group(0)[1:].split("."), i)); i = m.end()
            elif c == "|":
                toks.append(_Tok("pipe", c, i)); i += 1
            elif c == ",":
                toks.append(_Tok("comma", c, i)); i += 1
            elif text.startswith(":=", i):
                toks.append(_Tok("declare", ":=", i)); i += 2
            elif c == "=":
                toks.append(_Tok("assign", "=", i)); i += 1
            elif c == '"':
                j = i + 1
                while j < len(text) and text[j] != '"':
                    if text[j] == "\n":
                        raise self.error(i, "unterminated quoted string")
                    j += 2 if text[j] == "\\" else 1
                if j >= len(text):
                    raise self.error(i, "unterminated quoted string")
                try:
                    toks.append(_Tok("string", _unquote(text[i + 1:j]), i))
                except (ValueError, IndexError) as exc:
                    raise self.error(i, f"malformed string: {exc}") from None
                i = j + 1
            elif c == "`":
                j = text.find("`", i + 1)
                if j < 0:
                    raise self.error(i, "unterminated raw quoted string")
                toks.append(_Tok("string", text[i + 1:j], i)); i = j + 1
            elif c == "'":
                j = text.find("'", i + 1)
                if j < 0:
                    raise self.error(i, "unterminated character constant")
                try:
                    body = _unquote(text[i + 1:j])
                except (ValueError, IndexError) as exc:
                    raise self.error(i, f"malformed character constant: {exc}") from None
                if len(body) != 1:
                    raise self.error(i, "malformed character constant")
                toks.append(_Tok("number", ord(body), i)); i = j + 1
            elif c == "$":
                m = self._match(_VAR, i)
                name = m.group(0)
                i = m.end()
                chain = _FIELD_CHAIN.match(text, i)
                fields = chain.group(0)[1:].split(".") if chain else []
                if chain:
                    i = chain.end()
                toks.append(_Tok("var", (name, fields), m.start()))
            elif c == ".":
                m = _FIELD_CHAIN.match(text, i)
                if m:
                    toks.append(_Tok("field", m.group(0)[1:].split("."), i)); i = m.end()
                elif i + 1 < len(text) and text[i + 1].isdigit():
                    m = self._match(_NUMBER, i)
                    toks.append(self._number(m.group(0), i)); i = m.end()
                else:
                    toks.append(_Tok("dot", ".", i)); i += 1
            elif c.isdigit() or (c in "+-" and i + 1 < len(text) and (text[i + 1].isdigit() or text[i + 1] == ".")):
                m = _NUMBER.match(text, i)
                if not m or not m.group(0).strip("+-"):
                    raise self.error(i, f"bad number syntax: {text[i:i + 10]!r}")
                toks.append(self._number(m.group(0), i)); i = m.end()
            elif c.isalpha() or c == "_":
                m = self._match(_IDENT, i)
                word = m.group(0)
                if word in ("true", "false"):
                    toks.append(_Tok("bool", word == "true", i))
                elif word == "nil":
                    toks.append(_Tok("nil", None, i))
                else:
                    toks.append(_Tok("ident", word, i))
                i = m.end()
            else:
                raise self.error(i, f"unexpected {c!r} in command")

    def _match(self, pattern: re.Pattern[str], i: int) -> re.Match[str]:
        """``pattern`` at ``i``, where the character there guarantees a match (``$``, a letter, ``.``
        and a digit); a template error, not a traceback, if that ever stops holding."""
        m = pattern.match(self.text, i)
        if m is None:
            raise self.error(i, f"unexpected {self.text[i:i + 10]!r} in command")
        return m

    def _number(self, s: str, pos: int) -> _Tok:
        clean = s.replace("_", "")
        try:
            if re.fullmatch(r"[+-]?0[xX][0-9a-fA-F]+|[+-]?0[oO][0-7]+|[+-]?0[bB][01]+", clean):
                return _Tok("number", int(clean, 0), pos)
            if re.fullmatch(r"[+-]?\d+", clean):
                if len(clean.lstrip("+-")) > 1 and clean.lstrip("+-").startswith("0"):
                    return _Tok("number", int(clean, 8), pos)  # Go: a leading 0 is octal
                return _Tok("number", int(clean), pos)
            return _Tok("number", float(clean), pos)
        except ValueError:
            raise self.error(pos, f"bad number syntax: {s!r}") from None


# ------------------------------------------------------------------------------------------------
# parse tree
# ------------------------------------------------------------------------------------------------
@dataclass
class _Pipeline:
    decl: list[str]
    assign: bool          # "=" instead of ":="
    cmds: list[list[Any]]  # each command: a list of operand nodes
    pos: int


@dataclass
class _Node:
    kind: str  # text, action, if, range, with, break, continue
    pos: int
    value: Any = None
    pipe: _Pipeline | None = None
    body: list["_Node"] = field(default_factory=list)
    orelse: list["_Node"] = field(default_factory=list)


_KEYWORDS = {"if", "else", "end", "range", "with", "define", "template", "block", "break", "continue"}


class _Parser:
    def __init__(self, lexer: _Lexer):
        self.lexer = lexer
        self.items = lexer.items()
        self.i = 0
        self.range_depth = 0

    def parse(self) -> list[_Node]:
        nodes, stop = self._list(())
        if stop is not None:
            tok = stop[0]
            raise self.lexer.error(tok.pos, f"unexpected {{{{{tok.value}}}}}")
        return nodes

    def _block(self, stops: Sequence[str]) -> tuple[list[_Node], list[_Tok]]:
        """:meth:`_list` up to one of ``stops`` (given): the stop's tokens are never None."""
        nodes, stop = self._list(stops)
        if stop is None:  # pragma: no cover - _list raises "unexpected EOF" first
            raise self.lexer.error(len(self.lexer.text), "unexpected EOF")
        return nodes, stop

    def _list(self, stops: Sequence[str]) -> tuple[list[_Node], list[_Tok] | None]:
        nodes: list[_Node] = []
        while self.i < len(self.items):
            item = self.items[self.i]
            self.i += 1
            if isinstance(item, _Tok):
                nodes.append(_Node("text", item.pos, item.value))
                continue
            toks = item
            if not toks or toks[0].kind == "comment":
                if not toks:
                    raise self.lexer.error(0, "missing value for command")
                continue
            head = toks[0]
            if head.kind == "ident" and head.value in _KEYWORDS:
                word = head.value
                if word in ("end", "else"):
                    if word not in stops:
                        raise self.lexer.error(head.pos, f"unexpected {{{{{word}}}}}")
                    return nodes, toks
                if word in ("define", "template", "block"):
                    raise self.lexer.error(head.pos, f'"{word}" is not supported by fastsched\'s template renderer')
                if word in ("break", "continue"):
                    if not self.range_depth:
                        raise self.lexer.error(head.pos, f"{{{{{word}}}}} outside {{{{range}}}}")
                    nodes.append(_Node(word, head.pos))
                    continue
                nodes.append(self._control(word, toks))
                continue
            nodes.append(_Node("action", head.pos, pipe=self._pipeline(toks, 0, allow_decl=True)[0]))
        if stops:
            raise self.lexer.error(len(self.lexer.text), "unexpected EOF")
        return nodes, None

    def _control(self, word: str, toks: list[_Tok]) -> _Node:
        head = toks[0]
        if len(toks) < 2:
            raise self.lexer.error(head.pos, f"missing value for {word}")
        pipe, _ = self._pipeline(toks, 1, allow_decl=True, range_decl=word == "range")
        node = _Node(word, head.pos, pipe=pipe)
        if word == "range":
            self.range_depth += 1
        node.body, stop = self._block(("end", "else"))
        if word == "range":
            self.range_depth -= 1
        if stop[0].value == "else":
            if len(stop) > 1 and stop[1].kind == "ident" and stop[1].value in ("if", "with") and word in ("if", "with"):
                # {{else if ...}} / {{else with ...}}: a nested block sharing our {{end}}
                nested = self._control(stop[1].value, stop[1:])
                node.orelse = [nested]
                return node
            if len(stop) > 1:
                raise self.lexer.error(stop[1].pos, "unexpected tokens after else")
            node.orelse, stop = self._block(("end",))
        if len(stop) > 1:
            raise self.lexer.error(stop[1].pos, "unexpected tokens after end")
        return node

    def _pipeline(self, toks: list[_Tok], j: int, allow_decl: bool = False, range_decl: bool = False,
                  close: bool = False) -> tuple[_Pipeline, int]:
        pos = toks[j].pos if j < len(toks) else (toks[-1].pos if toks else 0)
        decl: list[str] = []
        assign = False
        # $x := / $x = / $i, $e :=
        k = j
        names = []
        while k < len(toks) and toks[k].kind == "var" and not toks[k].value[1]:
            names.append(toks[k].value[0])
            if k + 1 < len(toks) and toks[k + 1].kind == "comma" and range_decl and len(names) < 2:
                k += 2
                continue
            k += 1
            break
        if names and k < len(toks) and toks[k].kind in ("declare", "assign") and allow_decl:
            decl, assign = names, toks[k].kind == "assign"
            j = k + 1
        cmds: list[list[Any]] = []
        cmd: list[Any] = []
        while j < len(toks):
            t = toks[j]
            if t.kind == "rparen":
                if not close:
                    raise self.lexer.error(t.pos, "unexpected right paren")
                break
            if t.kind == "pipe":
                if not cmd:
                    raise self.lexer.error(t.pos, "missing command")
                cmds.append(cmd)
                cmd = []
                j += 1
                continue
            if t.kind == "lparen":
                inner, j = self._pipeline(toks, j + 1, close=True)
                if j >= len(toks) or toks[j].kind != "rparen":
                    raise self.lexer.error(t.pos, "unclosed left paren")
                j += 1
                chain = None
                if j < len(toks) and toks[j].kind == "chain":
                    chain = toks[j].value
                    j += 1
                cmd.append(("pipe", inner, chain, t.pos))
                continue
            if t.kind in ("declare", "assign", "comma", "comment"):
                raise self.lexer.error(t.pos, f"unexpected {t.value!r} in operand")
            if t.kind == "ident" and t.value in _KEYWORDS:
                raise self.lexer.error(t.pos, f"unexpected keyword {t.value!r} in operand")
            cmd.append(t)
            j += 1
        if cmd:
            cmds.append(cmd)
        if not cmds:
            raise self.lexer.error(pos, "missing value for command")
        return _Pipeline(decl, assign, cmds, pos), j


# ------------------------------------------------------------------------------------------------
# values
# ------------------------------------------------------------------------------------------------
def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def go_format(v: Any) -> str:
    """``fmt.Sprint`` of one value."""
    t = type(v)
    if t is str or t is int:  # the usual values, before the ABC checks below (bool is not int's type)
        return str(v)
    if v is MISSING:
        return "<no value>"
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return _go_float(v)
    if isinstance(v, (list, tuple)):
        return "[" + " ".join(go_format(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "map[" + " ".join(f"{go_format(k)}:{go_format(v[k])}" for k in sorted(v, key=str)) + "]"
    return str(v)


def _go_float(f: float) -> str:
    # %v of a float64: the shortest representation, %e form for exponents < -4 or >= 21
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "0" if math.copysign(1, f) > 0 else "-0"
    exp = math.floor(math.log10(abs(f)))
    if -4 <= exp < 21:
        text = repr(f)
        if "e" in text:  # Python switches to exponents at 1e16
            text = f"{f:f}".rstrip("0").rstrip(".") if f == int(f) else format(f, ".17g")
        return text[:-2] if text.endswith(".0") else text
    mant, _, e = repr(f).partition("e")
    if not e:
        mant, _, e = format(f, "e").partition("e")
    mant = mant[:-2] if mant.endswith(".0") else mant
    sign = "-" if int(e) < 0 else "+"
    return f"{mant}e{sign}{abs(int(e)):02d}"


def truth(v: Any) -> bool:
    """Go template truth: false, 0, nil, "", empty list/map and a missing value are false."""
    if v is MISSING or v is None:
        return False
    if isinstance(v, (bool, int, float, str, list, tuple, dict)) or isinstance(v, Mapping):
        return bool(v)
    return True


def _to_float(v: Any) -> float:
    # upstream's toFloat64: numbers, and strings that parse as numbers
    if _is_number(v):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            pass
    raise ValueError(f"cannot cast {go_format(v)} to float64")


def _to_int(v: Any, fn: str) -> int:
    if isinstance(v, bool) or not _is_number(v):
        raise ValueError(f"wrong type for value; expected int; got {_go_type(v)}")
    if isinstance(v, float):
        if v != int(v):
            raise ValueError("wrong type for value; expected int; got float64")
        return int(v)
    return v


def _go_type(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, str):
        return "string"
    if v is None or v is MISSING:
        return "<nil>"
    if isinstance(v, (list, tuple)):
        return "[]interface {}"
    if isinstance(v, Mapping):
        return "map[string]interface {}"
    return type(v).__name__


def _basic(v: Any) -> tuple[str, Any]:
    if isinstance(v, bool):
        return "bool", v
    if _is_number(v):
        return "number", v
    if isinstance(v, str):
        return "string", v
    if v is None or v is MISSING:
        return "nil", None
    raise ValueError("invalid type for comparison")


def _eq(a: Any, *others: Any) -> bool:
    if not others:
        raise ValueError("missing argument for comparison")
    ka, va = _basic(a)
    for b in others:
        kb, vb = _basic(b)
        if ka != kb and "nil" not in (ka, kb):
            raise ValueError("incompatible types for comparison")
        if va == vb:
            return True
    return False


def _ordered(a: Any, b: Any) -> tuple[Any, Any]:
    ka, va = _basic(a)
    kb, vb = _basic(b)
    if ka != kb or ka not in ("number", "string"):
        raise ValueError("incompatible types for comparison" if ka != kb else "invalid type for comparison")
    return va, vb


def _len(v: Any) -> int:
    if isinstance(v, (str, list, tuple)) or isinstance(v, Mapping):
        return len(v)
    raise ValueError(f"len of type {_go_type(v)}")


def _index(item: Any, *keys: Any) -> Any:
    for k in keys:
        if isinstance(item, Mapping):
            item = item.get(k, MISSING)
        elif isinstance(item, (list, tuple, str)):
            idx = _to_int(k, "index")
            if not 0 <= idx < len(item):
                raise ValueError(f"index out of range: {idx}")
            item = item[idx]
        else:
            raise ValueError(f"can't index item of type {_go_type(item)}")
    return item


def _sprint(*args: Any) -> str:
    out = []
    for i, a in enumerate(args):
        # fmt.Sprint adds a space between operands when neither is a string
        if i and not isinstance(a, str) and not isinstance(args[i - 1], str):
            out.append(" ")
        out.append(go_format(a))
    return "".join(out)


_VERB = re.compile(r"%([-+# 0]*)(\d+|\*)?(?:\.(\d+|\*))?([a-zA-Z%])")


def _sprintf(fmt: str, *args: Any) -> str:
    """``fmt.Sprintf`` for the common verbs: %v %d %s %q %f %F %e %g %x %X %o %b %t %c %%."""
    out, argi, last = [], 0, 0
    for m in _VERB.finditer(fmt):
        out.append(fmt[last:m.start()])
        last = m.end()
        flags, width, prec, verb = m.group(1), m.group(2), m.group(3), m.group(4)
        if verb == "%":
            out.append("%")
            continue
        if argi >= len(args):
            out.append(f"%!{verb}(MISSING)")
            continue
        a = args[argi]
        argi += 1
        spec = flags + (width or "") + (f".{prec}" if prec is not None else "")
        try:
            if verb == "v":
                s = go_format(a)
                out.append(format(s, (("<" if "-" in flags else ">") + width) if width else ""))
            elif verb == "s":
                s = go_format(a)
                out.append(format(s, (("<" if "-" in flags else ">") + width) if width else ""))
            elif verb == "q":
                out.append('"' + go_format(a).replace("\\", "\\\\").replace('"', '\\"') + '"')
            elif verb == "t":
                if not isinstance(a, bool):
                    raise ValueError
                out.append("true" if a else "false")
            elif verb in "dxXob":
                if isinstance(a, bool) or not isinstance(a, int):
                    raise ValueError
                out.append(("%" + spec + {"d": "d", "x": "x", "X": "X", "o": "o", "b": "d"}[verb]) % a
                           if verb != "b" else format(a, spec.replace("-", "<") + "b"))
            elif verb == "c":
                out.append(chr(_to_int(a, "printf")))
            elif verb in "feEgGF":
                if not _is_number(a):
                    raise ValueError
                out.append(("%" + spec + verb.lower() if verb == "F" else "%" + spec + verb) % float(a))
            else:
                out.append(f"%!{verb}({_go_type(a)}={go_format(a)})")
        except (ValueError, TypeError):
            out.append(f"%!{verb}({_go_type(a)}={go_format(a)})")
    out.append(fmt[last:])
    if argi < len(args):
        out.append("%!(EXTRA " + ", ".join(f"{_go_type(a)}={go_format(a)}" for a in args[argi:]) + ")")
    return "".join(out)


def _div(a: Any, b: Any) -> int:
    # v1.34 create.go: func(a, b int) int { return a / b } -- Go truncates toward zero
    a, b = _to_int(a, "div"), _to_int(b, "div")
    if b == 0:
        raise ValueError("runtime error: integer divide by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _divide_float(a: Any, b: Any) -> float:
    fb = _to_float(b)
    if fb == 0:
        raise ValueError("division by zero")
    return _to_float(a) / fb


def _trunc(f: float) -> int:
    return int(f)  # Go's int(float64) truncates toward zero


def _mod(a: Any, b: Any) -> int:
    x, y = _trunc(_to_float(a)), _trunc(_to_float(b))
    if y == 0:
        raise ValueError("runtime error: integer divide by zero")
    return int(math.fmod(x, y))  # Go's % takes the sign of the dividend


_ATOI = re.compile(r"[+-]?[0-9]+")


def _go_int(v: Any) -> int:
    """scheduler_perf's ``toInt``: numbers (floats truncated), and strings ``strconv.Atoi`` takes."""
    if _is_number(v):
        return _trunc(v) if isinstance(v, float) else int(v)
    if isinstance(v, str) and _ATOI.fullmatch(v):
        n = int(v)
        if -(1 << 63) <= n < (1 << 63):
            return n
    raise ValueError(f"cannot cast {go_format(v)} to int")


def _json_value(v: Any) -> Any:
    if v is MISSING:
        return None
    if isinstance(v, Mapping):
        return {str(k): _json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    return v


def _go_json_float(f: float) -> str:
    # encoding/json's float64: the shortest digits that round-trip, in strconv's 'f' format for
    # 1e-6 <= |f| < 1e21, else in 'e' format with "e-07" cleaned up to "e-7"
    if math.isnan(f) or math.isinf(f):
        raise ValueError(f"json: unsupported value: {_go_float(f)}")
    a = abs(f)
    shortest = Decimal(repr(f))
    if a == 0 or 1e-6 <= a < 1e21:
        text = format(shortest, "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return "-0" if text in ("0", "-0") and math.copysign(1, f) < 0 else text
    mant, exp = format(shortest, "e").split("e")  # Decimal: "1e-7" / "1.5e+21"
    digits = exp.lstrip("+-")
    if exp.startswith("-"):
        return f"{mant}e-{digits}"
    return f"{mant}e+{digits.zfill(2)}"


def _json_string(text: str) -> str:
    # Go escapes U+2028 and U+2029 even without HTML escaping
    return json.dumps(text, ensure_ascii=False).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _go_json(v: Any) -> str:
    """scheduler_perf's ``toJSON``: encoding/json without HTML escaping (map keys sorted)."""
    def enc(x: Any) -> str:
        if x is None:
            return "null"
        if isinstance(x, bool):
            return "true" if x else "false"
        if isinstance(x, int):
            return str(x)
        if isinstance(x, float):
            return _go_json_float(x)
        if isinstance(x, str):
            return json.dumps(x, ensure_ascii=False).replace("\u007f", "\u007f")
        if isinstance(x, Mapping):
            return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{enc(x[k])}" for k in sorted(x)) + "}"
        if isinstance(x, (list, tuple)):
            return "[" + ",".join(enc(e) for e in x) + "]"
        raise ValueError(f"cannot JSON-encode {go_format(x)}: json: unsupported type")
    return enc(_json_value(v))


def _add_float(*xs: Any) -> float:
    return math.fsum(_to_float(x) for x in xs) if xs else 0.0


def _mul_float(*xs: Any) -> float:
    p = 1.0
    for x in xs:
        p *= _to_float(x)
    return p


#: Functions every template gets: Go's built-ins and scheduler_perf's (see the module docstring).
DEFAULT_FUNCS: dict[str, Callable[..., Any]] = {
    "not": lambda a: not truth(a),
    "len": _len,
    "index": _index,
    "print": _sprint,
    "printf": _sprintf,
    "println": lambda *a: " ".join(go_format(x) for x in a) + "\n",
    "eq": _eq,
    "ne": lambda a, b: not _eq(a, b),
    "lt": lambda a, b: (lambda x, y: x < y)(*_ordered(a, b)),
    "le": lambda a, b: (lambda x, y: x <= y)(*_ordered(a, b)),
    "gt": lambda a, b: (lambda x, y: x > y)(*_ordered(a, b)),
    "ge": lambda a, b: (lambda x, y: x >= y)(*_ordered(a, b)),
    "div": _div,
    "AddFloat": _add_float,
    "AddInt": lambda *xs: _trunc(_add_float(*xs)),
    "SubtractFloat": lambda a, b: _to_float(a) - _to_float(b),
    "SubtractInt": lambda a, b: _trunc(_to_float(a) - _to_float(b)),
    "MultiplyFloat": _mul_float,
    "MultiplyInt": lambda *xs: _trunc(_mul_float(*xs)),
    "DivideFloat": _divide_float,
    "DivideInt": lambda a, b: _trunc(_divide_float(a, b)),
    "Mod": _mod,
    "Int": _go_int,
    "JSON": _go_json,
}


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


# ------------------------------------------------------------------------------------------------
# execution
# ------------------------------------------------------------------------------------------------
class Template:
    """A parsed template: ``Template(text, name).execute({"Index": 0, "Count": 1})``."""

    def __init__(self, text: str, name: str = "object", funcs: Mapping[str, Callable[..., Any]] | None = None):
        self.name = name
        self.text = text
        self.funcs = {**DEFAULT_FUNCS, **(funcs or {})}
        self._lexer = _Lexer(text, name)
        self.nodes = _Parser(self._lexer).parse()
        self._check_functions(self.nodes)
        # (the parsed nodes never change: asked once per rendering by the perf runner)
        self._static = not self._uses_data(self.nodes)
        self._flat = self._flatten(self.nodes)

    @property
    def is_static(self) -> bool:
        """Whether the output cannot depend on the data (no field, variable or ``.`` reference)."""
        return self._static

    @property
    def flat_parts(self) -> list[Any] | None:
        """The flat path's parts (see ``_flatten``): each a text, or a printing action as a tuple
        of commands ``(function or None, ((is_field, field chain or literal), ...))``; None when
        the template is not flat (the interpreter renders it)."""
        return self._flat

    def _uses_data(self, nodes: list[_Node]) -> bool:
        for n in nodes:
            if n.pipe is not None and self._pipe_uses_data(n.pipe):
                return True
            if self._uses_data(n.body) or self._uses_data(n.orelse):
                return True
        return False

    def _pipe_uses_data(self, pipe: _Pipeline) -> bool:
        for cmd in pipe.cmds:
            for op in cmd:
                if isinstance(op, tuple):
                    if self._pipe_uses_data(op[1]):
                        return True
                elif op.kind in ("field", "var", "dot"):
                    return True
        return False

    def _check_functions(self, nodes: list[_Node]) -> None:
        # Go's parser refuses an undefined function at parse time
        for n in nodes:
            if n.pipe is not None:
                self._check_pipe(n.pipe)
            self._check_functions(n.body)
            self._check_functions(n.orelse)

    def _check_pipe(self, pipe: _Pipeline) -> None:
        for cmd in pipe.cmds:
            for op in cmd:
                if isinstance(op, tuple):
                    self._check_pipe(op[1])
                elif op.kind == "ident" and op.value not in self.funcs and op.value not in ("and", "or"):
                    raise self._lexer.error(op.pos, f'function "{op.value}" not defined')

    def execute(self, data: Any) -> str:
        """Render with ``data`` (usually a dict: ``{"Index": i, "Count": n, ...}``)."""
        flat = self._flat
        if flat is not None:
            text = self._run_flat(flat, data)
            if text is not None:
                return text
        out: list[str] = []
        self._run(self.nodes, data, [("$", data)], out)
        return "".join(out)

    # -- the flat path ---------------------------------------------------------------------------
    # Why: the perf runner renders a pod template once per pod (``gang-pod.yaml``: 50,000 times a
    # workload), and walking the nodes (``_run``, ``_pipe``, ``_command``, ``_operand``) was most
    # of a rendering. A template that is only text and printing actions at its root, whose
    # pipelines are built of ``.Field`` chains, literals and calls of the built-in functions, is
    # rendered here as a list of parts. Each part computes what the interpreter computes on its
    # success path (the same functions on the same arguments, in the same order); on any
    # exception the flat path gives up (None) and ``execute`` runs the interpreter, which raises
    # the error in Go's shape (the built-in functions have no side effects: running one twice
    # changes nothing).
    def _flatten(self, nodes: list[_Node]) -> list[Any] | None:
        parts: list[Any] = []
        for n in nodes:
            if n.kind == "text":
                parts.append(n.value)
            elif n.kind == "action" and n.pipe is not None and not n.pipe.decl:
                cmds = []
                for k, cmd in enumerate(n.pipe.cmds):
                    first = cmd[0]
                    if isinstance(first, _Tok) and first.kind == "ident":
                        fn = self.funcs.get(first.value)
                        if fn is None or DEFAULT_FUNCS.get(first.value) is not fn:
                            return None  # and/or (lazy), or a caller's function
                        args = cmd[1:]
                    elif len(cmd) == 1 and k == 0:
                        fn, args = None, cmd
                    else:
                        return None  # the interpreter's "can't give argument" error
                    ops = []
                    for op in args:
                        if not isinstance(op, _Tok):
                            return None
                        if op.kind == "field":
                            ops.append((True, tuple(op.value)))
                        elif op.kind in ("number", "string", "bool"):
                            ops.append((False, op.value))
                        else:
                            return None  # ., $, variables, nil, a function as an operand
                    cmds.append((fn, tuple(ops)))
                parts.append(tuple(cmds))
            else:
                return None
        return parts

    @staticmethod
    def _run_flat(parts: list[Any], data: Any) -> str | None:
        out: list[str] = []
        try:
            for part in parts:
                if type(part) is str:
                    out.append(part)
                    continue
                value: Any = _NO_ARG
                for fn, ops in part:
                    args = []
                    for is_field, v in ops:
                        if is_field:
                            x = data
                            for name in v:
                                if type(x) is dict or isinstance(x, Mapping):
                                    x = x.get(name, MISSING)
                                else:
                                    return None  # the interpreter's field error
                            args.append(x)
                        else:
                            args.append(v)
                    if fn is None:
                        if value is not _NO_ARG:
                            return None
                        value = args[0]
                    else:
                        if value is not _NO_ARG:
                            args.append(value)
                        value = fn(*args)
                out.append(go_format(value))
        except Exception:  # noqa: BLE001 - the interpreter reports it in Go's shape
            return None
        return "".join(out)

    # -- nodes -----------------------------------------------------------------------------------
    def _run(self, nodes: list[_Node], dot: Any, scope: list, out: list[str]) -> None:
        mark = len(scope)
        try:
            for n in nodes:
                kind = n.kind
                if kind == "text":
                    out.append(n.value)
                elif kind == "action":
                    assert n.pipe is not None  # an action, if, with or range has its pipeline
                    value = self._pipe(n.pipe, dot, scope)
                    if not n.pipe.decl:
                        out.append(go_format(value))
                elif kind in ("if", "with"):
                    inner = len(scope)
                    assert n.pipe is not None
                    value = self._pipe(n.pipe, dot, scope)
                    if truth(value):
                        self._run(n.body, value if kind == "with" else dot, scope, out)
                    else:
                        self._run(n.orelse, dot, scope, out)
                    del scope[inner:]
                elif kind == "range":
                    self._range(n, dot, scope, out)
                elif kind == "break":
                    raise _Break()
                elif kind == "continue":
                    raise _Continue()
        finally:
            del scope[mark:]

    def _range(self, n: _Node, dot: Any, scope: list, out: list[str]) -> None:
        inner = len(scope)
        pipe = n.pipe
        assert pipe is not None
        value = self._pipe(_Pipeline([], False, pipe.cmds, pipe.pos), dot, scope)
        if isinstance(value, bool) or value is None or value is MISSING:
            if value is None or value is MISSING:
                self._run(n.orelse, dot, scope, out)
                return
            raise self._error(n.pos, f"range can't iterate over {go_format(value)}")
        if isinstance(value, int):
            pairs = [(i, i) for i in range(value)]
        elif isinstance(value, (list, tuple)):
            pairs = list(enumerate(value))
        elif isinstance(value, Mapping):
            pairs = [(k, value[k]) for k in sorted(value, key=lambda k: (str(type(k)), k))]
        else:
            raise self._error(n.pos, f"range can't iterate over {go_format(value)}")
        if not pairs:
            self._run(n.orelse, dot, scope, out)
            return
        for key, elem in pairs:
            if len(pipe.decl) == 1:
                scope.append((pipe.decl[0], elem if not isinstance(value, int) else key))
            elif len(pipe.decl) == 2:
                scope.append((pipe.decl[0], key))
                scope.append((pipe.decl[1], elem))
            try:
                self._run(n.body, elem, scope, out)
            except _Break:
                break
            except _Continue:
                pass
            finally:
                del scope[inner:]

    def _error(self, pos: int, message: str) -> TemplateError:
        return TemplateError(f'{self._lexer.where(pos)}: executing "{self.name}": {message}')

    # -- pipelines -------------------------------------------------------------------------------
    def _pipe(self, pipe: _Pipeline, dot: Any, scope: list) -> Any:
        value: Any = _NO_ARG
        for cmd in pipe.cmds:
            value = self._command(cmd, dot, scope, value)
        if pipe.decl:
            name = pipe.decl[0]
            if pipe.assign:
                for k in range(len(scope) - 1, -1, -1):
                    if scope[k][0] == name:
                        scope[k] = (name, value)
                        break
                else:
                    raise self._error(pipe.pos, f"undefined variable: {name}")
            else:
                scope.append((name, value))
        return value

    def _command(self, cmd: list[Any], dot: Any, scope: list, piped: Any) -> Any:
        first = cmd[0]
        if isinstance(first, _Tok) and first.kind == "ident":
            name = first.value
            if name in ("and", "or"):
                return self._and_or(name, cmd[1:], dot, scope, piped, first.pos)
            args = [self._arg(op, dot, scope) for op in cmd[1:]]
            if piped is not _NO_ARG:
                args.append(piped)
            try:
                return self.funcs[name](*args)
            except TypeError as exc:
                raise self._error(first.pos, f"wrong number of args for {name}: {exc}") from None
            except (ValueError, ZeroDivisionError, OverflowError) as exc:
                raise self._error(first.pos, f"error calling {name}: {exc}") from None
        if len(cmd) > 1 or piped is not _NO_ARG:
            what = "value" if not isinstance(first, tuple) else "pipeline"
            pos = first[3] if isinstance(first, tuple) else first.pos
            raise self._error(pos, f"can't give argument to non-function {what}")
        return self._operand(first, dot, scope)

    def _and_or(self, name: str, ops: list[Any], dot: Any, scope: list, piped: Any, pos: int) -> Any:
        if not ops and piped is _NO_ARG:
            raise self._error(pos, f"wrong number of args for {name}: want at least 1 got 0")
        value: Any = None
        thunks: list[Callable[[], Any]] = [functools.partial(self._arg, op, dot, scope) for op in ops]
        if piped is not _NO_ARG:
            thunks.append(lambda: piped)
        for thunk in thunks:
            value = thunk()
            if truth(value) != (name == "and"):
                return value
        return value

    def _arg(self, op: Any, dot: Any, scope: list) -> Any:
        # evalArg: nil is a function's argument where the parameter can be nil (every function
        # here takes interface values, and and/or take reflect.Values: nil, falsy); only as a
        # command is it an error
        if isinstance(op, _Tok) and op.kind == "nil":
            return None
        return self._operand(op, dot, scope)

    def _operand(self, op: Any, dot: Any, scope: list) -> Any:
        if isinstance(op, tuple):  # ("pipe", inner, chain, pos)
            value = self._pipe(op[1], dot, scope)
            return self._fields(value, op[2] or [], op[3])
        kind = op.kind
        if kind == "field":
            return self._fields(dot, op.value, op.pos)
        if kind == "dot":
            return dot
        if kind == "var":
            name, fields = op.value
            for k in range(len(scope) - 1, -1, -1):
                if scope[k][0] == name:
                    return self._fields(scope[k][1], fields, op.pos)
            raise self._error(op.pos, f"undefined variable: {name}")
        if kind in ("number", "string", "bool"):
            return op.value
        if kind == "nil":
            raise self._error(op.pos, "nil is not a command")
        if kind == "ident":
            return self._command([op], dot, scope, _NO_ARG)
        raise self._error(op.pos, f"unexpected {op.value!r}")

    def _fields(self, value: Any, names: list[str], pos: int) -> Any:
        for name in names:
            if type(value) is dict or isinstance(value, Mapping):  # (dict first: the ABC check is slow)
                value = value.get(name, MISSING)
            elif value is MISSING or value is None:
                raise self._error(pos, f"nil pointer evaluating interface {{}}.{name}")
            else:
                raise self._error(pos, f"can't evaluate field {name} in type {_go_type(value)}")
        return value


class _NoArg:
    pass


_NO_ARG = _NoArg()


def render(text: str, data: Any, name: str = "object") -> str:
    """Parse and execute ``text`` once (see :class:`Template` to render many times)."""
    return Template(text, name).execute(data)
