# cython: language_level=3
"""The commit of a collapsed binding in one compiled call (docs/dev/compiled-binding-path.md,
step 4): what ``ScheduleOneMixin._collapsed_binding_cycle`` and the first half of ``_pod_bound``
do for a pod the compiled binding path serves -- the pod's nomination deleted, the idle Reserve,
Permit and PreBind points' metrics (``Framework.run_idle_points``), ``queue.done``, the inlined
stock binder's Bind observations, the bound pod stored, its insert in the cache and the node
table (the table's Python-side indexes and count subscriptions included), the change count, the
queue's AssignedPodAdd, the result and the attempt metrics -- in that order, without the Python
frames between them. PostBind, the bound callbacks and the pods to activate stay with the caller, after it.

This module imports nothing from the packages above it: :class:`BindCommit` is built once (by
``fastsched.scheduler.schedule_one.bind_commit``, for the Scheduler class) with the classes and
functions whose identity it tests and the constants it writes, and holds nothing of any scheduler (``fork()`` copies a scheduler and
``transaction()`` swaps its ``__dict__``: everything is read per call). Where an object is not of
the expected class (a subclass may override what is inlined here) or a case is rare (a ghost node,
a fork's shared columns ...), ``commit`` either refuses before its first write (returns False: the
caller runs the Python path with the same objects) or calls the Python method at the same point.
``tests/scheduler/test_compiled_binding.py`` compares the full state with the Python paths."""

from time import perf_counter as _perf_counter

from cpython cimport array
from cpython.method cimport PyMethod_Check, PyMethod_GET_FUNCTION, PyMethod_GET_SELF
from cpython.object cimport PyObject, PyTypeObject, Py_TYPE
from cpython.ref cimport Py_XINCREF
from cpython.type cimport PyType_GenericAlloc

from ._fastattr cimport FA_CLASS_ATTR, FA_DICT_GET, FA_GET, FA_SET, FA_TYPE_ATTR


def copy_slots(obj):
    """A new instance of ``obj``'s class whose every slot holds what ``obj``'s holds (new
    references), without ``__init__``: ``fastsched.api.objects``' field copier (the assumed copy
    of ``Pod.with_node_name``, the loader's stamp) for a class whose instance layout is exactly
    its stored dataclass fields as ``__slots__`` (no ``__dict__``, no weak references, no C base
    but ``object``: the caller checks that once per class and otherwise copies in Python). The
    same copy as the generated ``clone.f = self.f`` lines, one pointer per slot; like them it
    raises AttributeError for a slot ``obj`` has not set."""
    cdef PyTypeObject* tp = Py_TYPE(obj)
    cdef Py_ssize_t off = sizeof(PyObject), end = tp.tp_basicsize
    cdef char* src = <char*><PyObject*>obj
    cdef char* dst
    cdef PyObject* v
    clone = PyType_GenericAlloc(<object>tp, 0)
    dst = <char*><PyObject*>clone
    while off < end:
        v = (<PyObject**>(src + off))[0]
        if v is NULL:
            raise AttributeError(f"{type(obj).__name__!r} object has an unset slot")
        Py_XINCREF(v)
        (<PyObject**>(dst + off))[0] = v
        off += sizeof(PyObject*)
    return clone


cdef class BindCommit:
    cdef object cache_cls, queue_cls, active_q_cls, snapshot_add_pod, table_cls, pod_info_cls
    cdef object pod_state_cls, observe_point, changed, store_bound, nominator_delete, run_idle_points
    cdef object pooled_ints, ints, event, event_id, scheduled
    cdef long flag_terminating, flag_affinity, flag_required_anti, flag_host_ports
    cdef object in_cache
    cdef object bulk_has, uid_map_cls, series_cls, series_observe, key_prop, clock_cls, clock_now
    cdef Py_ssize_t fold_every
    cdef object pod_info_init, pod_info_set, pod_state_init
    cdef object derived_key, table_derive

    def __init__(self, *, cache_cls, queue_cls, active_q_cls, snapshot_add_pod, table_cls, pod_info_cls,
                 pod_state_cls, nominator_delete, run_idle_points, observe_point, store_bound, changed,
                 pooled_ints, event, scheduled, in_cache, bulk_has=None, uid_map_cls=None,
                 series_cls=None, series_observe=None, Py_ssize_t fold_every=0, key_prop=None,
                 clock_cls=None, clock_now=None, pod_info_init=None,
                 pod_info_set=None, pod_state_init=None, derived_key=None, table_derive=None,
                 long flag_terminating, long flag_affinity, long flag_required_anti, long flag_host_ports):
        self.cache_cls = cache_cls
        self.queue_cls = queue_cls
        self.active_q_cls = active_q_cls
        self.snapshot_add_pod = snapshot_add_pod
        self.table_cls = table_cls
        self.pod_info_cls = pod_info_cls
        self.pod_state_cls = pod_state_cls
        self.nominator_delete = nominator_delete
        self.run_idle_points = run_idle_points
        self.observe_point = observe_point
        self.store_bound = store_bound
        self.changed = changed
        self.pooled_ints = pooled_ints
        # the shared int objects (extended in place by pooled_ints: the list stays this one)
        self.ints = pooled_ints(1)
        self.event = event
        # id(event), the key of the queue's memo of its interest (the event is held here: its id
        # stays that object's), computed once instead of a Python call to id() a pod
        self.event_id = id(event)
        self.scheduled = scheduled
        self.in_cache = in_cache
        # BulkPods.has inlined for an index of this class (None: always the Python call)
        self.bulk_has = bulk_has
        self.uid_map_cls = uid_map_cls
        # DurationSeries.observe inlined (an append to the series' pending array below its fold)
        # for a bound observe of exactly this class; None (a free-threaded build's locked observe):
        # always the Python call
        self.series_cls = series_cls
        self.series_observe = series_observe
        self.fold_every = fold_every
        # KubeObject.key (the result's message) inlined for a pod whose class has this property
        self.key_prop = key_prop
        # VirtualClock.now inlined (its ``_now``) for a clock of exactly this class whose ``now``
        # is this function (None: always the call)
        self.clock_cls = clock_cls
        self.clock_now = clock_now
        # PodInfo(pod) and _PodState(pod, host) built slot by slot when their classes' __init__
        # (and PodInfo._set) are these functions (None: always the class call)
        self.pod_info_init = pod_info_init
        self.pod_info_set = pod_info_set
        self.pod_state_init = pod_state_init
        # NodeTable._derive's memo of the last spec (its first lines) inlined when the table's
        # method is ``table_derive`` (None: always the call); ``derived_key``: its key getter
        self.derived_key = derived_key
        self.table_derive = table_derive
        self.flag_terminating = flag_terminating
        self.flag_affinity = flag_affinity
        self.flag_required_anti = flag_required_anti
        self.flag_host_ports = flag_host_ports

    def commit(self, sched, fw, state, assumed, str host, double started, res, binder, idle,
               Py_ssize_t next_start=-1, bc=None, Py_ssize_t found=0):
        """Commit ``assumed`` bound to ``host`` (the caller made the stock binder's check, that
        ``assumed.uid`` is in ``cluster.pods`` with ``cluster`` DefaultBinder's client; ``idle``:
        the pod's IdleBinding, whose points are left first). Called from the placement (step 5:
        ``ScheduleOneMixin._commit_placed``), ``next_start`` (>= 0) is the scheduler's next
        ``next_start_node_index`` and ``bc`` (or None) the cycle's opportunistic batching part,
        whose ``store_unsigned(host, found)`` is due: both are what ``_schedule_pod`` does after
        the placement, so they are done here after the checks and before the first other write
        (a refusal leaves them to it). Returns
        False, having written nothing, when a condition of the compiled commit does not hold;
        True when the pod is bound and everything up to PostBind is done.

        Attributes are read and written through ``_fastattr``'s guarded sites (FA_GET, FA_SET:
        ``getattr``/``setattr`` with the type's lookup kept per site and type version), and the
        methods it inlines are told apart by ``FA_TYPE_ATTR`` (``type(obj).name``, kept likewise)."""
        cdef object cache = FA_GET(sched, "cache"), queue = FA_GET(sched, "queue")
        cdef object cluster = FA_GET(sched, "cluster")
        cdef object snapshot, table, aq, uid, row_of, row_obj, d, pi, rec_obj, ints, key, subs, sub
        cdef object cache_pods, bulk, metrics, rows, lst, freed, in_flight, now, version, by_id, failures
        cdef Py_ssize_t row, rec, k
        cdef long flags
        cdef object nominator, nominated, kept, observe, name, record
        cdef double start, reserved, pre_bound
        # -- the checks that can refuse, before any write ---------------------------------------
        if type(cache) is not self.cache_cls or type(queue) is not self.queue_cls:
            return False
        aq = FA_GET(queue, "_active_q")
        if type(aq) is not self.active_q_cls:
            return False
        if FA_TYPE_ATTR(cluster, "store_bound") != <PyObject*>self.store_bound \
                or FA_TYPE_ATTR(sched, "_changed") != <PyObject*>self.changed \
                or FA_TYPE_ATTR(fw, "_observe_point") != <PyObject*>self.observe_point:
            return False
        snapshot = FA_GET(cache, "snapshot")
        if FA_TYPE_ATTR(snapshot, "add_pod") != <PyObject*>self.snapshot_add_pod:
            return False
        table = FA_GET(snapshot, "table")
        if type(table) is not self.table_cls:
            return False
        uid = FA_GET(assumed, "uid")
        cache_pods = FA_GET(cache, "_pods")
        if uid in cache_pods:
            return False  # (assume_pod's refusal: the Python path reports it)
        bulk = FA_GET(cache, "bulk")
        if FA_GET(bulk, "n_live") and self._bulk_has(bulk, uid) >= 0:
            return False
        row_of = FA_GET(table, "row_of")
        row_obj = row_of.get(host)
        if row_obj is None:
            return False  # a node the table does not hold: a ghost pod (Cache._place)
        row = row_obj
        # -- _schedule_pod's end (a commit from the placement): the next start index, batching's
        # StoreScheduleResults -----------------------------------------------------------------
        if next_start >= 0:
            FA_SET(sched, "next_start_node_index", next_start)
            if bc is not None:
                bc.store_unsigned(host, found)
        # -- the nomination deleted (queue.nominator.delete_nominated_pod_if_exists) ---------------
        nominator = FA_GET(queue, "nominator")
        if FA_TYPE_ATTR(nominator, "delete_nominated_pod_if_exists") == <PyObject*>self.nominator_delete:
            nominated = FA_GET(nominator, "_nominated_pod_to_node")
            if nominated and uid in nominated:  # (few pods are nominated)
                nominator._delete(uid)
        else:
            nominator.delete_nominated_pod_if_exists(assumed)
        # -- the idle points (Framework.run_idle_points; as Python when its observers are not
        # kept for this recorder and profile yet) -------------------------------------------------
        metrics = FA_GET(fw, "metrics")
        kept = FA_DICT_GET(fw, "_idle_observers")
        if FA_TYPE_ATTR(fw, "run_idle_points") != <PyObject*>self.run_idle_points or kept is None \
                or kept[0] is not metrics or kept[1] is not FA_GET(fw, "_profile_name"):
            fw.run_idle_points(state, idle, FA_GET(sched, "_pre_flights"))
        else:
            record = FA_GET(state, "record_plugin_metrics")
            start = _perf_counter()
            if record:
                observe = metrics.observe_plugin
                for name in FA_GET(idle, "reserve"):
                    observe("Reserve", name, "Success", 0.0)
            reserved = _perf_counter()  # (no Permit plugin: nothing between Reserve and Permit)
            if FA_GET(sched, "_pre_flights"):
                FA_SET(state, "skip_pre_bind_plugins", FA_GET(idle, "pre_bind_skip"))
            elif record:
                observe = metrics.observe_plugin
                for name in FA_GET(idle, "pre_bind"):
                    observe("PreBind", name, "Success", 0.0)
            pre_bound = _perf_counter()
            observe = kept[2]
            self._observe(observe[0], reserved - start)
            self._observe(observe[1], 0.0)
            self._observe(observe[2], pre_bound - reserved)
        # -- queue.done (ActiveQueue.done; the trimming of other pods' events as Python) --------
        in_flight = FA_GET(aq, "_in_flight")
        if len(in_flight) == 1 and uid in in_flight:
            del in_flight[uid]  # (a dict: its pop without the method call)
            FA_GET(aq, "_in_flight_pods").pop(uid, None)
            if FA_GET(aq, "_force_activated"):
                FA_GET(aq, "_force_activated").pop(uid, None)
            FA_GET(aq, "_in_flight_events").clear()
        else:
            aq.done(uid)
        # -- Bind: the stock binder inlined (its check made by the caller) ----------------------
        start = _perf_counter()
        if FA_GET(state, "record_plugin_metrics"):
            metrics.observe_plugin("Bind", binder.name(), "Success", _perf_counter() - start)
        self._observe_success(fw, metrics, "Bind", _perf_counter() - start)
        # -- _pod_bound, up to PostBind --------------------------------------------------------
        now = self._store_bound(sched, cluster, uid, assumed)
        # Cache.add_pod's insert: Cache._place -> Snapshot.add_pod -> NodeTable.add_pod
        pi = self._pod_info(assumed)
        d = self._derive(table, assumed)
        if FA_GET(table, "_shared"):
            table._own_accounts()
        freed = FA_GET(table, "_freed_records")
        if freed:
            rec_obj = freed.pop()
            rec = rec_obj
        else:
            rec = FA_GET(table, "_next_record")
            FA_SET(table, "_next_record", rec + 1)
            if rec >= FA_GET(table, "pod_capacity"):
                table._grow_records(rec + 1)
        flags = FA_GET(d, "flags")
        if FA_GET(assumed, "deletion_timestamp") is not None:
            flags |= self.flag_terminating
        FA_GET(table, "pod_names")[rec] = FA_GET(assumed, "name")
        FA_GET(table, "_pod_infos")[rec] = pi
        version = FA_GET(table, "version") + 1
        FA_SET(table, "version", version)
        k = FA_GET(d, "signature")
        if not FA_GET(table, "_acc").add_pod(row, rec, uid, FA_GET(d, "shape"), flags, k,
                                             FA_GET(d, "affinity_signature"), version):
            FA_GET(table, "_pod_uid_str")[rec] = uid  # not a canonical UUID (flagged FLAG_UID_STRING)
        # NodeTable._after_add: the signature indexes (SignatureCounts._count_in), then the sums
        ints = self.ints
        if len(ints) <= row:
            ints = self.pooled_ints(row + 1)
        key = ints[row]
        rows = FA_GET(table, "signature_rows")[k]
        rows[key] = rows.get(key, 0) + 1
        subs = FA_GET(table, "_sig_subs").get(k)
        if subs:
            for sub in subs:
                sub._bump(table, row, 1)
        if flags & self.flag_affinity:
            FA_SET(table, "total_pods_with_affinity", FA_GET(table, "total_pods_with_affinity") + 1)
            k = FA_GET(d, "affinity_signature")
            rows = FA_GET(table, "affinity_signature_rows")[k]
            rows[key] = rows.get(key, 0) + 1
            subs = FA_GET(table, "_asig_subs").get(k)
            if subs:
                for sub in subs:
                    sub._bump(table, row, 1)
        if flags & self.flag_required_anti:
            FA_SET(table, "total_pods_with_req_anti", FA_GET(table, "total_pods_with_req_anti") + 1)
        if flags & self.flag_terminating:
            FA_SET(table, "total_terminating_pods", FA_GET(table, "total_terminating_pods") + 1)
        if flags & self.flag_host_ports:
            table._count_ports(row, FA_GET(d, "host_ports"), 1)
        lst = FA_GET(table, "_row_lists").get(row)
        if lst is not None:
            lst.append(pi)
        cache_pods[uid] = self._pod_state(assumed, host)
        FA_SET(sched, "_change_seq", FA_GET(sched, "_change_seq") + 1)  # EventHandlers._changed
        failures = FA_GET(sched, "_failures")
        if failures:
            failures.pop(uid, None)
            FA_GET(sched, "_failed_at").pop(uid, None)
        # queue.assigned_pod_added: nothing to do, and nothing written, when the event's interest
        # is already memoized and no pod is unschedulable or in flight; else the Python call
        by_id = FA_GET(queue, "_event_of_interest_by_id").get(self.event_id)
        if by_id is None or by_id[0] is not self.event or (
                by_id[1] and (len(FA_GET(queue, "_unschedulable_pods")) or FA_GET(aq, "_in_flight"))):
            queue.assigned_pod_added(assumed)
        if res is not None:
            self._result_scheduled(res, assumed, host, now)
        metrics = FA_GET(sched, "metrics")
        FA_GET(metrics, "attempts")["scheduled"] += 1
        FA_GET(metrics, "attempt_latencies").append(_perf_counter() - started)
        return True

    def commit_run(self, sched, list uids, tuple ctx):
        """``ScheduleOneMixin._finish_permitted_bindings`` for the pods of ``uids`` (``list(sched._waiting)``)
        in one compiled call (docs/dev/gang-runs.md, step 4): the members a gang's Permit released
        bind here, each as ``_run_binding_cycle`` binds it -- ``wait_on_permit`` (nothing waits:
        the Permit run kept no WaitingPod), ``queue.done``, the PreBind point (the pre-flights'
        Skip set written at submit, or idle plugins), the stock binder inlined, ``finish_binding``,
        then ``_pod_bound``: the bound pod stored, the assumed cache entry confirmed (the pod
        group state's member moved from assumed to assigned), the change count, the queue's
        AssignedPodAdd, the result, the attempt metrics, then ``_after_commit`` (PostBind, the
        bound callbacks, the pods to activate) -- before the next member, in ``uids`` order. A pod
        still waiting at Permit is left in ``_waiting``, as the Python loop leaves it; a pod whose
        case is not inlined here (a WaitingPod signalled, a PreBind plugin with work, another
        binder, an overridden method, a cache entry not assumed on ``host`` ...) goes through
        ``sched._run_binding_cycle`` at its turn, having had nothing written. The caller checks
        what holds for the whole call (no decision record, no extender, the scheduler's methods
        not overridden). ``ctx``: (DefaultBinder, ``Cluster.bind``, the runners' ``_idle``,
        ``InFlightEvent``, ``Framework.wait_on_permit``, ``run_pre_bind_plugins``,
        ``run_bind_plugins``, the pods-to-activate key). Returns how many it bound itself."""
        cdef object binder_cls, cluster_bind, idle_fn, event_cls, fw_wait, fw_pre_bind, fw_bind, pta_key
        binder_cls, cluster_bind, idle_fn, event_cls, fw_wait, fw_pre_bind, fw_bind, pta_key = ctx
        cdef object cache = sched.cache, queue = sched.queue, cluster = sched.cluster
        cdef object waiting = sched._waiting
        cdef object uid, pending, fw, wp
        cdef bint inlined = (type(cache) is self.cache_cls and type(queue) is self.queue_cls
                             and type(queue._active_q) is self.active_q_cls
                             and type(cluster).store_bound is self.store_bound and type(cluster).bind is cluster_bind
                             and "bind" not in cluster.__dict__ and "store_bound" not in cluster.__dict__
                             and type(sched)._changed is self.changed)
        cdef Py_ssize_t n = 0
        for uid in uids:
            pending = waiting[uid]
            fw = pending.fw
            wp = fw.get_waiting_pod(uid)
            if wp is not None and not wp.signalled:
                continue
            del waiting[uid]
            if wp is None and inlined and self._commit_member(sched, cache, queue, cluster, fw, pending, uid,
                                                              binder_cls, idle_fn, event_cls, fw_wait, fw_pre_bind,
                                                              fw_bind, pta_key):
                n += 1
                continue
            sched._run_binding_cycle(fw, pending.state, pending.qpi, pending.assumed, pending.host, pending.started)
        return n

    cdef bint _commit_member(self, sched, cache, queue, cluster, fw, pending, uid, binder_cls, idle_fn, event_cls,
                             fw_wait, fw_pre_bind, fw_bind, pta_key) except -1:
        """One released pod's binding cycle and ``_pod_bound`` (see :meth:`commit_run`); False,
        having written nothing, when its case is not inlined."""
        cdef object state = pending.state, assumed = pending.assumed, host = pending.host, qpi = pending.qpi
        cdef object binders, binder, st, skip, idle, pl, name, idle_names, aq, metrics
        cdef object now, res, pg_key, states, group, pta, observe
        cdef double start
        cdef bint record
        # -- the checks that can refuse, before any write ---------------------------------------
        cls = type(fw)
        if cls.wait_on_permit is not fw_wait or cls.run_pre_bind_plugins is not fw_pre_bind \
                or cls.run_bind_plugins is not fw_bind or cls._observe_point is not self.observe_point \
                or fw.decision_sink is not None:
            return False
        binders = fw.bind_plugins
        if len(binders) != 1 or type(binders[0]) is not binder_cls:
            return False
        binder = binders[0]
        if getattr(binder._handle, "client", None) is not cluster or uid not in cluster.pods:
            return False  # (Cluster.bind's check: the Python path reports its error)
        st = cache._pods.get(uid)
        if st is None or not st.assumed or st.pod is not assumed or st.node_name != host \
                or assumed.node_name != host:
            return False  # (add_pod's other cases: a move, a new pod, a replaced object)
        skip = state.skip_pre_bind_plugins
        idle = state.skip_filter_plugins
        idle_names = None
        for pl in fw.pre_bind_plugins:
            name = pl.name()
            if skip and name in skip:
                continue
            if idle and idle_fn(pl, idle):
                if idle_names is None:
                    idle_names = []
                idle_names.append(name)
                continue
            return False  # a PreBind plugin with work to do
        record = state.record_plugin_metrics
        metrics = fw.metrics
        # -- _binding_cycle: queue.done (PriorityQueue.done's own call) --------------------------
        aq = queue._active_q
        aq.done(uid)
        # -- run_pre_bind_plugins: the skipped plugins, the idle ones' Success ------------------
        start = _perf_counter()
        if idle_names is not None and record:
            for name in idle_names:
                metrics.observe_plugin("PreBind", name, "Success", 0.0)
        self._observe_success(fw, metrics, "PreBind", _perf_counter() - start)
        # -- _bind: the stock binder inlined (run_bind_plugins' Success), finish_binding --------
        start = _perf_counter()
        if record:
            metrics.observe_plugin("Bind", binder.name(), "Success", _perf_counter() - start)
        self._observe_success(fw, metrics, "Bind", _perf_counter() - start)
        st.binding_finished = True
        # -- _count_bound_after_flush ------------------------------------------------------------
        metrics = sched.metrics
        if qpi.was_flushed_from_unschedulable:
            metrics.pod_scheduled_after_flush += 1
        # -- _pod_bound, up to _after_commit -------------------------------------------------------
        now = self._store_bound(sched, cluster, uid, assumed)
        # Cache.add_pod: the assumed entry confirmed in place (same object, same node)
        st.pod = assumed
        st.node_name = assumed.node_name
        st.assumed = False
        st.binding_finished = False
        cache.assumed_fingerprint ^= hash(uid)
        if cache.generic_workload and assumed.scheduling_group is not None:
            # upstream's updatePod(assumed, pod): Cache._replace_member's remove, then add, for
            # the same object (its frames inlined; a new state made as _add_member makes it)
            pg_key = cache._member_key(assumed)
            states = cache.pod_group_states
            group = states.get(pg_key)
            if group is not None:
                group.delete_pod(uid)
                if group.empty():
                    del states[pg_key]
                    group = None
            if group is None:
                cache._add_member(assumed)
            else:
                group.add_pod(assumed)
        sched._change_seq += 1  # EventHandlers._changed
        if sched._failures:
            sched._failures.pop(uid, None)
            sched._failed_at.pop(uid, None)
        # queue.assigned_pod_added: nothing when the event interests no plugin; with nothing
        # unschedulable, only the in-flight event (MoveAll finds no candidate); else the Python call
        by_id = queue._event_of_interest_by_id.get(self.event_id)
        if by_id is None or by_id[0] is not self.event:
            queue.assigned_pod_added(assumed)
        elif by_id[1]:
            if len(queue._unschedulable_pods):
                queue.assigned_pod_added(assumed)
            elif aq._in_flight:  # (ActiveQueue.add_event_if_any_in_flight)
                aq._in_flight_events.append((next(aq._seq), event_cls(self.event, None, assumed)))
        res = sched.results.get(uid)
        if res is not None:
            self._result_scheduled(res, assumed, host, now)
        metrics.attempts["scheduled"] += 1
        metrics.attempt_latencies.append(_perf_counter() - pending.started)
        # -- _after_commit (no decision record: the caller checks) -----------------------------------
        if fw.post_bind_plugins:
            fw.run_post_bind_plugins(state, assumed, host)
        if res is not None:
            for cb in sched.bound_callbacks:
                cb(res)
        pta = state.get(pta_key)
        if pta is not None and pta.map:
            sched.activate(dict(pta.map))
        return True

    cdef _store_bound(self, sched, cluster, uid, assumed):
        """``_pod_bound``'s first steps (the start time, the nomination cleared, Cluster.store_bound)
        for commit and commit_run; returns the clock's time, which nothing after it advances."""
        clock = FA_GET(sched, "clock")
        if self.clock_cls is not None and type(clock) is self.clock_cls \
                and FA_TYPE_ATTR(clock, "now") == <PyObject*>self.clock_now:
            now = FA_GET(clock, "_now")
        else:
            now = clock.now()
        if FA_GET(assumed, "start_time") is None:
            FA_SET(assumed, "start_time", now)
        if FA_GET(assumed, "nominated_node_name") and FA_GET(sched, "_clear_nomination_on_bind"):
            FA_SET(assumed, "nominated_node_name", "")
        FA_GET(cluster, "pods")[uid] = assumed
        return now

    cdef _derive(self, table, assumed):
        """``table._derive(assumed)``: its first lines inlined (the last spec's derivation when the
        pod's key fields equal its ``keep``: pods of one template, one after another), else the call."""
        cdef object last
        if self.derived_key is not None and FA_TYPE_ATTR(table, "_derive") == <PyObject*>self.table_derive:
            last = FA_GET(table, "_last_derived")
            if last is not None and self.derived_key(assumed) == FA_GET(last, "keep"):
                return last
        return table._derive(assumed)

    cdef _pod_info(self, assumed):
        """``PodInfo(assumed)`` (``PodInfo._set``: the pod, then its requests, then its non-zero
        requests), without the two Python frames when ``__init__`` and ``_set`` are the known ones."""
        cls = self.pod_info_cls
        if self.pod_info_init is None or FA_CLASS_ATTR(cls, "__init__") != <PyObject*>self.pod_info_init \
                or FA_CLASS_ATTR(cls, "_set") != <PyObject*>self.pod_info_set:
            return cls(assumed)
        pi = PyType_GenericAlloc(cls, 0)
        FA_SET(pi, "pod", assumed)
        FA_SET(pi, "requests", assumed.requests)
        FA_SET(pi, "non_zero_requests", assumed.non_zero_requests)
        return pi

    cdef _pod_state(self, assumed, str host):
        """``_PodState(assumed, host)`` (the dataclass's fields: pod, node_name, assumed=False,
        binding_finished=False), without the generated ``__init__``'s frame when it is the known one."""
        cls = self.pod_state_cls
        if self.pod_state_init is None or FA_CLASS_ATTR(cls, "__init__") != <PyObject*>self.pod_state_init:
            return cls(assumed, host)
        ps = PyType_GenericAlloc(cls, 0)
        FA_SET(ps, "pod", assumed)
        FA_SET(ps, "node_name", host)
        FA_SET(ps, "assumed", False)
        FA_SET(ps, "binding_finished", False)
        return ps

    cdef _result_scheduled(self, res, assumed, str host, now):
        """The pod's PodResult as ``Scheduler._pod_bound`` writes it (one writer for the single
        pod's commit and a gang's commit_run)."""
        FA_SET(res, "pod", assumed)
        FA_SET(res, "node_name", host)
        FA_SET(res, "status", self.scheduled)
        cdef object ns
        if self.key_prop is not None and FA_TYPE_ATTR(assumed, "key") == <PyObject*>self.key_prop:
            ns = FA_GET(assumed, "namespace")  # (KubeObject.key: just the name for a cluster-scoped object)
            FA_SET(res, "message", f"Successfully assigned {ns}/{FA_GET(assumed, 'name')} to {host}" if ns else
                   f"Successfully assigned {FA_GET(assumed, 'name')} to {host}")
        else:
            FA_SET(res, "message", f"Successfully assigned {assumed.key} to {host}")
        FA_SET(res, "bound_at", now)
        FA_SET(res, "nominated_node_name", None)

    cdef _observe_success(self, fw, metrics, str point, double seconds):
        """``Framework._observe_point(point, None, seconds)``, through its kept observer when it is
        this recorder's and profile's."""
        po = FA_DICT_GET(fw, "_point_observers")
        cached = po.get(point) if po is not None else None
        if cached is not None and cached[0] is metrics and cached[1] is FA_GET(fw, "_profile_name"):
            self._observe(cached[2], seconds)
        else:
            fw._observe_point(point, None, seconds)

    cdef _observe(self, observe, double seconds):
        """``observe(seconds)``; for a bound ``DurationSeries.observe`` of exactly that class (one of
        a recorder's kept observers), its append to the series' pending array done here when no fold
        is due (the Python call otherwise: it appends and folds), as that method does it."""
        cdef array.array pending
        cdef Py_ssize_t n
        if self.series_observe is not None and PyMethod_Check(observe) \
                and <object>PyMethod_GET_FUNCTION(observe) is self.series_observe:
            series = <object>PyMethod_GET_SELF(observe)
            if type(series) is self.series_cls:
                pending = FA_GET(series, "_pending")
                n = len(pending)
                if n + 1 < self.fold_every:
                    array.resize_smart(pending, n + 1)
                    pending.data.as_doubles[n] = seconds
                    return
        observe(seconds)

    cdef Py_ssize_t _bulk_has(self, bulk, uid) except -2:
        """``bulk.has(uid, IN_CACHE)`` (BulkPods.has with UidMap.get inlined, when they are those)."""
        cdef Py_ssize_t b
        index = FA_GET(bulk, "index")
        if self.bulk_has is None or FA_TYPE_ATTR(bulk, "has") != <PyObject*>self.bulk_has \
                or type(index) is not self.uid_map_cls:
            return bulk.has(uid, self.in_cache)
        b = FA_GET(index, "_index").lookup(uid)
        if b < 0 and FA_GET(index, "_other"):
            b = FA_GET(index, "_other").get(uid, -1)
        if b < 0 or not FA_GET(bulk, "flags")[b] & self.in_cache:
            return -1
        return b
