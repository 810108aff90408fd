/* Element reads and small-array helpers of compiled operators (glns.compiler.transform).

   Each helper does what the Python expression it replaces does. It has a direct path for the
   cases operators meet in their inner loops (exact int indices, float64/int64 arrays, lists of
   ints) and otherwise calls exactly what Python would call, so that every error, slice, index
   array of another type or object of another class is NumPy's or Python's own business. The
   direct paths only read their inputs; results are new objects. Differences from NumPy: an
   element read is a Python float or int (not a NumPy scalar), as is the index argmin/argmax
   return, and the sum or difference of two float64 vectors sets no floating-point warning
   (the values are the same: one IEEE operation per element either way). */

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "numpy/ndarrayobject.h"

static PyObject *glns_np_array = NULL, *glns_np_argmin = NULL, *glns_np_argmax = NULL;

/* NumPy's C API and the functions the helpers recognise; once per module */
static int glns_arrays(void) {
    PyObject *np;
    if (PyArray_API == NULL && _import_array() < 0) return -1;
    if (glns_np_array != NULL) return 0;
    np = PyImport_ImportModule("numpy");
    if (np == NULL) return -1;
    glns_np_array = PyObject_GetAttrString(np, "array");
    glns_np_argmin = PyObject_GetAttrString(np, "argmin");
    glns_np_argmax = PyObject_GetAttrString(np, "argmax");
    Py_DECREF(np);
    return (glns_np_array && glns_np_argmin && glns_np_argmax) ? 0 : -1;
}

/* *k = v within [0, n) after Python's negative wrap-around; 0 when out of range */
static int glns_wrap(Py_ssize_t v, Py_ssize_t n, Py_ssize_t *k) {
    if (v < 0) v += n;
    if (v < 0 || v >= n) return 0;
    *k = v;
    return 1;
}

/* an exact int within [0, n) after wrap-around; 0 for anything else */
static int glns_index(PyObject *i, Py_ssize_t n, Py_ssize_t *k) {
    Py_ssize_t v;
    if (!PyLong_CheckExact(i)) return 0;
    v = PyLong_AsSsize_t(i);
    if (v == -1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
    return glns_wrap(v, n, k);
}

static int glns_numeric(PyArrayObject *a, int nd) {
    int t;
    if (PyArray_NDIM(a) != nd) return 0;
    t = PyArray_TYPE(a);
    return t == NPY_FLOAT64 || t == NPY_INT64;
}

static int glns_is_array(PyObject *o, int nd) {
    return Py_TYPE(o) == &PyArray_Type && glns_numeric((PyArrayObject *)o, nd);
}

/* a 1-D int64 array (an index array as np.array of a list of ints gives) */
static int glns_is_index_array(PyObject *o) {
    return Py_TYPE(o) == &PyArray_Type && PyArray_NDIM((PyArrayObject *)o) == 1
        && PyArray_TYPE((PyArrayObject *)o) == NPY_INT64;
}

/* the element at p of an array of type t (float64 or int64) as a Python number */
static PyObject *glns_number(const char *p, int t) {
    if (t == NPY_FLOAT64) return PyFloat_FromDouble(*(const npy_float64 *)p);
    return PyLong_FromLongLong((long long)*(const npy_int64 *)p);
}

/* a[ix[0], ..., ix[nd-1]] for a float64/int64 array a of nd (1 or 2) dimensions, where each
   index is an exact int or a 1-D int64 array, at least one an array and all arrays of one
   length: a new 1-D array as NumPy's advanced indexing gives. NULL without an error set when
   that does not apply or an index is out of range (NumPy then raises its own IndexError). */
static PyObject *glns_gather(PyArrayObject *a, int nd, PyObject **ix) {
    Py_ssize_t fixed[2] = {0, 0}, m = -1, t, k, off;
    PyArrayObject *arrs[2] = {NULL, NULL};
    PyArrayObject *out;
    npy_intp dims[1];
    int d, type = PyArray_TYPE(a);
    char *dst;
    for (d = 0; d < nd; d++) {
        if (glns_is_index_array(ix[d])) {
            arrs[d] = (PyArrayObject *)ix[d];
            if (m >= 0 && PyArray_DIM(arrs[d], 0) != m) return NULL;
            m = PyArray_DIM(arrs[d], 0);
        } else if (!glns_index(ix[d], PyArray_DIM(a, d), &fixed[d])) {
            return NULL;
        }
    }
    if (m < 0) return NULL;
    dims[0] = m;
    out = (PyArrayObject *)PyArray_SimpleNew(1, dims, type);
    if (out == NULL) { PyErr_Clear(); return NULL; }
    dst = PyArray_BYTES(out);
    for (t = 0; t < m; t++) {
        off = 0;
        for (d = 0; d < nd; d++) {
            k = fixed[d];
            if (arrs[d] != NULL) {
                npy_int64 v = *(npy_int64 *)(PyArray_BYTES(arrs[d]) + t * PyArray_STRIDE(arrs[d], 0));
                if (!glns_wrap((Py_ssize_t)v, PyArray_DIM(a, d), &k)) { Py_DECREF(out); return NULL; }
            }
            off += k * PyArray_STRIDE(a, d);
        }
        if (type == NPY_FLOAT64)
            ((npy_float64 *)dst)[t] = *(npy_float64 *)(PyArray_BYTES(a) + off);
        else
            ((npy_int64 *)dst)[t] = *(npy_int64 *)(PyArray_BYTES(a) + off);
    }
    return (PyObject *)out;
}

/* a[i] */
static PyObject *glns_at1(PyObject *a, PyObject *i) {
    PyTypeObject *t = Py_TYPE(a);
    Py_ssize_t k;
    PyObject *item;
    if (t == &PyList_Type) {
        if (glns_index(i, PyList_GET_SIZE(a), &k)) {
            item = PyList_GET_ITEM(a, k);
            Py_INCREF(item);
            return item;
        }
    } else if (t == &PyTuple_Type) {
        if (glns_index(i, PyTuple_GET_SIZE(a), &k)) {
            item = PyTuple_GET_ITEM(a, k);
            Py_INCREF(item);
            return item;
        }
    } else if (glns_is_array(a, 1)) {
        PyArrayObject *arr = (PyArrayObject *)a;
        if (glns_index(i, PyArray_DIM(arr, 0), &k))
            return glns_number(PyArray_BYTES(arr) + k * PyArray_STRIDE(arr, 0), PyArray_TYPE(arr));
        if (glns_is_index_array(i)) {
            item = glns_gather(arr, 1, &i);
            if (item != NULL) return item;
        }
    }
    return PyObject_GetItem(a, i);
}

/* a[i, j] */
static PyObject *glns_at2(PyObject *a, PyObject *i, PyObject *j) {
    Py_ssize_t k, m;
    PyObject *key, *item, *ix[2];
    if (glns_is_array(a, 2)) {
        PyArrayObject *arr = (PyArrayObject *)a;
        if (glns_index(i, PyArray_DIM(arr, 0), &k) && glns_index(j, PyArray_DIM(arr, 1), &m))
            return glns_number(PyArray_BYTES(arr) + k * PyArray_STRIDE(arr, 0)
                               + m * PyArray_STRIDE(arr, 1), PyArray_TYPE(arr));
        ix[0] = i;
        ix[1] = j;
        item = glns_gather(arr, 2, ix);
        if (item != NULL) return item;
    }
    key = PyTuple_Pack(2, i, j);
    if (key == NULL) return NULL;
    item = PyObject_GetItem(a, key);
    Py_DECREF(key);
    return item;
}

/* np.array(x) for a non-empty list of exact ints that fit int64, or of exact floats (the
   int64 or float64 array NumPy makes of it); NULL without an error set otherwise */
static PyObject *glns_list_array(PyObject *x) {
    Py_ssize_t n = PyList_GET_SIZE(x), t;
    npy_intp dims[1];
    PyArrayObject *out;
    PyObject *first;
    int overflow;
    if (n == 0) return NULL;
    first = PyList_GET_ITEM(x, 0);
    dims[0] = n;
    if (PyLong_CheckExact(first)) {
        npy_int64 *dst;
        out = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_INT64);
        if (out == NULL) { PyErr_Clear(); return NULL; }
        dst = (npy_int64 *)PyArray_BYTES(out);
        for (t = 0; t < n; t++) {
            PyObject *v = PyList_GET_ITEM(x, t);
            long long value;
            if (!PyLong_CheckExact(v)) { Py_DECREF(out); return NULL; }
            value = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (overflow || (value == -1 && PyErr_Occurred())) { PyErr_Clear(); Py_DECREF(out); return NULL; }
            dst[t] = (npy_int64)value;
        }
        return (PyObject *)out;
    }
    if (PyFloat_CheckExact(first)) {
        npy_float64 *dst;
        out = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_FLOAT64);
        if (out == NULL) { PyErr_Clear(); return NULL; }
        dst = (npy_float64 *)PyArray_BYTES(out);
        for (t = 0; t < n; t++) {
            PyObject *v = PyList_GET_ITEM(x, t);
            if (!PyFloat_CheckExact(v)) { Py_DECREF(out); return NULL; }
            dst[t] = PyFloat_AS_DOUBLE(v);
        }
        return (PyObject *)out;
    }
    return NULL;
}

/* the index np.argmin (want_max 0) or np.argmax (1) gives for a non-empty 1-D float64/int64
   array: the first extreme, or the first NaN when there is one */
static PyObject *glns_arg_extreme(PyArrayObject *a, int want_max) {
    Py_ssize_t n = PyArray_DIM(a, 0), s = PyArray_STRIDE(a, 0), t, best = 0;
    const char *p = PyArray_BYTES(a);
    if (PyArray_TYPE(a) == NPY_FLOAT64) {
        npy_float64 b = *(const npy_float64 *)p;
        if (b != b) return PyLong_FromSsize_t(0);
        for (t = 1; t < n; t++) {
            npy_float64 v = *(const npy_float64 *)(p + t * s);
            if (v != v) return PyLong_FromSsize_t(t);
            if (want_max ? v > b : v < b) { b = v; best = t; }
        }
    } else {
        npy_int64 b = *(const npy_int64 *)p;
        for (t = 1; t < n; t++) {
            npy_int64 v = *(const npy_int64 *)(p + t * s);
            if (want_max ? v > b : v < b) { b = v; best = t; }
        }
    }
    return PyLong_FromSsize_t(best);
}

/* f(x) for a call written module.function(x): np.array, np.argmin and np.argmax directly where
   the cases above apply, anything else as called */
static PyObject *glns_call1(PyObject *f, PyObject *x) {
    PyObject *r;
    if (f == glns_np_array && Py_TYPE(x) == &PyList_Type) {
        r = glns_list_array(x);
        if (r != NULL) return r;
    } else if ((f == glns_np_argmin || f == glns_np_argmax) && glns_is_array(x, 1)
               && PyArray_DIM((PyArrayObject *)x, 0) > 0) {
        return glns_arg_extreme((PyArrayObject *)x, f == glns_np_argmax);
    }
    return PyObject_CallOneArg(f, x);
}

/* a + b (sub 0) or a - b (sub 1) for two 1-D float64 arrays of one length: a new array, as
   NumPy's add/subtract give it; anything else is Python's own a + b / a - b */
static PyObject *glns_plus_minus(PyObject *a, PyObject *b, int sub) {
    if (Py_TYPE(a) == &PyArray_Type && Py_TYPE(b) == &PyArray_Type) {
        PyArrayObject *x = (PyArrayObject *)a, *y = (PyArrayObject *)b, *out;
        if (PyArray_NDIM(x) == 1 && PyArray_NDIM(y) == 1 && PyArray_TYPE(x) == NPY_FLOAT64
                && PyArray_TYPE(y) == NPY_FLOAT64 && PyArray_DIM(x, 0) == PyArray_DIM(y, 0)) {
            npy_intp n = PyArray_DIM(x, 0), t, sx = PyArray_STRIDE(x, 0), sy = PyArray_STRIDE(y, 0);
            const char *px = PyArray_BYTES(x), *py = PyArray_BYTES(y);
            npy_float64 *dst;
            out = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_FLOAT64);
            if (out == NULL) return NULL;
            dst = (npy_float64 *)PyArray_BYTES(out);
            for (t = 0; t < n; t++) {
                npy_float64 u = *(const npy_float64 *)(px + t * sx), v = *(const npy_float64 *)(py + t * sy);
                dst[t] = sub ? u - v : u + v;
            }
            return (PyObject *)out;
        }
    }
    return sub ? PyNumber_Subtract(a, b) : PyNumber_Add(a, b);
}
