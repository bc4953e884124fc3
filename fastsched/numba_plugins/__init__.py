"""Filter and Score plugins written as numba column kernels over the node table.

A user kernel is a ``@numba.njit(cache=True)`` function that loops over candidate rows of the node
table and writes one verdict (Filter) or one raw score (Score) per row. The plugin class names the
table columns the kernel reads and turns the pod (and the plugin's args) into scalars; fastsched
calls the kernel with::

    kernel(rows, *columns, *pod_scalars, out)

* ``rows``: (n,) int64, the table rows of the candidate nodes (``NodeBatch.rows``);
* ``columns``: the table arrays named in ``columns``, indexed by row (``C`` = the table's row
  capacity, ``R`` = its resource columns; :data:`TABLE_COLUMNS` holds the same list):

  =======================  ========  ========  =============================================================
  name                     shape     dtype     meaning
  =======================  ========  ========  =============================================================
  ``live``                 (C,)      bool      the row holds a node
  ``alloc``                (C, R)    int64     allocatable per resource
  ``requested``            (C, R)    int64     sum of the pods' requests (with overhead) per resource
  ``nonzero_requested``    (C, 2)    int64     cpu, memory requested with upstream's non-zero defaults
  ``allowed_pods``         (C,)      int64     allocatable pods
  ``pod_count``            (C,)      int64     pods on the node (assumed pods included)
  ``unschedulable``        (C,)      bool      ``spec.unschedulable``
  ``has_host_ports``       (C,)      bool      some pod on the node uses a host port
  ``pods_with_affinity``   (C,)      int32     pods with pod (anti-)affinity terms
  ``pods_with_req_anti``   (C,)      int32     pods with required pod anti-affinity terms
  ``terminating_pods``     (C,)      int32     pods with a ``metadata.deletionTimestamp``
  ``label:<key>``          (C,)      int32     code of the node's value of label ``<key>``, -1 when absent
  =======================  ========  ========  =============================================================

  Resource columns are numbered by ``table.resource_index``: cpu = 0 (millicores), memory = 1 and
  ephemeral-storage = 2 (bytes), then extended resources (``nvidia.com/gpu``, ...) in order of
  first appearance; ``table.resource_index.get(name, -1)`` is -1 when no node lists it. A label
  value's code is ``table.label_code(key, value)`` (-1 when no node has it). ``live``, ``alloc``,
  ``allowed_pods``, ``unschedulable`` and the label columns depend on the nodes only: a kernel
  reading only those joins the compiled scheduling cycle (see ``spec_only_scalars``);
* ``pod_scalars``: what :meth:`NumbaKernelPlugin.pod_scalars` returns for the pod: ints and floats
  (numba also accepts NumPy arrays, e.g. a workload distribution from the plugin's args);
* ``out``: (n,) int64, written by the kernel: a Score kernel writes the raw score of ``rows[i]``;
  a Filter kernel writes 0 when the node passes, or ``k >= 1`` for the failure ``reasons[k - 1]``.

The one-node-at-a-time methods (``filter`` / ``score``) run **the same kernel** on one row: the
node's own row of the live table for a snapshot's ``NodeInfoView``, or a one-row table built from
a detached :class:`~fastsched.framework.NodeInfo` (preemption dry runs, nominated pods), so
:func:`fastsched.testing.assert_paths_equivalent` and :func:`fastsched.testing.check_plugin` check
such a plugin like any other. Register the class like any plugin (it is its own factory,
``cls(args, handle)``) and configure it from YAML; ``args`` is the plugin's ``pluginConfig`` args
mapping (``{}`` when none).

Example (``examples/numba_gpu_fragmentation/`` has a complete one)::

    import numba
    from fastsched.numba_plugins import NumbaScorePlugin

    @numba.njit(cache=True)
    def free_cpu_kernel(rows, alloc, requested, cpu_request, out):
        for i in range(rows.shape[0]):
            r = rows[i]
            free = alloc[r, 0] - requested[r, 0] - cpu_request
            out[i] = 100 * free // alloc[r, 0] if free > 0 and alloc[r, 0] > 0 else 0

    class FreeCpu(NumbaScorePlugin):
        NAME = "FreeCpu"
        kernel = free_cpu_kernel
        columns = ("alloc", "requested")

        def pod_scalars(self, pod, table):
            return (int(pod.requests.get("cpu", 0)),)

Kernels are compiled once per process and, with ``cache=True``, cached on disk next to their source
file, so the workers of a sweep load them instead of compiling them again.
"""
from __future__ import annotations

from .plugin import (
    NODE_ONLY_COLUMNS,
    TABLE_COLUMNS,
    ColumnSpec,
    NumbaFilterPlugin,
    NumbaKernelPlugin,
    NumbaScorePlugin,
    one_row_columns,
)

__all__ = ["TABLE_COLUMNS", "NODE_ONLY_COLUMNS", "ColumnSpec", "NumbaKernelPlugin", "NumbaFilterPlugin",
           "NumbaScorePlugin", "one_row_columns"]
