# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The node table's bookkeeping kernels: row accounting and the per-row pod lists.

:class:`Accounts` binds the columns of one :class:`~fastsched.snapshot.table.NodeTable` once (the
table re-binds it whenever it reallocates one of them) so that adding or removing a pod is one call:
the pod's request vector (the sparse entries of its shape, below, and ``shape_nonzero[shape]``) is
added to or taken from the row's ``requested`` / ``nonzero_requested``, its flags update ``pod_count``,
``pods_with_affinity``, ``pods_with_req_anti`` and ``terminating_pods``, the row's version is bumped,
and the pod's record is linked into (or out of) the row's doubly-linked pod list.

Forks (``Scheduler.fork()``) share the table's columns copy-on-write: a shared column is read-only
(``flags.writeable`` False) in both tables until one takes ownership of it (a copy). The writing
views are only bound when every column they write is writable (:attr:`Accounts.writable`); else the
writing methods raise instead of writing into a column another table shares, and only the reading
ones (:meth:`Accounts.records`, :meth:`Accounts.find`, bound to read-only views) work: the table
takes ownership of these columns (``NodeTable._own_accounts``) before it writes.

Shapes: ``C`` rows, ``R`` resources, ``P`` pod records, ``S`` request shapes, ``E`` shape entries.
A request shape is sparse (a pod requests a few of the table's resources, which may be thousands:
one extended resource per node in upstream's SchedulingWithExtendedResource): its nonzero requests
are the entries ``shape_offsets[s] <= e < shape_offsets[s + 1]`` of ``shape_cols`` (E,) int64 (the
resource column) and ``shape_amounts`` (E,) int64 (the amount); ``shape_offsets`` is (S + 1,) int64. Pod lists: ``row_first``
/ ``row_last`` (C,) int64 and ``pod_next`` / ``pod_prev`` (P,) int64, -1 for none; ``pod_row`` (P,)
int64 is the record's row (-1 when the record is free). A removal moves the row's last pod into
the removed pod's place, as ``list[i] = list[-1]; list.pop()`` does, so the order of a row's pods is
the order the Python lists had.

**The changed-rows log.** Every write of a row's ``row_version`` also appends the row to the table's
changed-rows log (:data:`CHANGE_LOG_SIZE` entries, a ring): ``change_rows`` (L,) int64 holds the
rows, ``change_pos`` (1,) int64 the count of entries ever appended (entry ``q`` is at ``q % L``).
A reader that remembers the position it last read refreshes only the rows logged since (the
compiled cycle's score caches, ``_cycle.FusedPlan``), instead of comparing ``row_version`` per
row; one that fell more than L entries behind refreshes everything. The log's identity is its
``change_pos`` array: a new table, a fork's table or a restored one has a log of its own, so a
reader holding another table's position starts afresh. Writers: :meth:`Accounts._account` here,
``NodeTable._touch`` and ``NodeTable.add_nodes`` (``NodeTable._log_rows``).
"""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t
cimport numpy as cnp

from fastsched._kernels._arrays cimport stride_of, vector

cnp.import_array()

#: ``pod_flags`` bits
FLAG_AFFINITY = 1          # pod (anti-)affinity terms
FLAG_REQUIRED_ANTI = 2     # required pod anti-affinity terms
FLAG_TERMINATING = 4       # metadata.deletionTimestamp set
FLAG_HOST_PORTS = 8        # some container uses a host port
FLAG_UID_STRING = 16       # the pod's uid is not a canonical UUID: kept as a string

#: Entries of a table's changed-rows log (see the module docstring; a power of two)
CHANGE_LOG_SIZE = 1 << 14

cdef enum:
    _AFF = 1
    _ANTI = 2
    _TERM = 4
    _UID_STR = 16


cdef class Accounts:
    """The table columns the bookkeeping writes, bound once (see the module docstring)."""

    cdef int64_t[:, ::1] requested        # (C, R)
    cdef int64_t[:, ::1] nonzero          # (C, 2)
    cdef int64_t[::1] pod_count           # (C,)
    cdef int32_t[::1] with_affinity       # (C,)
    cdef int32_t[::1] with_anti           # (C,)
    cdef int32_t[::1] terminating         # (C,)
    cdef int64_t[::1] row_version         # (C,)
    cdef int32_t[::1] row_first, row_last  # (C,)
    cdef int32_t[::1] pod_row, pod_next, pod_prev  # (P,)
    cdef int32_t[::1] pod_shape           # (P,)
    cdef uint8_t[::1] pod_flags           # (P,)
    cdef uint64_t[::1] uid_hi, uid_lo     # (P,)
    cdef int32_t[::1] pod_signature, pod_affinity_signature, pod_template  # (P,)
    cdef const int64_t[::1] shape_offsets      # (S + 1,)
    cdef const int64_t[::1] shape_cols         # (E,)
    cdef const int64_t[::1] shape_amounts      # (E,)
    cdef const int64_t[:, ::1] shape_nonzero   # (S, 2)
    # the changed-rows log (see the module docstring): always the table's own, bound writable
    cdef int64_t[::1] change_rows                # (L,)
    cdef int64_t[::1] change_pos                 # (1,)
    cdef int64_t change_mask                     # L - 1
    # what the reading methods use: read-only views (a column shared with a fork binds too)
    cdef const int32_t[::1] r_row_first, r_pod_next  # (C,), (P,)
    cdef const uint8_t[::1] r_pod_flags              # (P,)
    cdef const uint64_t[::1] r_uid_hi, r_uid_lo      # (P,)
    #: whether the writing views are bound (every column they write is writable)
    cdef readonly bint writable

    def __init__(self, table):
        self.bind(table)

    def bind(self, table):
        """Bind ``table``'s current arrays (after the table replaced one of them); the writing
        views only when all the columns they write are writable (see the module docstring)."""
        if table.shape_cols.shape[0] != table.shape_amounts.shape[0]:
            raise ValueError("shape_cols and shape_amounts differ in length")
        self.r_row_first = table.row_first
        self.r_pod_next = table.pod_next
        self.r_pod_flags = table.pod_flags
        self.r_uid_hi = table.pod_uid_hi
        self.r_uid_lo = table.pod_uid_lo
        self.shape_offsets = table.shape_offsets
        self.shape_cols = table.shape_cols
        self.shape_amounts = table.shape_amounts
        self.shape_nonzero = table.shape_nonzero
        self.change_rows = table._change_rows
        self.change_pos = table._change_pos
        self.change_mask = self.change_rows.shape[0] - 1
        if self.change_rows.shape[0] & self.change_mask or self.change_pos.shape[0] != 1:
            raise ValueError("the changed-rows log needs a power-of-two size and one position")
        written = (table.requested, table.nonzero_requested, table.pod_count, table.pods_with_affinity,
                   table.pods_with_req_anti, table.terminating_pods, table.row_version, table.row_first,
                   table.row_last, table.pod_row, table.pod_next, table.pod_prev, table.pod_shape,
                   table.pod_flags, table.pod_uid_hi, table.pod_uid_lo, table.pod_signature,
                   table.pod_affinity_signature, table.pod_template)
        if not all([a.flags.writeable for a in written]):
            self.writable = False
            self.requested = None
            self.nonzero = None
            self.pod_count = None
            self.with_affinity = None
            self.with_anti = None
            self.terminating = None
            self.row_version = None
            self.row_first = None
            self.row_last = None
            self.pod_row = None
            self.pod_next = None
            self.pod_prev = None
            self.pod_shape = None
            self.pod_flags = None
            self.uid_hi = None
            self.uid_lo = None
            self.pod_signature = None
            self.pod_affinity_signature = None
            self.pod_template = None
            return
        self.requested = table.requested
        self.nonzero = table.nonzero_requested
        self.pod_count = table.pod_count
        self.with_affinity = table.pods_with_affinity
        self.with_anti = table.pods_with_req_anti
        self.terminating = table.terminating_pods
        self.row_version = table.row_version
        self.row_first = table.row_first
        self.row_last = table.row_last
        self.pod_row = table.pod_row
        self.pod_next = table.pod_next
        self.pod_prev = table.pod_prev
        self.pod_shape = table.pod_shape
        self.pod_flags = table.pod_flags
        self.uid_hi = table.pod_uid_hi
        self.uid_lo = table.pod_uid_lo
        self.pod_signature = table.pod_signature
        self.pod_affinity_signature = table.pod_affinity_signature
        self.pod_template = table.pod_template
        self.writable = True

    cdef int _check_writable(self) except -1:
        if not self.writable:
            raise RuntimeError("the node table's columns are shared with a fork (read-only): the table must "
                               "take ownership of them before writing")
        return 0

    cdef inline void _account(self, int64_t row, int64_t rec, int64_t sign, int64_t version) noexcept nogil:
        cdef int64_t shape = self.pod_shape[rec]
        cdef uint8_t flags = self.pod_flags[rec]
        cdef Py_ssize_t e
        cdef int64_t q = self.change_pos[0]
        for e in range(self.shape_offsets[shape], self.shape_offsets[shape + 1]):
            self.requested[row, self.shape_cols[e]] += sign * self.shape_amounts[e]
        self.nonzero[row, 0] += sign * self.shape_nonzero[shape, 0]
        self.nonzero[row, 1] += sign * self.shape_nonzero[shape, 1]
        self.pod_count[row] += sign
        if flags & _AFF:
            self.with_affinity[row] += <int32_t>sign
        if flags & _ANTI:
            self.with_anti[row] += <int32_t>sign
        if flags & _TERM:
            self.terminating[row] += <int32_t>sign
        self.row_version[row] = version
        self.change_rows[q & self.change_mask] = row
        self.change_pos[0] = q + 1

    cdef inline void _link(self, int64_t row, int64_t rec) noexcept nogil:
        cdef int32_t last = self.row_last[row]
        self.pod_row[rec] = <int32_t>row
        self.pod_prev[rec] = last
        self.pod_next[rec] = -1
        if last >= 0:
            self.pod_next[last] = <int32_t>rec
        else:
            self.row_first[row] = <int32_t>rec
        self.row_last[row] = <int32_t>rec

    cdef inline void _unlink(self, int64_t row, int64_t rec) noexcept nogil:
        cdef int32_t prev, nxt, last = self.row_last[row]
        # take the last record out of the list
        prev = self.pod_prev[last]
        if prev >= 0:
            self.pod_next[prev] = -1
        else:
            self.row_first[row] = -1
        self.row_last[row] = prev
        if last != rec:
            # ... and put it where ``rec`` was
            prev = self.pod_prev[rec]
            nxt = self.pod_next[rec]
            self.pod_prev[last] = prev
            self.pod_next[last] = nxt
            if prev >= 0:
                self.pod_next[prev] = last
            else:
                self.row_first[row] = last
            if nxt >= 0:
                self.pod_prev[nxt] = last
            else:
                self.row_last[row] = last
        self.pod_row[rec] = -1
        self.pod_next[rec] = -1
        self.pod_prev[rec] = -1

    def add(self, int64_t row, int64_t rec, int64_t version):
        """Link record ``rec`` (its shape and flags already set) last on ``row`` and account it."""
        self._check_writable()
        self._link(row, rec)
        self._account(row, rec, 1, version)

    def add_pod(self, int64_t row, int64_t rec, object uid, int32_t shape, uint8_t flags, int32_t signature,
                int32_t affinity_signature, int64_t version):
        """Fill record ``rec`` (a pod kept as an object: template -1), link it last on ``row`` and
        account it. Returns False when ``uid`` is not a canonical UUID (the record is then flagged
        ``FLAG_UID_STRING`` and the caller keeps the string)."""
        cdef uint64_t hi = 0, lo = 0
        cdef bint canonical = _parse(uid, &hi, &lo)
        self._check_writable()
        self.pod_shape[rec] = shape
        self.pod_flags[rec] = flags if canonical else flags | _UID_STR
        self.pod_signature[rec] = signature
        self.pod_affinity_signature[rec] = affinity_signature
        self.pod_template[rec] = -1
        self.uid_hi[rec] = hi
        self.uid_lo[rec] = lo
        self._link(row, rec)
        self._account(row, rec, 1, version)
        return canonical

    def remove(self, int64_t rec, int64_t version):
        """Unlink record ``rec`` from its row and take it off the row's sums; returns the row."""
        cdef int64_t row
        self._check_writable()
        row = self.pod_row[rec]
        if row < 0:
            raise KeyError(f"pod record {rec} is not on a row")
        self._unlink(row, rec)
        self._account(row, rec, -1, version)
        return row

    def release(self, int64_t rec, int64_t version):
        """:meth:`remove` of record ``rec``, then its columns cleared as a freed record's (template
        -1, flags 0; :meth:`remove` already set its row to -1). Returns ``(row, flags, signature,
        affinity signature, template)`` as the record held them, for the table's Python-side
        bookkeeping (one call where the record's removal read and wrote eight array elements one
        by one: a preemption victim's removal). IndexError for a record outside the columns,
        KeyError for one on no row (nothing changed either way)."""
        cdef int64_t row
        cdef uint8_t flags
        cdef int32_t signature, affinity_signature, template
        self._check_writable()
        if rec < 0 or rec >= self.pod_row.shape[0]:
            raise IndexError(f"pod record {rec} outside {self.pod_row.shape[0]} records")
        row = self.pod_row[rec]
        if row < 0:
            raise KeyError(f"pod record {rec} is not on a row")
        flags = self.pod_flags[rec]
        signature = self.pod_signature[rec]
        affinity_signature = self.pod_affinity_signature[rec]
        template = self.pod_template[rec]
        self._unlink(row, rec)
        self._account(row, rec, -1, version)  # (reads the flags: cleared after it)
        self.pod_template[rec] = -1
        self.pod_flags[rec] = 0
        return row, flags, signature, affinity_signature, template

    def add_many(self, const int64_t[::1] rows, const int64_t[::1] recs, int64_t version):
        """:meth:`add` for each ``(rows[i], recs[i])`` in order, versions ``version + 1 + i``;
        returns the last version."""
        cdef Py_ssize_t i, n = rows.shape[0]
        if recs.shape[0] != n:
            raise ValueError("rows and recs differ in length")
        self._check_writable()
        with nogil:
            for i in range(n):
                version += 1
                self._link(rows[i], recs[i])
                self._account(rows[i], recs[i], 1, version)
        return version

    def records(self, int64_t row):
        """The records of ``row``'s pods, in list order."""
        cdef list out = []
        cdef int64_t rec = self.r_row_first[row]
        while rec >= 0:
            out.append(rec)
            rec = self.r_pod_next[rec]
        return out

    def records_many(self, rows_):
        """:meth:`records` of each of ``rows`` ((N,) int64), row after row: ``(records, counts)``,
        (M,) int64 the records in list order and (N,) int64 how many each row has. IndexError for
        a row outside the table (nothing returned)."""
        cdef cnp.ndarray a_rows = vector(rows_, cnp.NPY_INT64, False, True, "records_many rows")
        cdef const int64_t* rows = <const int64_t*>cnp.PyArray_DATA(a_rows)
        cdef Py_ssize_t n = cnp.PyArray_DIM(a_rows, 0), n_rows = self.r_row_first.shape[0]
        cdef Py_ssize_t i, m = 0
        cdef int64_t rec, k
        cdef cnp.ndarray counts = np.empty(n, dtype=np.int64)
        cdef int64_t* c = <int64_t*>cnp.PyArray_DATA(counts)
        for i in range(n):
            if rows[i] < 0 or rows[i] >= n_rows:
                raise IndexError(f"records_many: row {rows[i]} outside {n_rows} rows")
        for i in range(n):
            k = 0
            rec = self.r_row_first[rows[i]]
            while rec >= 0:
                k += 1
                rec = self.r_pod_next[rec]
            c[i] = k
            m += k
        cdef cnp.ndarray out = np.empty(m, dtype=np.int64)
        cdef int64_t* o = <int64_t*>cnp.PyArray_DATA(out)
        m = 0
        for i in range(n):
            rec = self.r_row_first[rows[i]]
            while rec >= 0:
                o[m] = rec
                m += 1
                rec = self.r_pod_next[rec]
        return out, counts

    def find(self, int64_t row, object uid, dict uid_strings):
        """The record on ``row`` of the pod with ``uid``, or -1. Record uids are ``pod_uid_hi`` /
        ``pod_uid_lo``, or ``uid_strings[record]`` for records flagged ``FLAG_UID_STRING``."""
        cdef int64_t rec = self.r_row_first[row]
        cdef uint64_t hi, lo
        if _parse(uid, &hi, &lo):
            while rec >= 0:
                if not self.r_pod_flags[rec] & _UID_STR and self.r_uid_hi[rec] == hi and self.r_uid_lo[rec] == lo:
                    return rec
                rec = self.r_pod_next[rec]
            return -1
        while rec >= 0:
            if self.r_pod_flags[rec] & _UID_STR and uid_strings.get(rec) == uid:
                return rec
            rec = self.r_pod_next[rec]
        return -1


# ------------------------------------------------------------------------------------------------
# uids: a canonical UUID (36 characters, lowercase hex, dashes at 8, 13, 18, 23) is kept as two
# uint64 (16 bytes) instead of a str (85 bytes); other uids stay strings.
# ------------------------------------------------------------------------------------------------
import numpy as np


cdef inline int _hex(Py_UCS4 ch) noexcept:
    cdef long c = <long>ch
    if 48 <= c <= 57:
        return <int>(c - 48)
    if 97 <= c <= 102:
        return <int>(c - 87)
    return -1


cdef inline bint _parse(object uid, uint64_t* hi, uint64_t* lo):
    """Parse a canonical UUID; False for anything else."""
    if type(uid) is not str:
        return False
    cdef str s = <str>uid
    if len(s) != 36:
        return False
    cdef uint64_t h = 0, l = 0
    cdef int i, v, k = 0
    cdef Py_UCS4 c
    for i in range(36):
        c = s[i]
        if i == 8 or i == 13 or i == 18 or i == 23:
            if <long>c != 45:  # '-'
                return False
            continue
        v = _hex(c)
        if v < 0:
            return False
        if k < 16:
            h = (h << 4) | <uint64_t>v
        else:
            l = (l << 4) | <uint64_t>v
        k += 1
    hi[0] = h
    lo[0] = l
    return True


def parse_uid(object uid):
    """``(hi, lo)`` of a canonical UUID string, or None."""
    cdef uint64_t hi, lo
    if _parse(uid, &hi, &lo):
        return hi, lo
    return None


def parse_uids(list uids, uint64_t[::1] hi, uint64_t[::1] lo, uint8_t[::1] ok):
    """Parse ``uids`` into ``hi`` / ``lo`` (``ok[i]`` 0 where ``uids[i]`` is not a canonical UUID)."""
    cdef Py_ssize_t i, n = len(uids)
    cdef uint64_t h, l
    for i in range(n):
        if _parse(uids[i], &h, &l):
            hi[i] = h
            lo[i] = l
            ok[i] = 1
        else:
            hi[i] = 0
            lo[i] = 0
            ok[i] = 0


cdef const char* _HEX_DIGITS = b"0123456789abcdef"


def format_uid(uint64_t hi, uint64_t lo):
    """The canonical UUID string of ``(hi, lo)``."""
    cdef char out[36]
    cdef int i, k = 0
    cdef uint64_t word
    for i in range(36):
        if i == 8 or i == 13 or i == 18 or i == 23:
            out[i] = 45
            continue
        word = hi if k < 16 else lo
        out[i] = _HEX_DIGITS[(word >> (4 * (15 - (k % 16)))) & 15]
        k += 1
    # (one ASCII decode: the digits as Python strings joined cost ~13k instructions a uid)
    return out[:36].decode("ascii")


def last_position(const int64_t[:] rows, int64_t row):
    """The last position ``i`` with ``rows[i] == row``, -1 when there is none: where a batch holds
    a table row, without NumPy's compare-then-any arrays (``row in rows`` costs ~20 us on a
    loaded machine for a few hundred rows; VolumeBinding asks it once a pod, at Reserve)."""
    cdef Py_ssize_t i = rows.shape[0] - 1
    with nogil:
        while i >= 0 and rows[i] != row:
            i -= 1
    return i


cdef inline uint64_t _mix(uint64_t hi, uint64_t lo) noexcept nogil:
    # splitmix64's finalizer over both words: UUIDs need not be random (v1, hand-written ones)
    cdef uint64_t z = hi ^ (lo * <uint64_t>0x9E3779B97F4A7C15)
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EB
    return z ^ (z >> 31)


cdef class UidIndex:
    """uid -> int64, open addressing over ``(hi, lo)`` pairs (canonical UUIDs only: see
    :func:`parse_uid`); about 48 bytes per entry where a dict keyed by the strings takes ~125."""

    cdef object _hi_a, _lo_a, _val_a
    cdef uint64_t[::1] hi
    cdef uint64_t[::1] lo
    cdef int64_t[::1] val       # -1 empty, -2 removed
    cdef Py_ssize_t mask, used, filled

    def __init__(self, Py_ssize_t capacity=64):
        cdef Py_ssize_t cap = 64
        while cap < 2 * capacity:
            cap *= 2
        self._alloc(cap)

    cdef _alloc(self, Py_ssize_t cap):
        self._hi_a = np.zeros(cap, dtype=np.uint64)
        self._lo_a = np.zeros(cap, dtype=np.uint64)
        self._val_a = np.full(cap, -1, dtype=np.int64)
        self.hi = self._hi_a
        self.lo = self._lo_a
        self.val = self._val_a
        self.mask = cap - 1
        self.used = 0
        self.filled = 0

    def __len__(self):
        return self.used

    cdef Py_ssize_t _slot(self, uint64_t hi, uint64_t lo) noexcept nogil:
        """The slot holding the key, or -1."""
        cdef Py_ssize_t i = <Py_ssize_t>(_mix(hi, lo) & <uint64_t>self.mask)
        cdef int64_t v
        while True:
            v = self.val[i]
            if v == -1:
                return -1
            if v >= 0 and self.hi[i] == hi and self.lo[i] == lo:
                return i
            i = (i + 1) & self.mask

    cdef void _put(self, uint64_t hi, uint64_t lo, int64_t value) noexcept nogil:
        cdef Py_ssize_t i = <Py_ssize_t>(_mix(hi, lo) & <uint64_t>self.mask)
        cdef Py_ssize_t free = -1
        cdef int64_t v
        while True:
            v = self.val[i]
            if v == -1:
                break
            if v == -2:
                if free < 0:
                    free = i
            elif self.hi[i] == hi and self.lo[i] == lo:
                self.val[i] = value
                return
            i = (i + 1) & self.mask
        if free >= 0:
            i = free
        else:
            self.filled += 1
        self.hi[i] = hi
        self.lo[i] = lo
        self.val[i] = value
        self.used += 1

    cdef _reserve(self, Py_ssize_t extra):
        """Room for ``extra`` more keys at a load (tombstones included) of at most one half."""
        cdef Py_ssize_t cap = self.mask + 1, new_cap, i
        cdef uint64_t[::1] ohi, olo
        cdef int64_t[::1] oval
        if 2 * (self.filled + extra) <= cap:
            return
        new_cap = cap
        while 2 * (self.used + extra) > new_cap:
            new_cap *= 2
        ohi, olo, oval = self.hi, self.lo, self.val
        self._alloc(new_cap)
        for i in range(ohi.shape[0]):
            if oval[i] >= 0:
                self._put(ohi[i], olo[i], oval[i])

    def get(self, uint64_t hi, uint64_t lo):
        """The value of ``(hi, lo)``, or -1."""
        cdef Py_ssize_t i = self._slot(hi, lo)
        return -1 if i < 0 else self.val[i]

    def lookup(self, object uid):
        """The value of uid string ``uid``, or -1 (also for a uid that is not a canonical UUID)."""
        cdef uint64_t hi, lo
        cdef Py_ssize_t i
        if not _parse(uid, &hi, &lo):
            return -1
        i = self._slot(hi, lo)
        return -1 if i < 0 else self.val[i]

    def remove_if(self, object uid, int64_t value):
        """Remove uid string ``uid`` when it maps to ``value``; returns whether it did (False
        for a uid that is not a canonical UUID: the caller keeps those elsewhere). One call for
        what ``parse_uid``, :meth:`get` and :meth:`remove` did as three."""
        cdef uint64_t hi, lo
        cdef Py_ssize_t i
        if not _parse(uid, &hi, &lo):
            return False
        i = self._slot(hi, lo)
        if i < 0 or self.val[i] != value:
            return False
        self.val[i] = -2
        self.used -= 1
        return True

    def put(self, uint64_t hi, uint64_t lo, int64_t value):
        self._reserve(1)
        self._put(hi, lo, value)

    def put_many(self, const uint64_t[::1] hi, const uint64_t[::1] lo, const uint8_t[::1] ok,
                 const int64_t[::1] values):
        """Set ``(hi[i], lo[i]) -> values[i]`` where ``ok[i]``."""
        cdef Py_ssize_t i, n = hi.shape[0]
        self._reserve(n)
        for i in range(n):
            if ok[i]:
                self._put(hi[i], lo[i], values[i])

    def count_present(self, const uint64_t[::1] hi, const uint64_t[::1] lo, const uint8_t[::1] ok):
        """How many of the keys (where ``ok``) are present."""
        cdef Py_ssize_t i, n = hi.shape[0], found = 0
        for i in range(n):
            if ok[i] and self._slot(hi[i], lo[i]) >= 0:
                found += 1
        return found

    def remove(self, uint64_t hi, uint64_t lo):
        """Remove the key; returns whether it was there."""
        cdef Py_ssize_t i = self._slot(hi, lo)
        if i < 0:
            return False
        self.val[i] = -2
        self.used -= 1
        return True

    def __deepcopy__(self, memo):
        """An independent copy with the same slots (a Scheduler fork copies its indexes)."""
        cdef UidIndex clone = UidIndex.__new__(UidIndex)
        clone._hi_a = self._hi_a.copy()
        clone._lo_a = self._lo_a.copy()
        clone._val_a = self._val_a.copy()
        clone.hi = clone._hi_a
        clone.lo = clone._lo_a
        clone.val = clone._val_a
        clone.mask = self.mask
        clone.used = self.used
        clone.filled = self.filled
        memo[id(self)] = clone
        return clone


# -- reading per-domain counts at the rows' label codes ------------------------------------------
def mark_positive_at(const int64_t[::1] counts, const int32_t[::1] codes, const int64_t[::1] rows,
                     uint8_t[::1] out, bint conjunction):
    """For each i < len(rows): ``hit = counts[codes[rows[i]]] > 0``, a code below 0 (label absent)
    or past ``counts`` reading 0; ``out[i] = out[i] and hit`` with ``conjunction``, else
    ``out[i] or hit``. counts: (V,) int64 by label code; codes: (C,) int32, a label column of the
    table; rows: (n,) int64; out: (n,) uint8 (a bool array's ``view(np.uint8)``). What
    InterPodAffinity's vectorized Filter reads per term and window, without the padded copy of
    ``counts`` and the gathered array a NumPy expression allocates each time."""
    cdef Py_ssize_t n = rows.shape[0], v = counts.shape[0], i
    cdef int32_t code
    cdef bint hit
    if out.shape[0] < n:
        raise ValueError(f"mark_positive_at: out has {out.shape[0]} entries for {n} rows")
    with nogil:
        for i in range(n):
            code = codes[rows[i]]
            hit = 0 <= code < v and counts[code] > 0
            if conjunction:
                out[i] = out[i] and hit
            else:
                out[i] = out[i] or hit



def skew_verdicts_at(const int32_t[::1] codes, const int64_t[:] rows, const int64_t[:] counts, int64_t limit,
                     int8_t missing_code, int32_t missing_reason, int8_t fail_code, int32_t fail_reason):
    """``(status codes (n,) int8, reason ids (n,) int32)`` of a per-domain count check, for each
    i < len(rows) with ``d = codes[rows[i]]``: ``(missing_code, missing_reason)`` when d < 0 (label
    absent), ``(fail_code, fail_reason)`` when ``counts[d] > limit`` (d past ``counts`` reads 0),
    else ``(0, -1)``. codes: (C,) int32, a label column of the table; rows: (n,) int64; counts:
    by label code. PodTopologySpread's Filter of one constraint for a window of nodes in one pass
    (``count + selfMatch - minMatch > maxSkew`` is ``count > limit``)."""
    cdef Py_ssize_t n = rows.shape[0], v = counts.shape[0], i
    cdef int32_t code
    cdef int64_t count
    out_codes = np.empty(n, dtype=np.int8)
    out_reasons = np.empty(n, dtype=np.int32)
    cdef int8_t[::1] oc = out_codes
    cdef int32_t[::1] orr = out_reasons
    with nogil:
        for i in range(n):
            code = codes[rows[i]]
            if code < 0:
                oc[i] = missing_code
                orr[i] = missing_reason
                continue
            count = counts[code] if code < v else 0
            if count > limit:
                oc[i] = fail_code
                orr[i] = fail_reason
            else:
                oc[i] = 0
                orr[i] = -1
    return out_codes, out_reasons


cdef struct _CountCheck:
    const int64_t* counts      # (V,) by label code, stride ``counts_stride`` elements
    Py_ssize_t counts_stride
    Py_ssize_t v               # len(counts): a code past it reads 0
    const int32_t* column      # (C,) label codes by row (-1: label absent)
    Py_ssize_t width           # len(column)
    bint absent_ok
    int64_t lo, hi


cdef inline void _one_check(const _CountCheck* ch, const int64_t* r_, Py_ssize_t rs, Py_ssize_t n, uint8_t* m_,
                            Py_ssize_t cap, bint first, int64_t* bad_row, bint* bad, int64_t* bad_width) noexcept nogil:
    """:func:`clear_failing`'s pass with one check (the same rules, the check's fields local)."""
    cdef const int64_t* counts = ch.counts
    cdef const int32_t* column = ch.column
    cdef Py_ssize_t cs = ch.counts_stride, v = ch.v, width = ch.width, i
    cdef bint absent_ok = ch.absent_ok
    cdef int64_t lo = ch.lo, hi = ch.hi, row, c
    cdef int32_t code
    for i in range(n):
        row = r_[i * rs]
        if row < 0 or row >= cap:
            bad_row[0], bad[0] = row, True
            return
        if not first and not m_[row]:
            continue
        if row >= width:
            bad_row[0], bad_width[0] = row, width
            return
        code = column[row]
        if code < 0:
            m_[row] = absent_ok
            continue
        c = counts[code * cs] if code < v else 0
        m_[row] = lo <= c <= hi


def clear_failing(list checks, rows, mask, bint first):
    """Per-domain count checks of a window of rows, written into the compiled cycle's pass mask
    (``mask``: (C,) uint8 by table row) instead of per-row status codes: with ``first`` (the
    window's first Filter) ``mask[rows[i]] = 1`` for every i first; then each check ``(counts (V,)
    int64, column (C,) int32, absent_ok, lo, hi)`` sets ``mask[rows[i]] = 0`` unless the row's
    domain passes it: with ``d = column[rows[i]]``, the row passes when ``d < 0`` (label absent) and
    ``absent_ok``, or when ``d >= 0`` and ``lo <= c <= hi`` with ``c = counts[d]`` (0 for ``d`` past
    ``counts``). A row already 0 stays 0 (Filters AND). What ``codes == 0`` of the plugins' verdict
    kernels (``skew_verdicts_at``, ``_interpodaffinity.mark`` + ``verdicts``) gives, without the
    codes, the reasons and the mask's scatter: InterPodAffinity's and PodTopologySpread's Filter in
    the compiled cycle's windows.

    One pass over the rows, each row's checks in order until one fails (the mask's final bits are
    those of a pass per check). The arrays are checked without a buffer (``_arrays.vector``: rows
    (n,) int64 and counts may be strided, column and mask C-contiguous, mask writable): four
    memoryviews per window cost more than a window's rows (issue 29, branch ``spread``). A row
    outside the mask or a label column raises IndexError."""
    cdef cnp.ndarray r_arr = vector(rows, cnp.NPY_INT64, False, False, "clear_failing rows")
    cdef cnp.ndarray m_arr = vector(mask, cnp.NPY_UINT8, True, True, "clear_failing mask")
    cdef const int64_t* r_ = <const int64_t*>cnp.PyArray_DATA(r_arr)
    cdef Py_ssize_t rs = stride_of(r_arr), n = cnp.PyArray_DIM(r_arr, 0), cap = cnp.PyArray_DIM(m_arr, 0)
    cdef uint8_t* m_ = <uint8_t*>cnp.PyArray_DATA(m_arr)
    cdef Py_ssize_t k = len(checks), i, j
    cdef _CountCheck[4] small
    cdef _CountCheck* cs = small
    cdef _CountCheck* ch
    cdef cnp.ndarray a
    cdef int64_t row, c, bad_row = 0, bad_width = -1
    cdef bint bad = False
    cdef int32_t code
    cdef uint8_t ok
    if k > 4:
        cs = <_CountCheck*>PyMem_Malloc(k * sizeof(_CountCheck))
        if cs == NULL:
            raise MemoryError()
    try:
        for j in range(k):  # (``checks`` holds the arrays for the call)
            counts, column, absent_ok, lo, hi = checks[j]
            ch = &cs[j]
            a = vector(counts, cnp.NPY_INT64, False, False, "clear_failing counts")
            ch.counts, ch.counts_stride, ch.v = <const int64_t*>cnp.PyArray_DATA(a), stride_of(a), cnp.PyArray_DIM(a, 0)
            a = vector(column, cnp.NPY_INT32, False, True, "clear_failing column")
            ch.column, ch.width = <const int32_t*>cnp.PyArray_DATA(a), cnp.PyArray_DIM(a, 0)
            ch.absent_ok, ch.lo, ch.hi = absent_ok, lo, hi
        with nogil:
            if k == 1:  # (one check, the common window Filter: its fields in registers)
                _one_check(&cs[0], r_, rs, n, m_, cap, first, &bad_row, &bad, &bad_width)
            for i in range(n if k != 1 else 0):
                row = r_[i * rs]
                if row < 0 or row >= cap:
                    bad_row, bad = row, True
                    break
                ok = 1 if first else m_[row]
                if ok:
                    for j in range(k):
                        ch = &cs[j]
                        if row >= ch.width:
                            bad_row, bad_width = row, ch.width
                            break
                        code = ch.column[row]
                        if code < 0:
                            if not ch.absent_ok:
                                ok = 0
                                break
                            continue
                        c = ch.counts[code * ch.counts_stride] if code < ch.v else 0
                        if c < ch.lo or c > ch.hi:
                            ok = 0
                            break
                    if bad_width >= 0:
                        break
                m_[row] = ok
    finally:
        if cs != small:
            PyMem_Free(cs)
    if bad_width >= 0:
        raise IndexError(f"clear_failing: row {bad_row} outside a label column of {bad_width} rows")
    if bad:
        raise IndexError(f"clear_failing: row {bad_row} outside the mask's {cap} rows")


cdef inline void _two_smallest(const int64_t* counts, Py_ssize_t stride, Py_ssize_t n, Py_ssize_t* first_out,
                               Py_ssize_t* second_out) noexcept nogil:
    """:func:`two_smallest` over ``counts[i * stride]``, ``0 <= i < n``."""
    cdef Py_ssize_t i, first = -1, second = -1
    cdef int64_t c, low = 0, next_low = 0
    if n > 0:
        first, low = 0, counts[0]
    for i in range(1, n):
        c = counts[i * stride]
        if c < low:
            second, next_low = first, low
            first, low = i, c
        elif second < 0 or c < next_low:
            second, next_low = i, c
    first_out[0], second_out[0] = first, second


def two_smallest(counts):
    """``(first, second)``: the positions of the smallest and the second smallest ``(counts[i], i)``
    (the earlier of equal counts first); -1 for none (fewer than one or two entries). One pass:
    PodTopologySpread's critical paths over many domains (upstream ``criticalPaths.update`` over
    the domains in order keeps the same two). counts: (n,) int64, 1-d (strided allowed)."""
    cdef cnp.ndarray a = vector(counts, cnp.NPY_INT64, False, False, "two_smallest counts")
    cdef Py_ssize_t first, second, stride = stride_of(a)
    with nogil:
        _two_smallest(<const int64_t*>cnp.PyArray_DATA(a), stride, cnp.PyArray_DIM(a, 0), &first, &second)
    return first, second


def gather_two_smallest(by_code, codes, out):
    """``out[j] = by_code[codes[j]]`` for every j, then :func:`two_smallest` of ``out``, in one
    pass: PodTopologySpread's PreFilter over many domains (a hostname constraint: one per node),
    the domains' counts in first-appearance order (``codes``) from the counts by label code, and
    their critical paths, instead of a NumPy gather and a second pass. by_code: (V,) int64; codes:
    (D,) int64, each in ``[0, V)`` (IndexError otherwise); out: (>= D,) int64, writable; all 1-d
    C-contiguous."""
    cdef cnp.ndarray b_arr = vector(by_code, cnp.NPY_INT64, False, True, "gather_two_smallest by_code")
    cdef cnp.ndarray c_arr = vector(codes, cnp.NPY_INT64, False, True, "gather_two_smallest codes")
    cdef cnp.ndarray o_arr = vector(out, cnp.NPY_INT64, True, True, "gather_two_smallest out")
    cdef const int64_t* b_ = <const int64_t*>cnp.PyArray_DATA(b_arr)
    cdef const int64_t* c_ = <const int64_t*>cnp.PyArray_DATA(c_arr)
    cdef int64_t* o_ = <int64_t*>cnp.PyArray_DATA(o_arr)
    cdef Py_ssize_t n = cnp.PyArray_DIM(c_arr, 0), v = cnp.PyArray_DIM(b_arr, 0), j, first, second
    cdef int64_t code, bad_code = 0
    cdef bint bad = False
    if cnp.PyArray_DIM(o_arr, 0) < n:
        raise ValueError(f"gather_two_smallest: out has {cnp.PyArray_DIM(o_arr, 0)} entries for {n} codes")
    with nogil:
        for j in range(n):
            code = c_[j]
            if code < 0 or code >= v:
                bad, bad_code = True, code
                break
            o_[j] = b_[code]
        if not bad:
            _two_smallest(o_, 1, n, &first, &second)
    if bad:
        raise IndexError(f"gather_two_smallest: code {bad_code} outside the {v} counts")
    return first, second


def normalize_reverse(int64_t[::1] scores, int64_t max_node_score):
    """In place: ``s -> max_node_score * (hi + lo - s) // hi`` with ``lo`` the smallest score and
    ``hi`` the largest (at least 0), floor division as NumPy's; every score ``max_node_score`` when
    ``hi`` is 0. PodTopologySpread's NormalizeScore when no node is ignored, in two passes
    instead of five NumPy calls."""
    cdef Py_ssize_t n = scores.shape[0], i
    cdef int64_t lo, hi, num, q
    if n == 0:
        return
    with nogil:
        lo = hi = scores[0]
        for i in range(1, n):
            if scores[i] < lo:
                lo = scores[i]
            elif scores[i] > hi:
                hi = scores[i]
        if hi < 0:
            hi = 0
        if hi == 0:
            for i in range(n):
                scores[i] = max_node_score
        else:
            for i in range(n):
                num = max_node_score * (hi + lo - scores[i])
                q = num // hi
                if num % hi != 0 and num < 0:  # hi > 0: floor, as NumPy's // (C truncates)
                    q -= 1
                scores[i] = q
