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
value marshal wrote and read back, so it is acyclic and within marshal's depth limit).

:func:`fingerprint` hashes the shared part of a manifest (what ``same_shared`` compares) so that the
caller can find, among the shared parts it serialized recently, the one to compare it with when
pods of several templates come interleaved (a watch, a listing by creation time or node by node):
equal shared parts (``same_shared``) have equal fingerprints; unequal ones almost never do, and the
caller never takes a fingerprint for proof (it compares with ``same_shared`` too)."""

from cpython.dict cimport PyDict_Next
from cpython.object cimport PyObject
from cpython.list cimport PyList_GET_SIZE, PyList_GET_ITEM
from cpython.tuple cimport PyTuple_GET_SIZE, PyTuple_GET_ITEM
from libc.stdint cimport uint64_t
from libc.string cimport memcpy


cdef extern from "Python.h":
    # PEP 393's canonical representation: equal strings have the same kind and the same code units
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)


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


# ------------------------------------------------------------------------------------------------
# fingerprint: which recently serialized shared part to compare a manifest with
# ------------------------------------------------------------------------------------------------

cdef enum:
    # deeper values are not fingerprinted (the caller serializes, as for a float): a manifest is
    # ~10 levels deep, and the walk must stay bounded on a caller's cyclic or very deep value
    _MAX_DEPTH = 64
    # type tags mixed in before a value, so that ``[1]``, ``(1,)``, ``{1: ...}``, ``1`` and ``True``
    # differ (as their marshal bytes do)
    _TAG_STR = 0x73
    _TAG_INT = 0x69
    _TAG_DICT = 0x7b
    _TAG_LIST = 0x5b
    _TAG_TUPLE = 0x28
    _TAG_TRUE = 0x54
    _TAG_FALSE = 0x46
    _TAG_NONE = 0x4e
    _TAG_END = 0x2e


cdef inline uint64_t _mix(uint64_t h, uint64_t x) nogil:
    # (a multiply-xorshift step: order-dependent, so a reordered dict or list hashes differently)
    h = (h ^ x) * 0x9E3779B97F4A7C15ULL
    return h ^ (h >> 31)


cdef bint _fp(object a, uint64_t *h, int depth) except -1:
    """Mix ``a`` into ``h[0]``; False when ``a`` holds a value ``same_values`` never answers True
    for (a float, a subclass, any other type) or is deeper than ``_MAX_DEPTH``. Runs no Python code
    (exact types only; an int's hash is C code), so the borrowed items stay valid."""
    cdef type t = type(a)
    cdef Py_ssize_t i, n, size, pos = 0
    cdef uint64_t word
    cdef const char *data
    cdef PyObject *k
    cdef PyObject *v
    if depth > _MAX_DEPTH:
        return False
    if t is str:
        n = PyUnicode_GET_LENGTH(a)
        size = n * PyUnicode_KIND(a)
        data = <const char *>PyUnicode_DATA(a)
        h[0] = _mix(h[0], (<uint64_t>n << 8) | _TAG_STR)
        i = 0
        while i + 8 <= size:
            memcpy(&word, data + i, 8)
            h[0] = _mix(h[0], word)
            i += 8
        if i < size:
            word = 0
            memcpy(&word, data + i, size - i)
            h[0] = _mix(h[0], word)
        return True
    if t is int:
        h[0] = _mix(_mix(h[0], _TAG_INT), <uint64_t>hash(a))
        return True
    if t is dict:
        h[0] = _mix(h[0], (<uint64_t>len(<dict>a) << 8) | _TAG_DICT)
        while PyDict_Next(a, &pos, &k, &v):
            if not _fp(<object>k, h, depth + 1) or not _fp(<object>v, h, depth + 1):
                return False
        return True
    if t is list:
        n = PyList_GET_SIZE(a)
        h[0] = _mix(h[0], (<uint64_t>n << 8) | _TAG_LIST)
        for i in range(n):
            if not _fp(<object>PyList_GET_ITEM(a, i), h, depth + 1):
                return False
        return True
    if t is tuple:
        n = PyTuple_GET_SIZE(a)
        h[0] = _mix(h[0], (<uint64_t>n << 8) | _TAG_TUPLE)
        for i in range(n):
            if not _fp(<object>PyTuple_GET_ITEM(a, i), h, depth + 1):
                return False
        return True
    if a is None:
        h[0] = _mix(h[0], _TAG_NONE)
        return True
    if t is bool:
        h[0] = _mix(h[0], _TAG_TRUE if a is True else _TAG_FALSE)
        return True
    return False


cdef bint _fp_but(dict a, object skip, bint skip_node_name, uint64_t *h) except -1:
    """``_fp`` of ``{k: v for k, v in a.items() if k not in skip}`` (or, with ``skip_node_name``,
    ``... if k != "nodeName"``), without building it (as ``_same_but`` compares it)."""
    cdef Py_ssize_t pos = 0
    cdef PyObject *k
    cdef PyObject *v
    cdef Py_ssize_t kept = 0
    while PyDict_Next(a, &pos, &k, &v):
        if type(<object>k) is not str:
            return False  # (see _same_but: the caller serializes such a manifest)
        if skip is not None and <object>k in skip:
            continue
        if skip_node_name and <str>k == "nodeName":
            continue
        if not _fp(<object>k, h, 1) or not _fp(<object>v, h, 1):
            return False
        kept += 1
    # (the count last: a dict of the same entries in the same order hashes the same)
    h[0] = _mix(h[0], (<uint64_t>kept << 8) | _TAG_END)
    return True


def fingerprint(api_version, kind, dict metadata, skip_metadata, dict spec, bint skip_node_name):
    """A hash (an int) of the shared part of a Pod manifest as :func:`same_shared` reads it (the
    same arguments but ``last``), or None when ``same_shared`` could not answer True for it (a
    float or a value of another type, a key that is not a string, deeper than 64 levels). Equal
    shared parts get equal fingerprints within a process (an int's hash depends on nothing else)."""
    cdef uint64_t h = 0xCBF29CE484222325ULL
    if not (_fp(api_version, &h, 1) and _fp(kind, &h, 1) and _fp_but(metadata, skip_metadata, False, &h)
            and _fp_but(spec, None, skip_node_name, &h)):
        return None
    # (63 bits: a small positive int, cheap to hash as a dict key)
    return <Py_ssize_t>(h >> 1)
