# cython: language_level=3
"""Guarded attribute access (``_fastattr.h``): ``FA_GET(obj, "name")`` is ``obj.name`` and
``FA_SET(obj, "name", value)`` is ``obj.name = value``, read and written through a per-call-site
record of what the type's lookup found, valid while the type's version tag is the one recorded;
otherwise, and for anything but ``__slots__`` members and instance-dict attributes, the generic
``getattr``/``setattr``. ``name`` must be a str literal (interned) for the site's record to hold.
``FA_TYPE_ATTR(obj, "name")`` / ``FA_CLASS_ATTR(cls, "name")``: the raw entry of ``type(obj)``'s /
``cls``'s MRO under the name (a borrowed pointer, NULL when absent), for identity tests against
the functions and properties a kernel inlines (``type(obj).name is f`` for a function or a
property ``f``). ``FA_DICT_GET(obj, "name")``: ``obj.__dict__.get("name")``."""
from cpython.object cimport PyObject

cdef extern from "_fastattr.h":
    object FA_GET(object obj, object name)
    int FA_SET(object obj, object name, object value) except -1
    PyObject* FA_TYPE_ATTR(object obj, object name)
    PyObject* FA_CLASS_ATTR(object cls, object name)
    object FA_DICT_GET(object obj, object name)
    bint FA_ENABLED
