# cython: language_level=3
"""1-d NumPy array arguments checked without a buffer, shared by the per-cycle kernels
(``_interpodaffinity``, ``_table.clear_failing``, ``_preemption.select_victims``,
``_diagnosis.merge_fit``): one definition, inlined; 2-d ones by :func:`matrix`.

A typed memoryview argument (``T[::1]``, ``T[:]``) costs a buffer acquisition and a memoryview
object per call (~0.3-0.5 µs each): for PreScore's and Score's small arrays, and for the compiled
cycle's window Filters (four per window, 2+ windows a pod), more than the loop. These checks
accept what such a memoryview accepts of a NumPy array (1-d, the dtype, native byte order,
aligned; C-contiguous when asked) and the kernel reads the data pointer (and, for a strided
argument, the stride in elements: ``stride_of``). The caller's module cimports numpy and calls
``cnp.import_array()``.
"""
cimport numpy as cnp


cdef inline str type_name(int type_num):
    if type_num == cnp.NPY_INT64:
        return "int64"
    if type_num == cnp.NPY_INT32:
        return "int32"
    if type_num == cnp.NPY_UINT8:
        return "uint8"
    if type_num == cnp.NPY_INT8:
        return "int8"
    if type_num == cnp.NPY_INT16:
        return "int16"
    if type_num == cnp.NPY_FLOAT64:
        return "float64"
    if type_num == cnp.NPY_OBJECT:
        return "object"
    return str(type_num)


cdef inline cnp.ndarray vector(object a, int type_num, bint writable, bint contiguous, str what):
    """``a`` as a 1-d aligned native-order array of ``type_num`` (C-contiguous when
    ``contiguous``; writable when ``writable``), else ValueError (TypeError for a non-array)."""
    if not cnp.PyArray_Check(a):
        raise TypeError(f"{what}: a NumPy array expected, got {type(a).__name__}")
    cdef cnp.ndarray arr = <cnp.ndarray>a
    if (cnp.PyArray_NDIM(arr) != 1 or cnp.PyArray_TYPE(arr) != type_num or not cnp.PyArray_ISNOTSWAPPED(arr)
            or not cnp.PyArray_ISALIGNED(arr) or (contiguous and not cnp.PyArray_IS_C_CONTIGUOUS(arr))):
        raise ValueError(f"{what}: a 1-d {'C-contiguous ' if contiguous else ''}native {type_name(type_num)} "
                         f"array expected, got {a.dtype} of shape {a.shape}")
    if writable and not cnp.PyArray_ISWRITEABLE(arr):
        raise ValueError(f"{what}: buffer source array is read-only")
    return arr


cdef inline Py_ssize_t stride_of(cnp.ndarray arr) noexcept:
    """The stride of a :func:`vector`-checked array in elements (aligned: a whole number)."""
    return cnp.PyArray_STRIDE(arr, 0) // cnp.PyArray_ITEMSIZE(arr)


cdef inline cnp.ndarray matrix(object a, int type_num, bint writable, bint rows_contiguous, str what):
    """``a`` as a 2-d aligned native-order array of ``type_num`` (each row contiguous when
    ``rows_contiguous``, as a ``T[:, ::1]`` memoryview asks; writable when ``writable``), else
    ValueError (TypeError for a non-array). Element ``[i, j]`` is at ``i * stride_of_dim(arr, 0)
    + j * stride_of_dim(arr, 1)`` elements from the data pointer."""
    if not cnp.PyArray_Check(a):
        raise TypeError(f"{what}: a NumPy array expected, got {type(a).__name__}")
    cdef cnp.ndarray arr = <cnp.ndarray>a
    if (cnp.PyArray_NDIM(arr) != 2 or cnp.PyArray_TYPE(arr) != type_num or not cnp.PyArray_ISNOTSWAPPED(arr)
            or not cnp.PyArray_ISALIGNED(arr)
            or (rows_contiguous and cnp.PyArray_DIM(arr, 1) > 1
                and cnp.PyArray_STRIDE(arr, 1) != cnp.PyArray_ITEMSIZE(arr))):
        raise ValueError(f"{what}: a 2-d {'row-contiguous ' if rows_contiguous else ''}native "
                         f"{type_name(type_num)} array expected, got {a.dtype} of shape {a.shape}")
    if writable and not cnp.PyArray_ISWRITEABLE(arr):
        raise ValueError(f"{what}: buffer source array is read-only")
    return arr


cdef inline Py_ssize_t stride_of_dim(cnp.ndarray arr, int dim) noexcept:
    """The stride of dimension ``dim`` of a :func:`vector`- or :func:`matrix`-checked array in
    elements (aligned: a whole number)."""
    return cnp.PyArray_STRIDE(arr, dim) // cnp.PyArray_ITEMSIZE(arr)
