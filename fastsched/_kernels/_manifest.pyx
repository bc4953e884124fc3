# cython: language_level=3
"""Exact comparison of decoded manifests (JSON/YAML values: dicts, lists, strings, ints, bools,
None), for ``fastsched.api.templates``' fast path: a Pod manifest whose shared part is the same as
the last one serialized gets that one's template key without serializing it again (``marshal.dumps``
of a typical manifest costs ~14,000 instructions; walking it here a few hundred).

:func:`same_values` answers "would ``marshal.dumps(a, 2) == marshal.dumps(b, 2)``" without writing
them, or says no when it cannot tell cheaply: it is True only for values of the same exact types
(``1`` is not ``1.0`` nor ``True``; a dict subclass is not a dict) holding equal values in the same
order (dicts compared entry by entry in their iteration order, as marshal writes them). Floats and
every other type answer False (the caller serializes then: ``0.0 == -0.0`` and NaNs make ``==`` on
floats no proof of equal bytes). Recursion is bounded by ``b``'s depth (the caller's ``b`` is a
value marshal wrote and read back, so it is acyclic and within marshal's depth limit)."""

from cpython.dict cimport PyDict_Next
from cpython.object cimport PyObject
from cpython.list cimport PyList_GET_SIZE, PyList_GET_ITEM
from cpython.tuple cimport PyTuple_GET_SIZE, PyTuple_GET_ITEM


cdef bint _same(object a, object b) except -1:
    cdef type t = type(a)
    cdef Py_ssize_t i, n, pa, pb
    cdef PyObject *ka
    cdef PyObject *va
    cdef PyObject *kb
    cdef PyObject *vb
    if t is not type(b):
        return False
    if t is str:
        # (Cython's string equality: identity, length, kind, then memcmp; no rich-compare dispatch)
        return a is b or <str>a == <str>b
    if t is int:
        return a is b or a == b
    if t is dict:
        if len(<dict>a) != len(<dict>b):
            return False
        pa = pb = 0
        while PyDict_Next(a, &pa, &ka, &va):
            if not PyDict_Next(b, &pb, &kb, &vb):
                return False
            if not _same(<object>ka, <object>kb) or not _same(<object>va, <object>vb):
                return False
        return True
    if t is list:
        n = PyList_GET_SIZE(a)
        if n != PyList_GET_SIZE(b):
            return False
        for i in range(n):
            # (the items of ``a`` are borrowed: ``_same`` runs no Python code that could mutate it)
            if not _same(<object>PyList_GET_ITEM(a, i), <object>PyList_GET_ITEM(b, i)):
                return False
        return True
    if t is tuple:
        n = PyTuple_GET_SIZE(a)
        if n != PyTuple_GET_SIZE(b):
            return False
        for i in range(n):
            if not _same(<object>PyTuple_GET_ITEM(a, i), <object>PyTuple_GET_ITEM(b, i)):
                return False
        return True
    if t is bool or a is None:
        return a is b
    return False


def same_values(a, b):
    """Whether ``a`` and ``b`` are the same value of the same exact types in the same order (see
    the module docstring): True only when ``marshal.dumps`` would write them the same."""
    return _same(a, b)


cdef bint _same_but(dict a, object skip, bint skip_node_name, dict b) except -1:
    """Whether ``{k: v for k, v in a.items() if k not in skip}`` (or, with ``skip_node_name``,
    ``... if k != "nodeName"``) is :func:`same_values` as ``b``, without building it."""
    cdef Py_ssize_t pa = 0, pb = 0
    cdef PyObject *ka
    cdef PyObject *va
    cdef PyObject *kb
    cdef PyObject *vb
    while PyDict_Next(a, &pa, &ka, &va):
        if type(<object>ka) is not str:
            # (a key of another type: its hash and equality could run Python code while ``a``'s
            # entries are borrowed; the caller serializes such a manifest)
            return False
        if skip is not None and <object>ka in skip:
            continue
        if skip_node_name and <str>ka == "nodeName":
            continue
        if not PyDict_Next(b, &pb, &kb, &vb):
            return False
        if not _same(<object>ka, <object>kb) or not _same(<object>va, <object>vb):
            return False
    return not PyDict_Next(b, &pb, &kb, &vb)


def same_shared(api_version, kind, dict metadata, skip_metadata, dict spec, bint skip_node_name, tuple last):
    """Whether the shared part of a Pod manifest, ``(api_version, kind, metadata without the keys
    in skip_metadata, spec without "nodeName" if skip_node_name)`` as ``fastsched.api.templates``
    builds it, is :func:`same_values` as ``last`` (a 4-tuple of that shape), without building it."""
    return (len(last) == 4 and _same(api_version, last[0]) and _same(kind, last[1])
            and type(last[2]) is dict and _same_but(metadata, skip_metadata, False, last[2])
            and type(last[3]) is dict and _same_but(spec, None, skip_node_name, last[3]))
