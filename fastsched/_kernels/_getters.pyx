# cython: language_level=3
"""Compiled field getters: :func:`tuple_getter` (what ``operator.attrgetter(*names)`` gives, for
the per-pod reads of many fields of one object: the compiled cycle's plan key reads 16 fields of
a Pod, the node table's accounting key 9), and probes of ``_fastattr.h``'s guarded sites for
``tests/scheduler/test_fast_attrs.py``.

A :class:`TupleGetter` reads the fields that are ``__slots__`` members of its class by their
offsets while the object's class is exactly that class with the version tag it had when the
getter resolved it (CPython gives a class a new tag whenever it or a base changes), the others
through ``getattr``; any other object, an unset slot (its AttributeError) or a changed class goes
through ``operator.attrgetter`` (the class is resolved again for the next call)."""

from operator import attrgetter

from cpython.object cimport Py_TYPE, PyObject, PyTypeObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdlib cimport free, malloc

from ._fastattr cimport FA_DICT_GET, FA_GET, FA_SET, FA_TYPE_ATTR


cdef extern from "Python.h":
    # the fields of PyTypeObject read here (Cython's own declaration of the struct omits them)
    ctypedef struct _TypeTag "PyTypeObject":
        unsigned int tp_version_tag
        unsigned long tp_flags
    PyObject* _PyType_Lookup(PyTypeObject* tp, object name)
    unsigned long Py_TPFLAGS_VALID_VERSION_TAG
    PyTypeObject PyMemberDescr_Type
    object PyObject_GetAttr(object obj, object name)


cdef extern from "structmember.h":
    ctypedef struct PyMemberDef:
        int type
        Py_ssize_t offset
        int flags
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member
    int T_OBJECT_EX
    int READONLY


cdef extern from "_fastattr.h":
    bint FA_ENABLED


cdef class TupleGetter:
    """``operator.attrgetter(*names)`` for objects of exactly ``cls`` (see the module docstring).
    ``get`` is the getter (a bound method: a one-argument C call)."""

    cdef readonly object cls
    cdef readonly tuple names
    cdef object fallback
    cdef unsigned int tag
    cdef Py_ssize_t n
    cdef Py_ssize_t* offsets  # per field: its slot's offset, or 0 (read through getattr)

    def __cinit__(self, cls, names):
        self.cls = cls
        self.names = tuple(names)
        self.n = len(self.names)
        if self.n < 2:
            raise ValueError("tuple_getter: at least two field names")
        self.fallback = attrgetter(*self.names)
        self.offsets = <Py_ssize_t*>malloc(self.n * sizeof(Py_ssize_t))
        if self.offsets == NULL:
            raise MemoryError()
        self.tag = 0
        self._resolve()

    def __dealloc__(self):
        free(self.offsets)

    def __fork__(self, copier):
        """Shared by a fork (``fastsched.util.forking``): what it holds is its class's layout."""
        return self

    def __reduce__(self):
        return TupleGetter, (self.cls, self.names)

    cdef void _resolve(self):
        """The offsets of ``cls``'s slot fields and the tag they hold for (0: none, every call
        through the fallback)."""
        cdef PyTypeObject* tp = <PyTypeObject*>self.cls
        cdef PyObject* descr
        cdef PyMemberDef* m
        cdef Py_ssize_t i
        self.tag = 0
        if not FA_ENABLED:
            return
        if (<object>tp).__getattribute__ is not object.__getattribute__:
            return  # (an override reads every field its own way)
        for i in range(self.n):
            self.offsets[i] = 0
            descr = _PyType_Lookup(tp, self.names[i])
            if descr is not NULL and <void*>descr.ob_type == <void*>&PyMemberDescr_Type:
                m = (<PyMemberDescrObject*>descr).d_member
                if m.type == T_OBJECT_EX and m.offset > 0:
                    self.offsets[i] = m.offset
        if (<_TypeTag*>tp).tp_flags & Py_TPFLAGS_VALID_VERSION_TAG:
            self.tag = (<_TypeTag*>tp).tp_version_tag

    def get(self, obj):
        """The tuple of ``obj``'s fields, in ``names``' order."""
        cdef PyTypeObject* tp = Py_TYPE(obj)
        cdef Py_ssize_t i, off
        cdef PyObject* v
        if <object>tp is not self.cls:
            return self.fallback(obj)
        if self.tag == 0 or (<_TypeTag*>tp).tp_version_tag != self.tag:
            self._resolve()
            if self.tag == 0:
                return self.fallback(obj)
        t = PyTuple_New(self.n)
        for i in range(self.n):
            off = self.offsets[i]
            if off:
                v = (<PyObject**>(<char*><PyObject*>obj + off))[0]
                if v is NULL:
                    return self.fallback(obj)  # (an unset slot: attrgetter's AttributeError)
                Py_INCREF(<object>v)
                PyTuple_SET_ITEM(t, i, <object>v)
            else:
                value = PyObject_GetAttr(obj, self.names[i])
                Py_INCREF(value)
                PyTuple_SET_ITEM(t, i, value)
        return t


def tuple_getter(cls, names):
    """The fastest getter of the fields ``names`` (two or more) for objects of class ``cls``:
    ``obj -> tuple`` equal to ``operator.attrgetter(*names)(obj)`` for any object. A
    :class:`TupleGetter`'s ``get`` when some field is a ``__slots__`` member of ``cls`` (read by
    offset under the class's version tag), else the attrgetter itself."""
    cdef TupleGetter getter
    cdef Py_ssize_t i
    names = tuple(names)
    if isinstance(cls, type) and FA_ENABLED:
        getter = TupleGetter(cls, names)
        if getter.tag != 0:
            for i in range(getter.n):
                if getter.offsets[i]:
                    return getter.get
    return attrgetter(*names)


# -- probes of _fastattr.h's sites (tests/scheduler/test_fast_attrs.py) ------------------------------
# Each function is one call site of its macro, on the attribute ``x`` (``f`` for the type probe):
# the tests change classes and instances between calls and compare with getattr/setattr.

def probe_get_x(obj):
    """``obj.x`` through one FA_GET site."""
    return FA_GET(obj, "x")


def probe_set_x(obj, value):
    """``obj.x = value`` through one FA_SET site."""
    FA_SET(obj, "x", value)


def probe_type_f(obj):
    """What ``type(obj)``'s MRO holds under ``f`` through one FA_TYPE_ATTR site (None: nothing)."""
    cdef PyObject* found = FA_TYPE_ATTR(obj, "f")
    return None if found is NULL else <object>found


def probe_dict_get_x(obj):
    """``obj.__dict__.get("x")`` through one FA_DICT_GET site."""
    return FA_DICT_GET(obj, "x")
