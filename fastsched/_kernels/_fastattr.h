/* Guarded attribute access for the kernels that walk Python objects (``_bind.pyx``, ``_getters.pyx``).

   ``obj.name`` through PyObject_GetAttr costs a type lookup (the MRO's method cache), a descriptor
   test and then the slot or instance-dict read, ~150-250 instructions; the compiled commit makes
   ~60 of them a pod. Here each call site keeps what that lookup found for one type, keyed by the
   type's version tag (``tp_version_tag``: CPython gives a type a new tag, never reused, whenever
   its or a base class's dict or bases change, and 0 while it has none). While an object's exact
   type still has the tag the site saw, the lookup would find the same thing, so the site reads
   (or writes) directly:

   * FA_SLOT: a ``__slots__`` member (a T_OBJECT_EX member descriptor): the pointer at its offset;
     an unset slot goes through the generic path (its AttributeError);
   * FA_DICT: nothing that is a data descriptor on the type (nothing, a plain class attribute, a
     function): the instance's own value first, as ``object.__getattribute__`` reads it (3.11's
     inline values or its dict object, at the entry where the site found the name last, as the
     interpreter's LOAD_ATTR_WITH_HINT); a name the instance does not hold goes through the
     generic path (the class attribute, the method, the AttributeError). Writes replace a value
     the instance holds already; adding one is the generic path's.

   Everything else (a property, a getset, ``__getattr__``/``__getattribute__``/``__setattr__``
   overrides: ``tp_getattro``/``tp_setattro`` not the generic ones, a type without a valid tag)
   takes PyObject_GetAttr / PyObject_SetAttr, as does an object of any other type than the site's
   (the site then re-resolves for that type). The answers are the generic path's in every case:
   ``tests/scheduler/test_fast_attrs.py`` changes classes and instance dicts under live sites.
   Nothing here makes an instance's dict object (which would slow the interpreter's own access).

   FA_GET / FA_SET / FA_TYPE_ATTR / FA_CLASS_ATTR are macros keeping a static site per expansion
   (GCC/Clang statement expressions: the kernels are built with gcc). Slots are read directly on
   CPython 3.11-3.13 with the GIL; instance dicts only on 3.11, whose dict layout
   ``fa_dictkeys`` copies. Elsewhere every call is the generic one. */
#ifndef FASTSCHED_FASTATTR_H
#define FASTSCHED_FASTATTR_H

#include <Python.h>
#include <structmember.h>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030E0000 && !defined(Py_GIL_DISABLED)
#define FA_ENABLED 1
#else
#define FA_ENABLED 0
#endif

/* CPython 3.11's dict keys header (Objects/dictobject.c's struct _dictkeysobject, from
   Include/internal/pycore_dict.h, not a public header): read for an instance-dict attribute's
   entry hint, the index where the site last found its name, as the interpreter's own
   LOAD_ATTR_WITH_HINT reads it. Only on 3.11, the version whose layout this is. */
#if FA_ENABLED && PY_VERSION_HEX < 0x030C0000
#define FA_DICT_HINTS 1
typedef struct {
    Py_ssize_t dk_refcnt;
    uint8_t dk_log2_size;
    uint8_t dk_log2_index_bytes;
    uint8_t dk_kind;          /* 0: DICT_KEYS_GENERAL (PyDictKeyEntry), else unicode/split (PyDictUnicodeEntry) */
    uint32_t dk_version;
    Py_ssize_t dk_usable;
    Py_ssize_t dk_nentries;
    char dk_indices[];
} fa_dictkeys;
typedef struct { Py_hash_t me_hash; PyObject* me_key; PyObject* me_value; } fa_entry_general;
typedef struct { PyObject* me_key; PyObject* me_value; } fa_entry_unicode;
#else
#define FA_DICT_HINTS 0
#endif

enum { FA_GENERIC = 0, FA_SLOT = 1, FA_DICT = 2 };

typedef struct {
    unsigned int tag;   /* the version tag of the type resolved (0: none yet) */
    int kind;           /* FA_SLOT, FA_DICT or FA_GENERIC */
    Py_ssize_t offset;  /* FA_SLOT: the member's offset in the instance; FA_DICT: the entry hint */
} fa_site;

#if FA_DICT_HINTS
/* ``d[name]`` for an exact str ``name`` (borrowed; NULL when absent, or on error with an exception
   set): the entry at ``*hint`` when it holds ``name`` itself and a value (a deleted entry has no
   key in a combined table and no value in a split one), else the dict's lookup, the hint then
   moved to the entry that holds ``name`` (found by identity in a table of up to 256 entries). */
static inline PyObject* fa_dict_item(PyObject* d, PyObject* name, Py_ssize_t* hint) {
    PyDictObject* mp = (PyDictObject*)d;
    fa_dictkeys* dk = (fa_dictkeys*)mp->ma_keys;
    Py_ssize_t ix = *hint, n = dk->dk_nentries;
    char* entries = dk->dk_indices + ((size_t)1 << dk->dk_log2_index_bytes);
    if (ix < n) {
        if (dk->dk_kind != 0) {
            fa_entry_unicode* ep = (fa_entry_unicode*)entries + ix;
            if (ep->me_key == name) {
                PyObject* v = mp->ma_values != NULL ? ((PyObject**)mp->ma_values)[ix] : ep->me_value;  /* (struct _dictvalues: the values array) */
                if (v != NULL) return v;
            }
        } else {
            fa_entry_general* ep = (fa_entry_general*)entries + ix;
            if (ep->me_key == name && ep->me_value != NULL) return ep->me_value;
        }
    }
    PyObject* v = PyDict_GetItemWithError(d, name);
    if (v != NULL && n <= 256) {
        for (ix = 0; ix < n; ix++) {
            PyObject* key = dk->dk_kind != 0 ? ((fa_entry_unicode*)entries)[ix].me_key
                                             : ((fa_entry_general*)entries)[ix].me_key;
            if (key == name) {
                *hint = ix;
                break;
            }
        }
    }
    return v;
}
#endif

typedef struct {
    unsigned int tag;   /* the version tag of the type whose MRO was searched (0: none yet) */
    PyObject* found;    /* what the MRO holds under the name (borrowed: the type's dicts hold it), or NULL */
} fa_type_site;

/* The kind of access ``name`` allows on instances of ``tp`` (fills ``site``; FA_GENERIC when the
   type has no valid version tag). ``for_set``: writes (the setattro must be the generic one). */
static inline void fa_resolve(fa_site* site, PyTypeObject* tp, PyObject* name, int for_set) {
    site->tag = 0;
    site->kind = FA_GENERIC;
#if FA_ENABLED
    if (!PyUnicode_CheckExact(name)) return;
    if (for_set ? tp->tp_setattro != PyObject_GenericSetAttr : tp->tp_getattro != PyObject_GenericGetAttr)
        return;
    PyObject* descr = _PyType_Lookup(tp, name);  /* borrowed; assigns the tag when it can */
    if (!(tp->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) || tp->tp_version_tag == 0) return;
    int kind = FA_GENERIC;
    Py_ssize_t offset = 0;
    if (descr == NULL) {
        kind = FA_DICT;
    } else if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDef* m = ((PyMemberDescrObject*)descr)->d_member;
        if (m->type == T_OBJECT_EX && !(m->flags & READONLY)
                && PyType_IsSubtype(tp, ((PyDescrObject*)descr)->d_type)) {
            kind = FA_SLOT;
            offset = m->offset;
        }
    } else if (Py_TYPE(descr)->tp_descr_set == NULL) {
        kind = FA_DICT;  /* a plain class attribute or a non-data descriptor: the instance dict wins */
    }
    if (kind == FA_DICT && tp->tp_dictoffset == 0) kind = FA_GENERIC;
    site->kind = kind;
    site->offset = offset;
    site->tag = tp->tp_version_tag;
#else
    (void)tp; (void)name; (void)for_set;
#endif
}

/* ``obj.name`` (a new reference; NULL with an exception set on error). */
#if FA_DICT_HINTS
/* The index of ``name`` among the (unicode) entries of ``dk`` (the hint when it holds it, else a
   scan of up to 256 entries, the hint then moved), or -1. */
static inline Py_ssize_t fa_entry_of(fa_dictkeys* dk, PyObject* name, Py_ssize_t* hint) {
    Py_ssize_t ix = *hint, n = dk->dk_nentries;
    fa_entry_unicode* entries = (fa_entry_unicode*)(dk->dk_indices + ((size_t)1 << dk->dk_log2_index_bytes));
    if (dk->dk_kind == 0) return -1;
    if (ix < n && entries[ix].me_key == name) return ix;
    if (n > 256) return -1;
    for (ix = 0; ix < n; ix++) {
        if (entries[ix].me_key == name) {
            *hint = ix;
            return ix;
        }
    }
    return -1;
}

/* The instance-dict value of ``name`` on ``obj`` (of type ``tp``, which has a dict), as
   object.__getattribute__ finds it there (borrowed; NULL when absent, or with an exception set).
   3.11's managed dicts: the values stored inline (keys: the type's cached keys) while no dict
   object was made, else the dict; never makes the dict object. ``*hint``: the entry hint. */
static inline PyObject* fa_instance_item(PyObject* obj, PyTypeObject* tp, PyObject* name, Py_ssize_t* hint) {
    PyObject* dict;
    if (tp->tp_flags & Py_TPFLAGS_MANAGED_DICT) {
        dict = ((PyObject**)obj)[-3];  /* (3.11: _PyObject_ManagedDictPointer) */
        if (dict == NULL) {
            PyObject** values = ((PyObject***)obj)[-4];  /* (3.11: _PyObject_ValuesPointer) */
            fa_dictkeys* dk = (fa_dictkeys*)((PyHeapTypeObject*)tp)->ht_cached_keys;
            if (values == NULL || dk == NULL) return NULL;
            Py_ssize_t ix = fa_entry_of(dk, name, hint);
            return ix < 0 ? NULL : values[ix];
        }
    } else {
        PyObject** dictptr = _PyObject_GetDictPtr(obj);  /* (not a managed dict: nothing made) */
        dict = dictptr == NULL ? NULL : *dictptr;
        if (dict == NULL) return NULL;
    }
    return PyDict_CheckExact(dict) ? fa_dict_item(dict, name, hint) : PyDict_GetItemWithError(dict, name);
}
#endif

/* ``obj.name`` (a new reference; NULL with an exception set on error). */
static inline PyObject* fa_get(PyObject* obj, PyObject* name, fa_site* site) {
#if FA_ENABLED
    PyTypeObject* tp = Py_TYPE(obj);
    if (site->tag != tp->tp_version_tag || site->tag == 0) fa_resolve(site, tp, name, 0);
    if (site->tag != 0) {
        if (site->kind == FA_SLOT) {
            PyObject* v = *(PyObject**)((char*)obj + site->offset);
            if (v != NULL) {
                Py_INCREF(v);
                return v;
            }
        }
#if FA_DICT_HINTS
        else if (site->kind == FA_DICT) {
            PyObject* v = fa_instance_item(obj, tp, name, &site->offset);
            if (v != NULL) {
                Py_INCREF(v);
                return v;
            }
            if (PyErr_Occurred()) return NULL;
        }
#endif
    }
#endif
    return PyObject_GetAttr(obj, name);
}

/* ``obj.name = value`` (0; -1 with an exception set on error). An instance-dict attribute is
   replaced in place when it is there already (3.11's inline values: the value swapped as
   _PyObject_StoreInstanceAttribute swaps it), set through PyDict_SetItem in a dict object, and
   added through the generic path. */
static inline int fa_set(PyObject* obj, PyObject* name, PyObject* value, fa_site* site) {
#if FA_ENABLED
    PyTypeObject* tp = Py_TYPE(obj);
    if (site->tag != tp->tp_version_tag || site->tag == 0) fa_resolve(site, tp, name, 1);
    if (site->tag != 0) {
        if (site->kind == FA_SLOT) {
            PyObject** p = (PyObject**)((char*)obj + site->offset);
            PyObject* old = *p;
            Py_INCREF(value);
            *p = value;
            Py_XDECREF(old);
            return 0;
        }
#if FA_DICT_HINTS
        else if (site->kind == FA_DICT) {
            PyObject* dict;
            if (tp->tp_flags & Py_TPFLAGS_MANAGED_DICT) {
                dict = ((PyObject**)obj)[-3];
                if (dict == NULL) {
                    PyObject** values = ((PyObject***)obj)[-4];
                    fa_dictkeys* dk = (fa_dictkeys*)((PyHeapTypeObject*)tp)->ht_cached_keys;
                    Py_ssize_t ix = values == NULL || dk == NULL ? -1 : fa_entry_of(dk, name, &site->offset);
                    if (ix >= 0 && values[ix] != NULL) {
                        PyObject* old = values[ix];
                        Py_INCREF(value);
                        values[ix] = value;
                        Py_DECREF(old);
                        return 0;
                    }
                }
            } else {
                PyObject** dictptr = _PyObject_GetDictPtr(obj);
                dict = dictptr == NULL ? NULL : *dictptr;
            }
            if (dict != NULL && PyDict_CheckExact(dict)) return PyDict_SetItem(dict, name, value);
        }
#endif
    }
#endif
    return PyObject_SetAttr(obj, name, value);
}

/* What ``tp``'s MRO holds under ``name`` (borrowed; NULL when nothing: no exception), as
   ``tp.name`` gives it for a function or a property: for identity tests against the functions
   the kernels inline. */
static inline PyObject* fa_type_attr(PyTypeObject* tp, PyObject* name, fa_type_site* site) {
#if FA_ENABLED
    if (site->tag != 0 && site->tag == tp->tp_version_tag) return site->found;
    PyObject* found = _PyType_Lookup(tp, name);
    if ((tp->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) && tp->tp_version_tag != 0) {
        site->tag = tp->tp_version_tag;
        site->found = found;
    }
    return found;
#else
    (void)site;
    return _PyType_Lookup(tp, name);
#endif
}

/* ``obj.__dict__.get(name)`` (a new reference, None when absent; NULL with an exception set),
   without making the dict object when the instance has none yet (3.11). */
static inline PyObject* fa_dict_get(PyObject* obj, PyObject* name, Py_ssize_t* hint) {
    PyObject* v;
#if FA_DICT_HINTS
    PyTypeObject* tp = Py_TYPE(obj);
    if (tp->tp_dictoffset != 0 && PyUnicode_CheckExact(name)) {
        v = fa_instance_item(obj, tp, name, hint);
        if (v == NULL) {
            if (PyErr_Occurred()) return NULL;
            v = Py_None;
        }
        Py_INCREF(v);
        return v;
    }
#else
    (void)hint;
#endif
    PyObject* d = PyObject_GetAttrString(obj, "__dict__");
    if (d == NULL) return NULL;
    v = PyObject_CallMethod(d, "get", "O", name);
    Py_DECREF(d);
    return v;
}

#define FA_GET(obj, name) __extension__({ static fa_site fa_site_ = {0, 0, 0}; fa_get((obj), (name), &fa_site_); })
#define FA_SET(obj, name, value) __extension__({ static fa_site fa_site_ = {0, 0, 0}; \
                                                  fa_set((obj), (name), (value), &fa_site_); })
#define FA_TYPE_ATTR(obj, name) __extension__({ static fa_type_site fa_site_ = {0, NULL}; \
                                                 fa_type_attr(Py_TYPE(obj), (name), &fa_site_); })
#define FA_DICT_GET(obj, name) __extension__({ static Py_ssize_t fa_hint_ = 0; fa_dict_get((obj), (name), &fa_hint_); })
#define FA_CLASS_ATTR(cls, name) __extension__({ static fa_type_site fa_site_ = {0, NULL}; \
                                                  PyType_Check(cls) ? fa_type_attr((PyTypeObject*)(cls), (name), &fa_site_) : NULL; })

#endif
