// Command oracle runs upstream kube-scheduler's framework (k8s.io/kubernetes, pinned in go.mod) in
// process on scenarios read as JSON lines from stdin, and answers one JSON line per scenario on
// stdout: per scheduling attempt, the PreFilter result, each node's Filter status, each Score
// plugin's raw, normalized and weighted score per node, the nodes tied for the best total, the
// FitError message and, on failure, PostFilter's nominated node and victims; after a choice, the
// PVCs VolumeBinding bound and the devices DynamicResources allocated.
//
// It is fastsched's differential oracle (fastsched/testing/oracle.py drives it). The scheduling
// cycle is upstream's schedulePod/findNodesThatFitPod/prioritizeNodes retold step by step over the
// framework's Run* methods (they are unexported in pkg/scheduler), so that every plugin's answer is
// visible; the plugins, the framework, the cache/snapshot, the config defaulting, the API server's
// pod create strategy and the preemption evaluator are upstream's own code. Every node is examined
// (no percentageOfNodesToScore sampling), except in a scenario with "sampling": true (see
// sampling: the sampled search from the start index the scheduler keeps, and a later entry of a
// pod waiting nominated is its retry, its nominated node judged first); the node chosen among the tied best is the replay's
// (fastsched's) when it is among them. What stands in for other components: pvController (the PV
// controller's end state of a static binding), the victims' removal and the preemptor's nomination
// (handleSchedulingFailure and the informers' part), and start times (the kubelet's). Opportunistic
// batching (OpportunisticBatching, on since 1.35) runs as upstream runs it, over the same cycles:
// its hint is recorded and, when the hint fits, it is the choice (see storeBatch).
//
// With --feature-gates GenericWorkload=true, the members of one PodGroup that follow each other
// among the incoming pods get one pod group cycle (groupAttempt: scheduleOnePodGroup retold), and
// the answer's "groups" tells each group's outcome (fastsched/testing/oracle_groups.py drives it).
// With CompositePodGroup=true too, the members of every leaf PodGroup under one root
// CompositePodGroup get the root's cycle (compositeAttempt, composite.go); a PodGroup whose
// parent is missing waits, as the queue keeps its members in incompletePodGroupPods.
//
// `oracle --version` prints the upstream versions compiled in (Version); `--feature-gates` sets
// feature gates on top of upstream's defaults (e.g. OpportunisticBatching=false).
//
// A line with "bench": true times the scheduling cycles instead (see bench).
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"reflect"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics/testutil"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	core "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	"k8s.io/kubernetes/pkg/features"
	podregistry "k8s.io/kubernetes/pkg/registry/core/pod"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/volumebinding"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
	"k8s.io/kubernetes/plugin/pkg/admission/defaulttolerationseconds"
	"k8s.io/kubernetes/plugin/pkg/admission/runtimeclass"
)

// Scenario is one input line.
type Scenario struct {
	ID       string            `json:"id"`
	Config   json.RawMessage   `json:"config"`
	Nodes    []json.RawMessage `json:"nodes"`
	Pods     []json.RawMessage `json:"pods"`     // bound (spec.nodeName set)
	Objects  []json.RawMessage `json:"objects"`  // every other API object
	Incoming []json.RawMessage `json:"incoming"` // the pods to schedule, in order
	// Replay: per incoming pod (same order), the node fastsched chose ("" = it failed).
	Replay []string `json:"replay"`
	// ReplayRerun: per incoming group member, the node fastsched chose when PodGroupPostFilter
	// reran the group's algorithm (workload-aware preemption; "" = none)
	ReplayRerun []string `json:"replay_rerun"`
	// ReplayNominated: per incoming pod, the node fastsched's preemption nominated ("" = none):
	// upstream leaves the last tie among equal candidates to map order (pickOneNodeForPreemption)
	ReplayNominated []string `json:"replay_nominated"`
	// TopologyAwareWorkloadScheduling (keys: "<group>|<run>", run 1 the group's cycle, 2... the
	// reruns inside PodGroupPostFilter): PlacementOrder, the order fastsched evaluated the
	// placements in (upstream's is Go map order: see placementAlgorithm); PlacementPick, the
	// placement fastsched kept among tied best scores; ReplayTAS ("<group>|<run>|<placement>|<member>"),
	// the node fastsched chose for a member in that placement's run.
	PlacementOrder map[string][]string `json:"placement_order"`
	PlacementPick  map[string]string   `json:"placement_pick"`
	ReplayTAS      map[string]string   `json:"replay_tas"`
	// BindOrder (key: the group, "<namespace>/<name>"): the order fastsched ran the binding cycles
	// of a scheduled group's members in. Upstream runs them in goroutines that GangScheduling's
	// Permit releases together, so their PreBinds race (which matters when members share a
	// claim: the first writes it, the others fail); the oracle binds in fastsched's order, as it
	// takes fastsched's choice among tied nodes. Members not named bind after, in member order.
	BindOrder map[string][]string `json:"bind_order"`
	// ReplayComposite (CompositePodGroup, key "<root>|<run>|<n>": the n-th member attempt of the
	// run, see composite.go): the node fastsched chose there
	ReplayComposite map[string]string `json:"replay_composite"`
	// Now: when the scenario runs; a pod bound here starts then (the kubelet's status.startTime).
	Now *metav1.Time `json:"now"`
	// Bench: time the scheduling cycles of the incoming pods instead of explaining them.
	Bench bool `json:"bench"`
	// Sampling: retell percentageOfNodesToScore's sampling and the start index's rotation
	// (findNodesThatPassFilters, see sampling) instead of examining every node in the scenario's
	// order; each attempt then reports evaluated_nodes and next_start
	Sampling bool `json:"sampling"`
	// Hints: schedule nothing; answer upstream's queueing hint registrations and each case's
	// QueueingHintFn answers instead (hints.go; the class "hints")
	Hints []HintCase `json:"hints"`
}

type statusJSON struct {
	Code    string   `json:"code"`
	Reasons []string `json:"reasons"`
	Plugin  string   `json:"plugin"`
}

// Attempt is the answer for one incoming pod.
type Attempt struct {
	Pod             string                         `json:"pod"`
	PreFilter       *statusJSON                    `json:"prefilter"`
	PreFilterNodes  []string                       `json:"prefilter_nodes"` // nil = all nodes
	Filter          map[string]*statusJSON         `json:"filter"`          // rejected nodes only
	Feasible        []string                       `json:"feasible"`
	PreScoreSkipped []string                       `json:"prescore_skipped"`
	Scores          map[string]map[string][3]int64 `json:"scores"` // plugin -> node -> raw, normalized, weighted
	Total           map[string]int64               `json:"total"`
	Best            []string                       `json:"best"`
	Selected        string                         `json:"selected"`
	FitError        string                         `json:"fit_error"`
	PostFilter      *statusJSON                    `json:"post_filter"`
	NominatedNode   string                         `json:"nominated_node"`
	Victims         []string                       `json:"victims"`
	VolumeBindings  []string                       `json:"volume_bindings"`
	// Errors: each node's Filter error, in the scenario's node order (Error is the first); upstream
	// filters in parallel and ends the cycle with whichever it meets first
	Errors []string `json:"errors"`
	// ClaimAllocations: "namespace/claim=pool/device,..." of the pod's claims allocated by this attempt
	ClaimAllocations []string `json:"claim_allocations"`
	Error            string   `json:"error"`
	// BatchHint: the node opportunistic batching (OpportunisticBatching, beta and on since 1.35)
	// hinted from the previous cycle ("" = none); BatchHinted: the hint passed the filters, so
	// upstream's cycle ended there (evaluateNominatedNode), with the hint its only feasible node and
	// no scoring: the choice is the hint, not one of Best (the full cycle, retold above, is still
	// recorded in the other fields)
	BatchHint   string `json:"batch_hint,omitempty"`
	BatchHinted bool   `json:"batch_hinted,omitempty"`
	// BatchSignature: sha256 (hex) of the pod's signature (PodSignature, as the queue signs it);
	// "" when the pod is not signable. Equal hashes = pods upstream batches together.
	BatchSignature string `json:"batch_signature,omitempty"`
	// BatchFlush: the reasons scheduler_batch_cache_flushed_total counted during the attempt
	// (GetNodeHint's incompatibilities, StoreScheduleResults' empty_list/pod_not_batchable), sorted;
	// "expired" depends on the oracle's wall time (maxBatchAge, 500 ms)
	BatchFlush []string `json:"batch_flush,omitempty"`
	// NodeAllocatable: with DRANodeAllocatableResources, the bound pod's
	// status.nodeAllocatableResourceClaimStatuses (nodeAllocatableStatusText), as assume copied
	// them from DynamicResources' Filter and its PreBind patched them
	NodeAllocatable []string `json:"node_allocatable,omitempty"`
	// Gated: the pod is held before the queue (runPreEnqueuePlugins: the first PreEnqueue plugin
	// that rejects it, its status with the plugin's name); no cycle ran. An incoming pod whose
	// namespace/name came before is that pod updated (its gates removed, say): PreEnqueue runs again.
	Gated *statusJSON `json:"gated,omitempty"`
	// EvaluatedNodes (a "sampling" scenario): the nodes the cycle judged, len(feasibleNodes) +
	// NodeToStatus.Len() as schedulePod counts ScheduleResult.EvaluatedNodes (for a FitError too);
	// nil when PreFilter rejected the pod (no search)
	EvaluatedNodes *int `json:"evaluated_nodes,omitempty"`
	// NextStart (a "sampling" scenario): sched.nextStartNodeIndex after the cycle
	NextStart *int `json:"next_start,omitempty"`
	// the statuses themselves, which the bound pod carries into the cache
	nodeAllocatableStatuses []v1.NodeAllocatableResourceClaimStatus
}

// nodeAllocatableStatusText: "claim [containers] name=quantity,... overhead name=perPod/perContainer,..."
func nodeAllocatableStatusText(st v1.NodeAllocatableResourceClaimStatus) string {
	var mapping, overhead []string
	for _, m := range st.Mapping {
		q := "<nil>"
		if m.Quantity != nil {
			q = m.Quantity.String()
		}
		mapping = append(mapping, string(m.Name)+"="+q)
	}
	for _, o := range st.Overhead {
		pp, pc := "-", "-"
		if o.PerPod != nil {
			pp = o.PerPod.String()
		}
		if o.PerContainer != nil {
			pc = o.PerContainer.String()
		}
		overhead = append(overhead, string(o.Name)+"="+pp+"/"+pc)
	}
	return st.ResourceClaimName + " [" + strings.Join(st.Containers, ",") + "] " + strings.Join(mapping, ",") +
		" overhead " + strings.Join(overhead, ",")
}

// Answer is one output line.
type Answer struct {
	ID       string    `json:"id"`
	Attempts []Attempt `json:"attempts"`
	// Groups: the pod groups' cycles (GenericWorkload), in the order they ran
	Groups []GroupAnswer `json:"groups,omitempty"`
	Error  string        `json:"error,omitempty"`
	Millis float64       `json:"millis"`
	Bench  *Bench        `json:"bench,omitempty"`
	// Registered, HintAnswers: a "hints" scenario's answer (hints.go)
	Registered  []RegisteredEvent `json:"registered,omitempty"`
	HintAnswers []HintAnswer      `json:"hints,omitempty"`
}

// Bench is the answer to a scenario with "bench": true: upstream's scheduling cycles timed.
type Bench struct {
	Pods      int     `json:"pods"`
	Scheduled int     `json:"scheduled"`
	Seconds   float64 `json:"seconds"` // wall time of the cycles (UpdateSnapshot to PreBind)
	CPU       float64 `json:"cpu_seconds"`
}

func toStatus(s *fwk.Status) *statusJSON {
	if s == nil || s.IsSuccess() {
		return nil
	}
	r := s.Reasons()
	if r == nil {
		r = []string{}
	}
	return &statusJSON{Code: s.Code().String(), Reasons: r, Plugin: s.Plugin()}
}

func decode(raw json.RawMessage) (runtime.Object, error) {
	obj, _, err := legacyscheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
	if err != nil {
		return nil, err
	}
	legacyscheme.Scheme.Default(obj) // the API server's defaulting
	if m, err := meta.Accessor(obj); err == nil && m.GetResourceVersion() == "" {
		m.SetResourceVersion("1") // the assume caches compare versions
	}
	return obj, nil
}

var defaultTolerations = func() *defaulttolerationseconds.Plugin {
	p := defaulttolerationseconds.NewDefaultTolerationSeconds()
	p.InspectFeatureGates(utilfeature.DefaultFeatureGate)
	return p
}()

// newRuntimeClassAdmission: the default-on RuntimeClass admission plugin
// (plugin/pkg/admission/runtimeclass) reading the scenario's RuntimeClasses
func newRuntimeClassAdmission(ctx context.Context, objs []runtime.Object) *runtimeclass.RuntimeClass {
	var classes []runtime.Object
	for _, o := range objs {
		if rc, ok := o.(*nodev1.RuntimeClass); ok {
			classes = append(classes, rc)
		}
	}
	client := fake.NewClientset(classes...)
	factory := informers.NewSharedInformerFactory(client, 0)
	plugin := runtimeclass.NewRuntimeClass()
	plugin.SetExternalKubeClientSet(client)
	plugin.SetExternalKubeInformerFactory(factory) // (requests the RuntimeClass informer)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return plugin
}

func decodePod(raw json.RawMessage, classes map[string]*schedulingv1.PriorityClass,
	runtimeClasses *runtimeclass.RuntimeClass) (*v1.Pod, error) {
	obj, err := decode(raw)
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, fmt.Errorf("expected a Pod, got %T", obj)
	}
	// the API server's create strategy: matchLabelKeys merged into selectors, status, QoS class, ...
	internal := &core.Pod{}
	if err := legacyscheme.Scheme.Convert(pod, internal, nil); err != nil {
		return nil, err
	}
	podregistry.Strategy.PrepareForCreate(context.Background(), internal)
	// the default-on DefaultTolerationSeconds admission plugin: not-ready/unreachable NoExecute
	// tolerations for 300 s unless the pod has its own
	attrs := admission.NewAttributesRecord(internal, nil, core.Kind("Pod").WithVersion("v1"), internal.Namespace,
		internal.Name, core.Resource("pods").WithVersion("v1"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
	if err := defaultTolerations.Admit(context.Background(), attrs, nil); err != nil {
		return nil, err
	}
	// RuntimeClass (its mutating then its validating phase) for a pod to schedule: a bound pod
	// came from a cluster, admitted when it was created (fastsched's Cluster._admit)
	if pod.Spec.NodeName == "" {
		if err := runtimeClasses.Admit(context.Background(), attrs, nil); err != nil {
			return nil, err
		}
		if err := runtimeClasses.Validate(context.Background(), attrs, nil); err != nil {
			return nil, err
		}
	}
	created := &v1.Pod{}
	if err := legacyscheme.Scheme.Convert(internal, created, nil); err != nil {
		return nil, err
	}
	created.Spec.NodeName = pod.Spec.NodeName
	qos := created.Status.QOSClass
	created.Status = pod.Status // a bound pod's status is the kubelet's
	if created.Status.QOSClass == "" {
		created.Status.QOSClass = qos
	}
	if created.Status.Phase == "" {
		created.Status.Phase = v1.PodPending
	}
	pod = created
	if pod.UID == "" {
		pod.UID = types.UID("uid-" + pod.Namespace + "-" + pod.Name)
	}
	// the default-on Priority admission plugin (plugin/pkg/admission/priority): the class's value and
	// preemption policy (the global default class's, or 0 and PreemptLowerPriority, without a class
	// name); a missing class, or a priority or policy in the spec that differs, is refused
	var class *schedulingv1.PriorityClass
	if pod.Spec.PriorityClassName != "" {
		class = classes[pod.Spec.PriorityClassName]
		if class == nil {
			return nil, fmt.Errorf("pods %q is forbidden: no PriorityClass with name %s was found", pod.Name,
				pod.Spec.PriorityClassName)
		}
	} else {
		for _, c := range classes {
			if c.GlobalDefault && (class == nil || c.Value > class.Value) {
				class = c
			}
		}
		if class != nil {
			pod.Spec.PriorityClassName = class.Name
		}
	}
	var priority int32
	policy := v1.PreemptLowerPriority
	if class != nil {
		priority = class.Value
		if class.PreemptionPolicy != nil {
			policy = *class.PreemptionPolicy
		}
	}
	if pod.Spec.Priority != nil && *pod.Spec.Priority != priority {
		return nil, fmt.Errorf("pods %q is forbidden: the integer value of priority (%d) must not be provided in pod "+
			"spec; priority admission controller computed %d from the given PriorityClass name", pod.Name,
			*pod.Spec.Priority, priority)
	}
	pod.Spec.Priority = &priority
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != policy {
		return nil, fmt.Errorf("pods %q is forbidden: the string value of PreemptionPolicy (%s) must not be provided "+
			"in pod spec; priority admission controller computed %s from the given PriorityClass name", pod.Name,
			*pod.Spec.PreemptionPolicy, policy)
	}
	pod.Spec.PreemptionPolicy = &policy
	return pod, nil
}

type capturingRegistry struct {
	mu      sync.Mutex
	plugins map[string]fwk.Plugin
}

func (c *capturingRegistry) wrap(r frameworkruntime.Registry) frameworkruntime.Registry {
	out := frameworkruntime.Registry{}
	for name, factory := range r {
		name, factory := name, factory
		out[name] = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			p, err := factory(ctx, args, h)
			if err == nil {
				c.mu.Lock()
				c.plugins[name] = p
				c.mu.Unlock()
			}
			return p, err
		}
	}
	return out
}

type profileFw struct {
	fw      framework.Framework
	batch   bool // OpportunisticBatching is on
	plugins map[string]fwk.Plugin
	pvc     *pvController
	dra     fwk.SharedDRAManager
	preempt *replayPreemption // DefaultPreemption's evaluator interface, with the replayed last tie
	sample  *sampling         // a "sampling" scenario's search state, shared by the profiles (nil: every node)
}

// sampling retells the scheduler's part of the Filter phase that depends on the cluster's size:
// findNodesThatPassFilters with numFeasibleNodesToFind (schedule_one.go), over the snapshot's
// node order (NodeInfos().List(): the cache's nodeTree, zones interleaved) from the start index
// the scheduler keeps across cycles (sched.nextStartNodeIndex, one per scheduler: every profile's
// cycles move it).
//
// Upstream checks the nodes in parallel (Parallelizer().Until over the pieces i, node
// (next+i) mod n) and cancels the search when a feasible node beyond numNodesToFind turns up;
// which nodes were judged then depends on the goroutines' timing. The retelling is sequential:
// piece 0, 1, 2... until the (numNodesToFind+1)-th feasible node (neither kept nor counted) or an
// Error. That is exactly upstream's answer with parallelism 1 (workqueue.ParallelizeUntil: one
// worker takes the chunks in order and checks the context before each piece), which the
// "sampling" scenarios configure, and one of its possible answers with more workers.
type sampling struct {
	next   int    // sched.nextStartNodeIndex
	global *int32 // the configuration's percentageOfNodesToScore (a profile's own overrides it)
}

// findNodesThatPassFilters: the feasible nodes found among nodes (the ones PreFilter allows, in
// snapshot order); the rejected ones go to diagnosis and at.Filter, an Error to at.Errors (and
// the search stops, as the cancelled context stops upstream's worker); then findNodesThatFitPod's
// processedNodes moves the start index, modulo numAllNodes (all the snapshot's nodes), error or not.
func (s *sampling) findNodesThatPassFilters(ctx context.Context, f framework.Framework, state fwk.CycleState,
	pod *v1.Pod, diagnosis *framework.Diagnosis, nodes []fwk.NodeInfo, numAllNodes int, at *Attempt) []fwk.NodeInfo {
	n := len(nodes)
	pct := f.PercentageOfNodesToScore()
	if pct == nil {
		pct = s.global
	}
	toFind := int(numFeasibleNodesToFind(pct, int32(n)))
	if !f.HasScorePlugins() { // (no extenders here)
		toFind = 1
	}
	var feasible []fwk.NodeInfo
	if !f.HasFilterPlugins() {
		for i := 0; i < toFind && n > 0; i++ {
			feasible = append(feasible, nodes[(s.next+i)%n])
		}
	} else {
		for i := 0; i < n; i++ {
			ni := nodes[(s.next+i)%n]
			st := f.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			if st.Code() == fwk.Error {
				at.Errors = append(at.Errors, st.AsError().Error())
				break
			}
			if st.IsSuccess() {
				if len(feasible) == toFind {
					break // upstream: the one too many cancels the search, and is not counted
				}
				feasible = append(feasible, ni)
			} else {
				diagnosis.NodeToStatus.Set(ni.Node().Name, st)
				diagnosis.AddPluginStatus(st)
				at.Filter[ni.Node().Name] = toStatus(st)
			}
		}
	}
	processed := len(feasible) + diagnosis.NodeToStatus.Len()
	s.next = (s.next + processed) % numAllNodes
	at.EvaluatedNodes = &processed
	return feasible
}

// replayPreemption is DefaultPreemption's preemption.Interface with OrderedScoreFuncs giving
// pickOneNodeForPreemption's own criteria (retold: DefaultPreemption returns none, and the
// function then uses these five) and one more: the replay's node. Upstream breaks a tie left after
// the five in map order; here the tie goes to fastsched's choice when it is among the tied nodes
// (a victim unit spanning nodes, as a disruptionMode: all group, is the same victim on each).
type replayPreemption struct {
	preemption.Interface
	want string
}

func (r *replayPreemption) OrderedScoreFuncs(ctx context.Context, nodesToVictims map[string]*extenderv1.Victims) []func(node string) int64 {
	if fs := r.Interface.OrderedScoreFuncs(ctx, nodesToVictims); len(fs) > 0 || r.want == "" {
		return fs
	}
	want := r.want
	return []func(string) int64{
		func(node string) int64 { return -nodesToVictims[node].NumPDBViolations },
		func(node string) int64 { return -int64(corev1helpers.PodPriority(nodesToVictims[node].Pods[0])) },
		func(node string) int64 {
			var sum int64
			for _, pod := range nodesToVictims[node].Pods {
				sum += int64(corev1helpers.PodPriority(pod)) + int64(math.MaxInt32+1)
			}
			return -sum
		},
		func(node string) int64 { return -int64(len(nodesToVictims[node].Pods)) },
		func(node string) int64 {
			earliest := schedutil.GetEarliestPodStartTime(nodesToVictims[node])
			if earliest == nil {
				return int64(math.MinInt64)
			}
			return earliest.UnixNano()
		},
		func(node string) int64 {
			if node == want {
				return 1
			}
			return 0
		},
	}
}

// unexported reads a field Go hides (volumebinding.BindingInfo keeps its PV and PVC unexported).
func unexported(v interface{}, field string) interface{} {
	f := reflect.ValueOf(v).Elem().FieldByName(field)
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface()
}

// pvController stands in for VolumeBinding's PreBind (which updates the API, then waits for the PV
// controller): it writes the end state the PV controller would reach, a static binding's PV and
// PVC both Bound to each other, waits until the informers have it, and reports each binding.
type pvController struct {
	volumebinding.SchedulerVolumeBinder
	client   *fake.Clientset
	factory  informers.SharedInformerFactory
	bindings []string
}

func bumpVersion(m *metav1.ObjectMeta) {
	var v int
	fmt.Sscan(m.ResourceVersion, &v)
	m.ResourceVersion = fmt.Sprint(v + 1)
}

// wait polls VolumeBinding's own PV and PVC caches (fed by informer event handlers, which run
// after the informers report synced) until they hold the given versions ("" = any) of the objects.
func (c *pvController) wait(pvs, pvcs map[string]string) {
	// (the PV and PVC caches are passive since 1.37: reads go to the informers' stores)
	pvCache := unexported(c.SchedulerVolumeBinder, "pvCache").(volumebinding.PVAssumeCache)
	pvcCache := unexported(c.SchedulerVolumeBinder, "pvcCache").(volumebinding.PVCAssumeCache)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Microsecond) {
		ok := true
		for name, v := range pvs {
			got, err := pvCache.GetAPIObj(name)
			ok = ok && err == nil && (v == "" || got.ResourceVersion == v)
		}
		for key, v := range pvcs {
			got, err := pvcCache.GetAPIObj(key)
			ok = ok && err == nil && (v == "" || got.ResourceVersion == v)
		}
		if ok {
			return
		}
	}
}

// provision stands in for the external provisioner and the PV controller: a PV "pvc-<claim uid>"
// of the claim's class, sized to its request, reachable from the node's topology (the CSINode
// driver's topology keys, else the class's allowedTopologies keys, with the node's values), and the
// claim bound to it.
func (c *pvController) provision(ctx context.Context, pod *v1.Pod, claim *v1.PersistentVolumeClaim) error {
	cur, err := c.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Get(ctx, claim.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	className := ""
	if cur.Spec.StorageClassName != nil {
		className = *cur.Spec.StorageClassName
	}
	sc, err := c.client.StorageV1().StorageClasses().Get(ctx, className, metav1.GetOptions{})
	if err != nil {
		return err
	}
	node, err := c.client.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	var keys []string
	if csiNode, err := c.client.StorageV1().CSINodes().Get(ctx, node.Name, metav1.GetOptions{}); err == nil {
		for _, d := range csiNode.Spec.Drivers {
			if d.Name == sc.Provisioner {
				keys = d.TopologyKeys
			}
		}
	}
	if len(keys) == 0 {
		seen := map[string]bool{}
		for _, term := range sc.AllowedTopologies {
			for _, e := range term.MatchLabelExpressions {
				if !seen[e.Key] {
					seen[e.Key] = true
					keys = append(keys, e.Key)
				}
			}
		}
	}
	var exprs []v1.NodeSelectorRequirement
	for _, k := range keys {
		if v, ok := node.Labels[k]; ok {
			exprs = append(exprs, v1.NodeSelectorRequirement{Key: k, Operator: v1.NodeSelectorOpIn, Values: []string{v}})
		}
	}
	name := "pvc-" + string(cur.UID)
	reclaim := v1.PersistentVolumeReclaimDelete
	if sc.ReclaimPolicy != nil {
		reclaim = *sc.ReclaimPolicy
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1",
			Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": sc.Provisioner}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: cur.Spec.Resources.Requests[v1.ResourceStorage]},
			AccessModes:                   cur.Spec.AccessModes,
			StorageClassName:              className,
			PersistentVolumeReclaimPolicy: reclaim,
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{
				Driver: sc.Provisioner, VolumeHandle: name}},
			ClaimRef: &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: cur.Namespace, Name: cur.Name, UID: cur.UID},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound},
	}
	if len(exprs) > 0 {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: exprs}}}}
	}
	if _, err := c.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		return err
	}
	bound := cur.DeepCopy()
	bound.Spec.VolumeName = name
	bound.Status.Phase = v1.ClaimBound
	bound.Status.AccessModes = cur.Spec.AccessModes
	bound.Status.Capacity = pv.Spec.Capacity
	if bound.Annotations == nil {
		bound.Annotations = map[string]string{}
	}
	bound.Annotations["pv.kubernetes.io/bind-completed"] = "yes"
	bound.Annotations["pv.kubernetes.io/bound-by-controller"] = "yes"
	bound.Annotations["volume.kubernetes.io/selected-node"] = node.Name
	bumpVersion(&bound.ObjectMeta)
	if _, err := c.client.CoreV1().PersistentVolumeClaims(cur.Namespace).Update(ctx, bound, metav1.UpdateOptions{}); err != nil {
		return err
	}
	c.bindings = append(c.bindings, cur.Namespace+"/"+cur.Name+"="+name)
	c.wait(map[string]string{name: "1"}, map[string]string{cur.Namespace + "/" + cur.Name: bound.ResourceVersion})
	return nil
}

func (c *pvController) BindPodVolumes(ctx context.Context, pod *v1.Pod, podVolumes *volumebinding.PodVolumes) error {
	for _, d := range podVolumes.DynamicProvisions {
		if err := c.provision(ctx, pod, d.PVC); err != nil {
			return err
		}
	}
	for _, b := range podVolumes.StaticBindings {
		pvc := unexported(b, "pvc").(*v1.PersistentVolumeClaim)
		pv := unexported(b, "pv").(*v1.PersistentVolume)
		curPV, err := c.client.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		curPVC, err := c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Get(ctx, pvc.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		newPV := curPV.DeepCopy()
		newPV.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
			Namespace: curPVC.Namespace, Name: curPVC.Name, UID: curPVC.UID}
		newPV.Status.Phase = v1.VolumeBound
		bumpVersion(&newPV.ObjectMeta)
		if _, err := c.client.CoreV1().PersistentVolumes().Update(ctx, newPV, metav1.UpdateOptions{}); err != nil {
			return err
		}
		newPVC := curPVC.DeepCopy()
		newPVC.Spec.VolumeName = pv.Name
		newPVC.Status.Phase = v1.ClaimBound
		newPVC.Status.AccessModes = newPV.Spec.AccessModes
		newPVC.Status.Capacity = newPV.Spec.Capacity
		if newPVC.Annotations == nil {
			newPVC.Annotations = map[string]string{}
		}
		newPVC.Annotations["pv.kubernetes.io/bind-completed"] = "yes"
		bumpVersion(&newPVC.ObjectMeta)
		if _, err := c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, newPVC, metav1.UpdateOptions{}); err != nil {
			return err
		}
		c.bindings = append(c.bindings, pvc.Namespace+"/"+pvc.Name+"="+pv.Name)
		c.wait(map[string]string{newPV.Name: newPV.ResourceVersion},
			map[string]string{newPVC.Namespace + "/" + newPVC.Name: newPVC.ResourceVersion})
	}
	return nil
}

func key(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

func run(sc *Scenario) (ans Answer) {
	ans.ID = sc.ID
	start := time.Now()
	defer func() {
		ans.Millis = float64(time.Since(start).Microseconds()) / 1000
		if r := recover(); r != nil {
			ans.Error = fmt.Sprintf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := klog.FromContext(ctx)

	cfgObj, _, err := scheme.Codecs.UniversalDecoder().Decode(sc.Config, nil, nil)
	if err != nil {
		ans.Error = "config: " + err.Error()
		return
	}
	cfg := cfgObj.(*schedulerapi.KubeSchedulerConfiguration)

	var nodes []*v1.Node
	var bound []*v1.Pod
	var incoming []*v1.Pod
	var objs []runtime.Object
	for _, raw := range sc.Nodes {
		o, err := decode(raw)
		if err != nil {
			ans.Error = "node: " + err.Error()
			return
		}
		nodes = append(nodes, o.(*v1.Node))
		objs = append(objs, o)
	}
	for _, raw := range sc.Objects {
		o, err := decode(raw)
		if err != nil {
			ans.Error = "object: " + err.Error()
			return
		}
		objs = append(objs, o)
	}
	classes := map[string]*schedulingv1.PriorityClass{}
	for _, o := range objs {
		if pc, ok := o.(*schedulingv1.PriorityClass); ok {
			classes[pc.Name] = pc
		}
	}
	runtimeClasses := newRuntimeClassAdmission(ctx, objs)
	for _, raw := range sc.Pods {
		p, err := decodePod(raw, classes, runtimeClasses)
		if err != nil {
			ans.Error = "pod: " + err.Error()
			return
		}
		bound = append(bound, p)
		objs = append(objs, p)
	}
	// an incoming entry that is not a pod (a ResourceClaim) is an object created at its turn, a
	// cluster event: its place in incoming holds nil
	type incomingObject struct {
		kind string
		obj  runtime.Object
	}
	objectsAt := map[int]incomingObject{}
	seenIncoming := map[string]bool{}
	for i, raw := range sc.Incoming {
		var tm metav1.TypeMeta
		if err := json.Unmarshal(raw, &tm); err == nil && tm.Kind != "" && tm.Kind != "Pod" {
			o, err := decode(raw)
			if err != nil {
				ans.Error = "incoming object: " + err.Error()
				return
			}
			objectsAt[i] = incomingObject{tm.Kind, o}
			incoming = append(incoming, nil)
			continue
		}
		p, err := decodePod(raw, classes, runtimeClasses)
		if err != nil {
			ans.Error = "incoming pod: " + err.Error()
			return
		}
		incoming = append(incoming, p)
		if !seenIncoming[key(p)] { // a later entry of the same pod is its update: the API holds one pod
			objs = append(objs, p)
		}
		seenIncoming[key(p)] = true
	}

	client := fake.NewClientset(objs...)
	var victimsMu sync.Mutex
	var victims []string
	// victimOrder: the victims of the preemption under way in its candidate's order (importance,
	// as the evaluator sorted them), recorded by the executor's PreemptPod below. The deletes
	// themselves run in parallel (their order in victims is the goroutines'); fastsched deletes in
	// the candidate's order, and each removal moves the node's last pod into the hole (NodeInfo's
	// RemovePod), so the cache must hear of them in that order for the nodes' pod order — the
	// next preemption's domain order, which decides its sort.Slice ties — to agree.
	var victimOrder []string
	client.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.DeleteAction)
		victimsMu.Lock()
		victims = append(victims, d.GetNamespace()+"/"+d.GetName())
		victimsMu.Unlock()
		return false, nil, nil
	})
	// the API server's generateName, which the fake clientset leaves undone (an empty name):
	// DynamicResources creates the claim for a pod's DRA-backed extended resources with
	// generateName "<pod>-extended-resources-" in PreBind. Names and UIDs from a counter, and the
	// resourceVersion the assume cache needs (the fake tracker sets none).
	var generatedClaims int64
	client.PrependReactor("create", "resourceclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if c, ok := a.(k8stesting.CreateAction).GetObject().(*resourceapi.ResourceClaim); ok && c.Name == "" && c.GenerateName != "" {
			n := atomic.AddInt64(&generatedClaims, 1)
			c.Name = fmt.Sprintf("%s%05d", c.GenerateName, n)
			if c.UID == "" {
				c.UID = types.UID(fmt.Sprintf("uid-generated-claim-%d", n))
			}
			if c.ResourceVersion == "" {
				c.ResourceVersion = "1" // the assume caches compare versions
			}
		}
		return false, nil, nil
	})
	// resourceVersion preconditions on ResourceClaims, as the API server checks them (the fake
	// tracker neither checks nor advances versions): an update whose object carries another
	// version than the stored claim's is a Conflict, and every write that changes the claim
	// (update, status update, patch) advances the version; one that changes nothing does not. DynamicResources' bindClaim relies on them: the second member
	// of a pod group sharing a claim's pending allocation writes with the claim it read in
	// PreFilter, gets the Conflict, re-reads the claim the first member allocated and fails
	// with "got allocated elsewhere in the meantime" (kubernetes/kubernetes#140053); without
	// them it would overwrite the first member's reservation.
	claimsGVR := resourceapi.SchemeGroupVersion.WithResource("resourceclaims")
	var claimWriteMu sync.Mutex
	nextClaimVersion := func(rv string) string {
		var v int64
		fmt.Sscan(rv, &v)
		return fmt.Sprint(v + 1)
	}
	sameClaim := func(a, b *resourceapi.ResourceClaim) bool {
		a, b = a.DeepCopy(), b.DeepCopy()
		a.ResourceVersion, b.ResourceVersion = "", ""
		a.TypeMeta, b.TypeMeta = metav1.TypeMeta{}, metav1.TypeMeta{}
		return apiequality.Semantic.DeepEqual(a, b)
	}
	client.PrependReactor("update", "resourceclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		c, ok := a.(k8stesting.UpdateAction).GetObject().(*resourceapi.ResourceClaim)
		if !ok {
			return false, nil, nil
		}
		claimWriteMu.Lock()
		defer claimWriteMu.Unlock()
		cur, err := client.Tracker().Get(claimsGVR, c.Namespace, c.Name)
		if err != nil {
			return false, nil, nil // the tracker's NotFound
		}
		stored := cur.(*resourceapi.ResourceClaim)
		if c.ResourceVersion != "" && c.ResourceVersion != stored.ResourceVersion {
			return true, nil, apierrors.NewConflict(claimsGVR.GroupResource(), c.Name,
				errors.New("the object has been modified; please apply your changes to the latest version and try again"))
		}
		if sameClaim(c, stored) {
			// a write that changes nothing is no write: the API server keeps the stored object
			// and its resourceVersion (GuaranteedUpdate's unchanged-bytes short cut)
			return true, stored.DeepCopy(), nil
		}
		updated := c.DeepCopy()
		updated.ResourceVersion = nextClaimVersion(stored.ResourceVersion)
		if err := client.Tracker().Update(claimsGVR, updated, updated.Namespace); err != nil {
			return true, nil, err
		}
		return true, updated.DeepCopy(), nil
	})
	client.PrependReactor("patch", "resourceclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		claimWriteMu.Lock()
		defer claimWriteMu.Unlock()
		var before *resourceapi.ResourceClaim
		if cur, err := client.Tracker().Get(claimsGVR, a.GetNamespace(), a.(k8stesting.PatchAction).GetName()); err == nil {
			before = cur.(*resourceapi.ResourceClaim)
		}
		handled, obj, err := k8stesting.ObjectReaction(client.Tracker())(a)
		c, ok := obj.(*resourceapi.ResourceClaim)
		if !handled || err != nil || !ok || (before != nil && sameClaim(c, before)) {
			return handled, obj, err
		}
		updated := c.DeepCopy()
		updated.ResourceVersion = nextClaimVersion(c.ResourceVersion)
		if err := client.Tracker().Update(claimsGVR, updated, updated.Namespace); err != nil {
			return true, nil, err
		}
		return true, updated.DeepCopy(), nil
	})
	// preemption clears lower-priority pods' nominations on its node with a status patch
	var clearedMu sync.Mutex
	cleared := map[string]bool{}
	client.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa := a.(k8stesting.PatchAction)
		if pa.GetSubresource() == "status" && strings.Contains(string(pa.GetPatch()), "nominatedNodeName") {
			clearedMu.Lock()
			cleared[pa.GetNamespace()+"/"+pa.GetName()] = true
			clearedMu.Unlock()
		}
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(client, 0)

	// DRA, as scheduler.New sets it up
	var draManager fwk.SharedDRAManager
	var draSynced []toolscache.InformerSynced
	if utilfeature.DefaultFeatureGate.Enabled(features.DynamicResourceAllocation) {
		claimInformer := factory.Resource().V1().ResourceClaims().Informer()
		claimCache := assumecache.NewAssumeCache(logger, claimInformer, "ResourceClaim", "", nil)
		opts := resourceslicetracker.Options{
			EnableDeviceTaintRules:   utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules),
			EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
			SliceInformer:            factory.Resource().V1().ResourceSlices(),
			KubeClient:               client,
		}
		if opts.EnableDeviceTaintRules {
			opts.TaintInformer = factory.Resource().V1().DeviceTaintRules()
		}
		tracker, err := resourceslicetracker.StartTracker(ctx, opts)
		if err != nil {
			ans.Error = "dra: " + err.Error()
			return
		}
		// the tracker applies DeviceTaintRules to the slices in its own goroutine: the scenario
		// starts once it has processed every object (else a rule can arrive after the first cycle)
		draSynced = append(draSynced, tracker.HasSynced)
		draManager = dynamicresources.NewDRAManager(ctx, claimCache, tracker, factory)
		if utilfeature.DefaultFeatureGate.Enabled(features.DRAExtendedResource) {
			// the DeviceClass -> extended resource cache, fed by the DeviceClass informer as
			// scheduler.New's event handlers feed it (eventhandlers.go: addAllEventHandlers)
			erCache := draManager.DeviceClassResolver().(*extendedresourcecache.ExtendedResourceCache)
			reg, err := factory.Resource().V1().DeviceClasses().Informer().AddEventHandler(erCache)
			if err != nil {
				ans.Error = "dra: " + err.Error()
				return
			}
			draSynced = append(draSynced, reg.HasSynced)
		}
	}

	snapshot := internalcache.NewEmptySnapshot()
	// no API dispatcher (SchedulerAsyncAPICalls is off by default)
	cache := internalcache.New(ctx, nil, utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload),
		utilfeature.DefaultFeatureGate.Enabled(features.CompositePodGroup))
	csiManager := nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())
	inTree := frameworkplugins.NewInTreeRegistry()
	profiles := map[string]*profileFw{}
	var first framework.Framework
	for i := range cfg.Profiles {
		prof := &cfg.Profiles[i]
		capture := &capturingRegistry{plugins: map[string]fwk.Plugin{}}
		f, err := frameworkruntime.NewFramework(ctx, capture.wrap(inTree), prof,
			frameworkruntime.WithClientSet(client),
			frameworkruntime.WithInformerFactory(factory),
			frameworkruntime.WithSharedDRAManager(draManager),
			frameworkruntime.WithSnapshotSharedLister(snapshot),
			frameworkruntime.WithMutableSnapshotLister(snapshot),
			frameworkruntime.WithParallelism(int(cfg.Parallelism)),
			frameworkruntime.WithEventRecorder(&events.FakeRecorder{}),
			frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
			frameworkruntime.WithPodsInPreBind(frameworkruntime.NewPodsInPreBindMap()),
			frameworkruntime.WithSharedCSIManager(csiManager),
			frameworkruntime.WithPodGroupManager(cache),
		)
		if err != nil {
			ans.Error = "profile " + prof.SchedulerName + ": " + err.Error()
			return
		}
		if first == nil {
			first = f
		}
		pf := &profileFw{fw: f, plugins: capture.plugins, dra: draManager,
			batch: utilfeature.DefaultFeatureGate.Enabled(features.OpportunisticBatching)}
		if vb, ok := capture.plugins[volumebinding.Name].(*volumebinding.VolumeBinding); ok {
			pf.pvc = &pvController{SchedulerVolumeBinder: vb.Binder, client: client, factory: factory}
			vb.Binder = pf.pvc
		}
		if dp, ok := capture.plugins[defaultpreemption.Name].(*defaultpreemption.DefaultPreemption); ok && dp.Evaluator != nil {
			pf.preempt = &replayPreemption{Interface: dp.Evaluator.Interface}
			dp.Evaluator.Interface = pf.preempt
		}
		if dp, ok := capture.plugins[defaultpreemption.Name].(*defaultpreemption.DefaultPreemption); ok && dp.Executor != nil {
			// shared by the pod's evaluator and the PodGroupEvaluator
			inner := dp.Executor.PreemptPod
			dp.Executor.PreemptPod = func(ctx context.Context, c preemption.Candidate, p preemption.ExecutorPreemptor, victim *v1.Pod, pluginName string) (bool, error) {
				victimsMu.Lock()
				if victimOrder == nil {
					victimOrder = []string{}
					for _, v := range c.Victims().Pods {
						victimOrder = append(victimOrder, key(v))
					}
				}
				victimsMu.Unlock()
				return inner(ctx, c, p, victim, pluginName)
			}
		}
		profiles[prof.SchedulerName] = pf
	}
	if sc.Sampling {
		s := &sampling{global: cfg.PercentageOfNodesToScore}
		for _, p := range profiles {
			p.sample = s
		}
	}
	queue := internalqueue.NewSchedulingQueue(first.QueueSortFunc(), factory)
	for _, p := range profiles {
		p.fw.SetPodNominator(queue)
		p.fw.SetPodActivator(queue)
	}
	// Every informer a plugin may read, started together; their sync is polled every millisecond
	// (WaitForCacheSync polls every 100 ms, which would be most of a scenario's time).
	synced := []toolscache.InformerSynced{}
	for _, inf := range []toolscache.SharedIndexInformer{
		factory.Core().V1().Pods().Informer(), factory.Core().V1().Nodes().Informer(),
		factory.Core().V1().Namespaces().Informer(), factory.Core().V1().Services().Informer(),
		factory.Core().V1().ReplicationControllers().Informer(), factory.Apps().V1().ReplicaSets().Informer(),
		factory.Apps().V1().StatefulSets().Informer(), factory.Core().V1().PersistentVolumes().Informer(),
		factory.Core().V1().PersistentVolumeClaims().Informer(), factory.Storage().V1().StorageClasses().Informer(),
		factory.Storage().V1().CSINodes().Informer(), factory.Storage().V1().CSIDrivers().Informer(),
		factory.Storage().V1().CSIStorageCapacities().Informer(), factory.Policy().V1().PodDisruptionBudgets().Informer(),
		factory.Scheduling().V1().PriorityClasses().Informer(),
	} {
		synced = append(synced, inf.HasSynced)
	}
	synced = append(synced, draSynced...)
	factory.Start(ctx.Done())
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		all := true
		for _, ok := range synced {
			all = all && ok()
		}
		if all {
			break
		}
	}
	factory.WaitForCacheSync(ctx.Done()) // the ones not listed above (returns at once when all have synced)
	pvs, pvcs := map[string]string{}, map[string]string{}
	for _, o := range objs {
		switch v := o.(type) {
		case *v1.PersistentVolume:
			pvs[v.Name] = ""
		case *v1.PersistentVolumeClaim:
			pvcs[v.Namespace+"/"+v.Name] = ""
		}
	}
	for _, p := range profiles {
		if p.pvc != nil {
			p.pvc.wait(pvs, pvcs)
		}
	}
	if draManager != nil { // the DRA manager's claim cache and slice tracker, fed by event handlers
		claims, slices := 0, 0
		for _, o := range objs {
			switch o.(type) {
			case *resourceapi.ResourceClaim:
				claims++
			case *resourceapi.ResourceSlice:
				slices++
			}
		}
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Microsecond) {
			c, err1 := draManager.ResourceClaims().List()
			sl, err2 := draManager.ResourceSlices().ListWithDeviceTaintRules()
			if err1 == nil && err2 == nil && len(c) >= claims && len(sl) >= slices {
				break
			}
		}
		// the set of allocated devices is kept by the claim cache's event handler
		// (allocateddevices.go), which may run after the cache lists a claim: a scenario's claims
		// allocated from the start (dedicated devices: no admin access, no share) must be in it
		// before the first cycle, else its allocator finds them free
		dedicated := sets.New[string]()
		for _, o := range objs {
			if c, ok := o.(*resourceapi.ResourceClaim); ok && c.Status.Allocation != nil {
				for _, r := range c.Status.Allocation.Devices.Results {
					if (r.AdminAccess == nil || !*r.AdminAccess) && r.ShareID == nil {
						dedicated.Insert(r.Driver + "/" + r.Pool + "/" + r.Device)
					}
				}
			}
		}
		for deadline := time.Now().Add(10 * time.Second); dedicated.Len() > 0 && time.Now().Before(deadline); time.Sleep(200 * time.Microsecond) {
			if got, err := draManager.ResourceClaims().ListAllAllocatedDevices(); err == nil && got.Len() >= dedicated.Len() {
				break
			}
		}
	}

	if sc.Hints != nil { // a "hints" scenario: the queueing hints on this cluster, no cycle
		ans.Registered, ans.HintAnswers, err = answerHints(ctx, profiles[cfg.Profiles[0].SchedulerName].fw, sc.Hints,
			classes, runtimeClasses)
		if err != nil {
			ans.Error = "hints: " + err.Error()
		}
		return
	}

	// syncClaims waits (up to 10 s) until the DRA manager's claims (the assume cache, fed by the
	// informer) are at least as new as the API's and hold none the API deleted, then (up to 1 s) until its allocated devices are
	// the API claims': a claim written outside an assumed update
	// (PostFilter's deallocation, Unreserve's patch) reaches the next cycle, as fastsched's
	// cycles see every write at once (upstream: the claim's event before the pod's next try)
	syncClaims := func() {
		if draManager == nil {
			return
		}
		version := func(rv string) int64 {
			var v int64
			fmt.Sscan(rv, &v)
			return v
		}
		var claims []resourceapi.ResourceClaim
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Microsecond) {
			objs, err := client.Tracker().List(claimsGVR, resourceapi.SchemeGroupVersion.WithKind("ResourceClaim"), "")
			if err != nil {
				return
			}
			claims = objs.(*resourceapi.ResourceClaimList).Items
			synced := true
			inAPI := map[string]bool{} // (by name: the fake tracker gives no uids)
			for _, c := range claims {
				inAPI[c.Namespace+"/"+c.Name] = true
				got, err := draManager.ResourceClaims().Get(c.Namespace, c.Name)
				if err != nil || version(got.ResourceVersion) < version(c.ResourceVersion) {
					synced = false
					break
				}
			}
			// and a claim deleted (the garbage collector's, after a victim's deletion) has left it
			if have, err := draManager.ResourceClaims().List(); synced && err == nil {
				for _, c := range have {
					if !inAPI[c.Namespace+"/"+c.Name] {
						synced = false
						break
					}
				}
			}
			if synced {
				break
			}
		}
		// the manager's allocated-devices tracker is fed by its own event handler, which may lag
		// the assume cache: wait (briefly: in-flight allocations, which it lists too, never match)
		// until it holds the devices the API's claims hold, dedicated ones as foreachAllocatedDevice
		// counts them
		want := map[structured.DeviceID]bool{}
		for _, c := range claims {
			if c.Status.Allocation == nil {
				continue
			}
			for _, r := range c.Status.Allocation.Devices.Results {
				if (r.AdminAccess == nil || !*r.AdminAccess) && r.ShareID == nil {
					want[structured.MakeDeviceID(r.Driver, r.Pool, r.Device)] = true
				}
			}
		}
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Microsecond) {
			have, err := draManager.ResourceClaims().ListAllAllocatedDevices()
			if err != nil || len(have) != len(want) {
				continue
			}
			same := true
			for id := range have {
				same = same && want[id]
			}
			if same {
				return
			}
		}
	}
	order := map[string]int{} // the scenario's node order
	for i, n := range nodes {
		cache.AddNode(logger, n)
		order[n.Name] = i
	}
	onNode := map[string]*v1.Pod{} // the pods on nodes, by namespace/name
	nominated := map[string]*v1.Pod{}
	// a "sampling" scenario's pods that waited nominated until a preemption of a higher priority
	// cleared their nomination: still pending, their retry is a plain attempt
	unnominated := map[string]*v1.Pod{}
	for _, p := range bound {
		onNode[key(p)] = p
		if err := cache.AddPod(logger, p); err != nil {
			ans.Error = "bound pod " + key(p) + ": " + err.Error()
			return
		}
	}

	if sc.Bench {
		ans.Bench = bench(ctx, cfg, profiles, cache, snapshot, incoming)
		return
	}
	// pod groups (GenericWorkload): the cache knows the PodGroups and every incoming member, as the
	// informers' handlers (addPodGroup, addPodToSchedulingQueue) would have told it
	podGroups := map[string]*schedulingv1beta1.PodGroup{}
	// CompositePodGroup: the cache knows them too (addCompositePodGroup), in the objects' order
	cpgs := map[string]*schedulingv1alpha3.CompositePodGroup{}
	var objOrder []string
	for _, o := range objs {
		if pg, ok := o.(*schedulingv1beta1.PodGroup); ok {
			cache.AddPodGroup(pg)
			podGroups[pg.Namespace+"/"+pg.Name] = pg
			objOrder = append(objOrder, pg.Namespace+"/"+pg.Name)
		}
		if cpg, ok := o.(*schedulingv1alpha3.CompositePodGroup); ok && utilfeature.DefaultFeatureGate.Enabled(features.CompositePodGroup) {
			cache.AddCompositePodGroup(logger, cpg)
			cpgs[cpg.Namespace+"/"+cpg.Name] = cpg
			objOrder = append(objOrder, cpg.Namespace+"/"+cpg.Name)
		}
	}
	groupOf := func(p *v1.Pod) string {
		if p == nil || p.Spec.SchedulingGroup == nil || p.Spec.SchedulingGroup.PodGroupName == nil ||
			!utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload) {
			return ""
		}
		return p.Namespace + "/" + *p.Spec.SchedulingGroup.PodGroupName
	}
	for _, p := range incoming {
		if groupOf(p) != "" {
			cache.AddPodGroupMember(p)
		}
	}
	// podDeletedClaims is what a victim's deletion does to its claims outside the scheduler, before
	// the preemptor's next try (fastsched: dra/controller.py pod_removed, run when the pod is
	// removed). The resourceclaim controller (enqueuePod with deleted: the claims
	// resourceclaim.PodClaims names; syncClaim) drops the pod from a claim's reservedFor, and a
	// claim left with no consumer loses its allocation if it has the controller's finalizer
	// (delete-protection), then that finalizer once it is unallocated; the garbage collector
	// deletes the claims the pod owns (generated from its templates), which stay terminating
	// while a finalizer is left (another pod still reserves the claim) and go with the last one.
	// The claims' events reach the DRA manager before the next cycle (syncClaims).
	// The garbage collector deletes every claim the pod owns (controller or not, named by the pod
	// or not) whose other owners are gone: it looks each up (classifyReferences, isDangling): an
	// owner is dangling when the API has no object of its kind and name, or one with another uid.
	// An owner of a kind fastsched does not model (ownerGVR has none) is not dangling: the GC
	// resolves the kind through discovery first, an error for a kind the API server does not serve
	// (the claim is retried, never deleted), and fastsched cannot tell whether an object of a kind
	// it skips exists; fastsched's dra/controller.py _owner_absent decides the same.
	dangling := func(ref metav1.OwnerReference, namespace string) (bool, error) {
		gvr, ok := ownerGVR[ref.Kind]
		if !ok {
			return false, nil
		}
		if clusterScopedOwner[ref.Kind] {
			namespace = ""
		}
		obj, err := client.Tracker().Get(gvr, namespace, ref.Name)
		if apierrors.IsNotFound(err) {
			return true, nil
		} else if err != nil {
			return false, err
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return false, err
		}
		return m.GetUID() != ref.UID, nil
	}
	podDeletedClaims := func(pod *v1.Pod) error {
		claims := client.ResourceV1().ResourceClaims(pod.Namespace)
		names := []string{}
		named := map[string]bool{}
		for name := range resourceclaim.PodClaims(pod) {
			if !named[name] {
				names = append(names, name)
				named[name] = true
			}
		}
		all, err := claims.List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, c := range all.Items { // the claims it owns without naming them
			if named[c.Name] {
				continue
			}
			for _, o := range c.OwnerReferences {
				if o.UID == pod.UID {
					names = append(names, c.Name)
					break
				}
			}
		}
		for _, name := range names {
			claim, err := claims.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				continue
			} else if err != nil {
				return err
			}
			owned := len(claim.OwnerReferences) > 0
			for _, o := range claim.OwnerReferences {
				if o.UID != pod.UID && owned {
					gone, err := dangling(o, claim.Namespace)
					if err != nil {
						return err
					}
					owned = gone
				}
			}
			remaining := []resourceapi.ResourceClaimConsumerReference{}
			for _, r := range claim.Status.ReservedFor {
				if !(r.APIGroup == "" && r.Resource == "pods" && r.UID == pod.UID) {
					remaining = append(remaining, r)
				}
			}
			if len(remaining) < len(claim.Status.ReservedFor) {
				claim = claim.DeepCopy()
				claim.Status.ReservedFor = remaining
				finalizer := slices.Index(claim.Finalizers, resourceapi.Finalizer)
				if len(remaining) == 0 && finalizer >= 0 {
					claim.Status.Allocation = nil
				}
				if claim, err = claims.UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
					return err
				}
				if finalizer = slices.Index(claim.Finalizers, resourceapi.Finalizer); finalizer >= 0 && claim.Status.Allocation == nil {
					claim = claim.DeepCopy()
					claim.Finalizers = slices.Delete(claim.Finalizers, finalizer, finalizer+1)
					if claim, err = claims.Update(ctx, claim, metav1.UpdateOptions{}); err != nil {
						return err
					}
				}
			}
			if owned || claim.DeletionTimestamp != nil {
				// no owner left: the garbage collector deletes it; the API server keeps it,
				// terminating, while a finalizer is on it (the fake tracker ignores finalizers)
				if len(claim.Finalizers) > 0 {
					if claim.DeletionTimestamp == nil {
						claim = claim.DeepCopy()
						now := metav1.Now()
						claim.DeletionTimestamp = &now
						if _, err := claims.Update(ctx, claim, metav1.UpdateOptions{}); err != nil {
							return err
						}
					}
					continue
				}
				if err := claims.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					return err
				}
			}
		}
		return nil
	}
	// handleSchedulingFailure's part after a preemption (a pod's or a group's): the victims leave
	// the cache (deleted through the API, which the informers would bring to it) and the
	// nominations preemption cleared leave the nominator; false (ans.Error set) on a cache error
	afterPreemption := func(victims []string) bool {
		deleted := map[string]bool{}
		for _, v := range victims {
			deleted[v] = true
		}
		victimsMu.Lock()
		ordered := []string{}
		for _, v := range victimOrder { // the candidate's order (see victimOrder)
			if deleted[v] {
				ordered = append(ordered, v)
				delete(deleted, v)
			}
		}
		victimsMu.Unlock()
		for _, v := range victims { // any other (none expected), in name order
			if deleted[v] {
				ordered = append(ordered, v)
			}
		}
		for _, v := range ordered {
			if vp, ok := onNode[v]; ok {
				if err := cache.RemovePod(logger, vp); err != nil {
					ans.Error = "removing victim " + v + ": " + err.Error()
					return false
				}
				delete(onNode, v)
				if err := podDeletedClaims(vp); err != nil {
					ans.Error = "victim " + v + "'s claims: " + err.Error()
					return false
				}
			}
		}
		clearedMu.Lock()
		defer clearedMu.Unlock()
		for k := range cleared {
			if np, ok := nominated[k]; ok {
				queue.DeleteNominatedPodIfExists(np)
				delete(nominated, k)
				if sc.Sampling { // it waits on, not nominated (the patch cleared its status' node)
					cp := np.DeepCopy()
					cp.Status.NominatedNodeName = ""
					queue.Update(ctx, np, cp)
					unnominated[k] = cp
				}
			}
		}
		cleared = map[string]bool{}
		return true
	}
	done := map[int]bool{}
	held := map[string]*statusJSON{} // the plain pods PreEnqueue holds, with the status that holds them
	heldPods := map[string]*v1.Pod{}
	var heldOrder []string // the keys of held, in the order they were first held
	var cycle int64
	for i, pod := range incoming {
		if done[i] {
			continue
		}
		if pod == nil {
			// an object created: the API's create, heard by the informers; its event lets in the
			// held pods whose PreEnqueue plugin's hint queues them (DynamicResources: the pods
			// naming the claim, isSchedulableAfterClaimChange), and the queue runs PreEnqueue
			// again on them (moveToActiveQ). The entry's attempt is the first such pod's, in the
			// order they were held (the scenarios name each claim in one pod)
			op := objectsAt[i]
			m, err := meta.Accessor(op.obj)
			if err != nil {
				ans.Error = "incoming object: " + err.Error()
				return
			}
			if err := client.Tracker().Add(op.obj); err != nil {
				ans.Error = "creating " + op.kind + " " + m.GetNamespace() + "/" + m.GetName() + ": " + err.Error()
				return
			}
			for _, k := range heldOrder {
				p, ok := heldPods[k]
				if !ok || p.Namespace != m.GetNamespace() || op.kind != "ResourceClaim" {
					continue
				}
				for _, c := range p.Spec.ResourceClaims {
					if c.ResourceClaimName != nil && *c.ResourceClaimName == m.GetName() {
						pod = p
						break
					}
				}
				if pod != nil {
					break
				}
			}
			if pod == nil {
				ans.Attempts = append(ans.Attempts, Attempt{Pod: op.kind + " " + m.GetNamespace() + "/" + m.GetName(),
					Error: "no pod held for it"})
				continue
			}
		}
		if g := groupOf(pod); g != "" {
			// the group's members (consecutive in the scenario) in one cycle, in the queue's order;
			// CompositePodGroup: the members of every leaf under one root (the root's entity)
			root := rootOfComposite(pod, podGroups, cpgs)
			same := func(p *v1.Pod) bool { return groupOf(p) == g }
			if root != "" {
				same = func(p *v1.Pod) bool { return rootOfComposite(p, podGroups, cpgs) == root }
			}
			var members []*v1.Pod
			replays, rerunReplays := map[string]string{}, map[string]string{}
			index := map[string]int{}
			for j := i; j < len(incoming) && incoming[j] != nil && same(incoming[j]); j++ {
				done[j] = true
				members = append(members, incoming[j])
				index[key(incoming[j])] = j
				if j < len(sc.Replay) {
					replays[key(incoming[j])] = sc.Replay[j]
				}
				if j < len(sc.ReplayRerun) {
					rerunReplays[key(incoming[j])] = sc.ReplayRerun[j]
				}
			}
			// QueuedPodGroupInfo's list (PodGroupMemberPodsOrderingFunc): higher priority first; then
			// attempts (none yet), timestamps (the members are added together) and names, which is the
			// scenario's order (the generator names members in it)
			sort.SliceStable(members, func(a, b int) bool {
				return corev1helpers.PodPriority(members[a]) > corev1helpers.PodPriority(members[b])
			})
			pg, ok := podGroups[g]
			prof, okProf := profiles[pod.Spec.SchedulerName]
			if root != "" && okProf {
				ok = true
			} else if ok && pg.Spec.ParentCompositePodGroupName != nil && utilfeature.DefaultFeatureGate.Enabled(features.CompositePodGroup) {
				// a parent missing: the root is not in the queue's forest, so the members wait in
				// incompletePodGroupPods (PriorityQueue.Add), as without their PodGroup
				ok = false
			}
			if !ok || !okProf {
				// no PodGroup: the members wait in incompletePodGroupPods; no profile: not ours
				ans.Groups = append(ans.Groups, GroupAnswer{Group: g, Messages: map[string]string{}, Bound: map[string]string{}})
				continue
			}
			syncClaims()
			if err := cache.UpdateSnapshot(logger, snapshot); err != nil {
				ans.Error = err.Error()
				return
			}
			cycle++
			victimsMu.Lock()
			victims, victimOrder = nil, nil
			victimsMu.Unlock()
			var ga GroupAnswer
			var atts []Attempt
			var bound []*v1.Pod
			if root != "" {
				ga, atts, bound = compositeAttempt(ctx, prof, snapshot, root, objOrder, podGroups, cpgs, members, order,
					cycle, sc)
			} else {
				ga, atts, bound = groupAttempt(ctx, prof, snapshot, pg, members, replays, rerunReplays, order, cycle, sc,
					syncClaims)
			}
			victimsMu.Lock()
			if len(victims) > 0 {
				ga.Victims = append([]string{}, victims...)
				sort.Strings(ga.Victims)
			}
			victimsMu.Unlock()
			// handleSchedulingFailure's part after workload-aware preemption (as for a pod's below):
			// the victims leave the cache, the nominations preemption cleared leave the nominator,
			// and each member waiting on preemption is nominated to its node
			if !afterPreemption(ga.Victims) {
				return
			}
			for _, m := range members {
				n := ga.Nominated[key(m)]
				if n == "" {
					continue
				}
				np := m.DeepCopy()
				np.Status.NominatedNodeName = n
				pi, err := framework.NewPodInfo(np)
				if err != nil {
					ans.Error = err.Error()
					return
				}
				// back in the queue (the nominator keeps a reference; the filter reads the pod from the
				// queue: a member the queue's workload forest does not know waits among its incomplete pods)
				queue.Add(ctx, np)
				queue.AddNominatedPod(logger, pi, &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: n})
				nominated[key(np)] = np
			}
			ans.Groups = append(ans.Groups, ga)
			ans.Attempts = append(ans.Attempts, atts...)
			for _, b := range bound {
				if sc.Now != nil {
					// the members bind in the group's cycle: all start when it does (fastsched's clock
					// is at the first member's step)
					b.Status.StartTime = &metav1.Time{Time: sc.Now.Add(time.Duration(i) * time.Millisecond)}
				}
				if err := cache.AddPod(logger, b); err != nil {
					ans.Error = "binding " + key(b) + ": " + err.Error()
					return
				}
				onNode[key(b)] = b
			}
			continue
		}
		// a "sampling" scenario's later entry of a pod waiting nominated is its retry: the queue
		// pops it again (its backoff over, or activated), with its nominated node (evaluateNominatedNode)
		if _, bound := onNode[key(pod)]; bound && sc.Sampling { // (bound meanwhile: no attempt)
			ans.Attempts = append(ans.Attempts, Attempt{Pod: "Pod " + key(pod), Error: "bound already"})
			continue
		}
		retried := nominated[key(pod)]
		if retried == nil {
			retried = unnominated[key(pod)]
		}
		delete(unnominated, key(pod))
		if retried != nil && sc.Sampling {
			pod = retried
		} else {
			retried = nil
		}
		replay := ""
		if i < len(sc.Replay) {
			replay = sc.Replay[i]
		}
		prof, ok := profiles[pod.Spec.SchedulerName]
		if !ok {
			// not ours: upstream's scheduler ignores it
			ans.Attempts = append(ans.Attempts, Attempt{Pod: key(pod), Error: "no profile " + pod.Spec.SchedulerName})
			continue
		}
		syncClaims()
		// the queue's runPreEnqueuePlugins (PriorityQueue.Add, and Update for a pod it holds): the
		// first plugin that rejects the pod holds it before the queue; no cycle, no attempt (the
		// scenario's later entry of the same pod, its update, runs PreEnqueue again)
		st := preEnqueue(ctx, prof.fw, pod)
		if was, ok := held[key(pod)]; ok && was.Plugin == "SchedulingGates" && len(pod.Spec.SchedulingGates) > 0 {
			// an update of a pod SchedulingGates holds that leaves gates: PodSchedulingPropertiesChange
			// gives no UpdatePodSchedulingGatesEliminated, the plugin's only event, so the queue skips
			// it (isPodWorthRequeuing) and PreEnqueue does not run again: held as it was
			st = was
		}
		if st != nil {
			if _, ok := heldPods[key(pod)]; !ok {
				heldOrder = append(heldOrder, key(pod))
			}
			held[key(pod)], heldPods[key(pod)] = st, pod
			ans.Attempts = append(ans.Attempts, Attempt{Pod: key(pod), Gated: st})
			continue
		}
		delete(held, key(pod))
		delete(heldPods, key(pod))
		if err := cache.UpdateSnapshot(logger, snapshot); err != nil {
			ans.Error = err.Error()
			return
		}
		victimsMu.Lock()
		victims, victimOrder = nil, nil
		victimsMu.Unlock()
		cycle++ // the queue's scheduling cycle (CurrentCycle): one per pod popped
		if prof.preempt != nil {
			prof.preempt.want = ""
			if i < len(sc.ReplayNominated) {
				prof.preempt.want = sc.ReplayNominated[i]
			}
		}
		at := attempt(ctx, prof, snapshot, pod, replay, order, cycle)
		victimsMu.Lock()
		if len(victims) > 0 {
			at.Victims = append([]string{}, victims...)
			sort.Strings(at.Victims)
		}
		victimsMu.Unlock()
		ans.Attempts = append(ans.Attempts, at)
		if retried != nil && at.NominatedNode == "" {
			// bound (assume takes it out of the nominator) or dropped, as a pod that fails is here
			queue.Delete(logger, retried)
			delete(nominated, key(retried))
		}
		if at.Selected != "" {
			b := pod.DeepCopy()
			b.Spec.NodeName = at.Selected
			b.Status.Phase = v1.PodRunning
			b.Status.NodeAllocatableResourceClaimStatuses = at.nodeAllocatableStatuses
			if sc.Now != nil { // pod i starts at Now + i ms (fastsched's clock steps the same)
				b.Status.StartTime = &metav1.Time{Time: sc.Now.Add(time.Duration(i) * time.Millisecond)}
			}
			if err := cache.AddPod(logger, b); err != nil {
				ans.Error = "binding " + key(pod) + ": " + err.Error()
				return
			}
			onNode[key(b)] = b
		} else if at.NominatedNode != "" {
			// handleSchedulingFailure's part: the victims are gone (deleted through the API, which the
			// informers would bring to the cache), the pod waits nominated to the node, and the
			// nominations preemption cleared are gone from the nominator
			if !afterPreemption(at.Victims) {
				return
			}
			np := pod.DeepCopy()
			np.Status.NominatedNodeName = at.NominatedNode
			pi, err := framework.NewPodInfo(np)
			if err != nil {
				ans.Error = err.Error()
				return
			}
			// back in the queue (the nominator keeps a reference; the filter reads the pod from the queue)
			if retried != nil {
				queue.Update(ctx, retried, np) // (nominated anew: the override below moves it)
			} else {
				queue.Add(ctx, np)
			}
			queue.AddNominatedPod(logger, pi, &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride,
				NominatedNodeName: at.NominatedNode})
			nominated[key(np)] = np
		}
	}
	return
}

// preEnqueue is the queue's runPreEnqueuePlugins for a plain pod: the profile's PreEnqueue plugins
// in order, the first rejection's status with the plugin's name; nil when every plugin admits it.
func preEnqueue(ctx context.Context, f framework.Framework, pod *v1.Pod) *statusJSON {
	for _, pe := range f.PreEnqueuePlugins() {
		if st := pe.PreEnqueue(ctx, pod); !st.IsSuccess() {
			return toStatus(st.WithPlugin(pe.Name()))
		}
	}
	return nil
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// attempt retells schedulingCycle's SchedulePod and PostFilter for one pod (see schedule_one.go).
//
// cycle is the scheduling cycle's number (the queue's CurrentCycle), which opportunistic batching
// checks: a hint is only given to the pod of the cycle right after a stored one.
func attempt(ctx context.Context, prof *profileFw, snapshot *internalcache.Snapshot, pod *v1.Pod, replay string,
	order map[string]int, cycle int64) (at Attempt) {
	return attemptIn(ctx, prof, snapshot, pod, replay, order, cycle, nil)
}

// attemptIn is attempt; with group (a pod group's cycle, see groupAttempt) PostFilter is skipped and
// nothing is reserved or bound here, and the cycle state is handed back in group.state.
func attemptIn(ctx context.Context, prof *profileFw, snapshot *internalcache.Snapshot, pod *v1.Pod, replay string,
	order map[string]int, cycle int64, group *groupMember) (at Attempt) {
	at.Pod = key(pod)
	at.Filter = map[string]*statusJSON{}
	f := prof.fw
	if prof.sample != nil && group == nil {
		defer func() { // the start index after the cycle, whatever ended it
			next := prof.sample.next
			at.NextStart = &next
		}()
	}
	state := framework.NewCycleState()
	if group != nil {
		group.state = state
		state.SetPodGroupSchedulingCycle(group.podGroupState)
		if group.placementState != nil { // (initPodSchedulingContext)
			state.SetPlacementCycleState(group.placementState)
		}
	}
	// (no pod group cycle: the placement is every node)
	allNodes, _ := snapshot.ListNodesInPlacement()
	if len(allNodes) == 0 {
		at.Error = "no nodes available to schedule pods"
		return
	}
	// the queue signs a pod when it is added (PriorityQueue.signPod); the signature is the pod's alone
	var sig fwk.PodSignature
	if prof.batch {
		sig = f.SignPod(ctx, pod)
		if sig != nil {
			sum := sha256.Sum256(sig)
			at.BatchSignature = hex.EncodeToString(sum[:])
		}
		before := batchFlushes(f.ProfileName())
		defer func() { at.BatchFlush = batchFlushDelta(before, batchFlushes(f.ProfileName())) }()
	}
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}
	fail := func() {
		fitErr := &framework.FitError{Pod: pod, NumAllNodes: len(allNodes), Diagnosis: diagnosis}
		if group != nil {
			group.fitErr = fitErr
		}
		if f.HasPostFilterPlugins() && group == nil { // a pod group's cycle skips PostFilter
			result, st := f.RunPostFilterPlugins(ctx, state, pod, fitErr.Diagnosis.NodeToStatus)
			fitErr.Diagnosis.PostFilterMsg = st.Message()
			at.PostFilter = toStatus(st)
			if result != nil && result.NominatingInfo != nil {
				at.NominatedNode = result.NominatedNodeName
			}
		}
		at.FitError = fitErr.Error()
	}

	preRes, s, unschedPlugins := f.RunPreFilterPlugins(ctx, state, pod)
	diagnosis.UnschedulablePlugins = unschedPlugins
	at.PreFilter = toStatus(s)
	if preRes != nil && !preRes.AllNodes() {
		at.PreFilterNodes = sets.List(preRes.NodeNames)
	}
	if !s.IsSuccess() {
		if !s.IsRejected() {
			at.Error = s.AsError().Error()
			return
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(s)
		diagnosis.PreFilterMsg = s.Message()
		diagnosis.AddPluginStatus(s)
		fail()
		return
	}
	// Opportunistic batching (findNodesThatFitPod): the hint from the previous cycle is filtered
	// first (evaluateNominatedNode); when it fits, upstream's cycle ends there with it. The full
	// cycle below is retold anyway, for the record.
	// (the pod has no nominated node: a preemptor is attempted again only in a "sampling" scenario,
	// whose default profile signs no pod, so that it gets no hint)
	if prof.batch {
		at.BatchHint = f.GetNodeHint(ctx, pod, sig, state, cycle)
		if at.BatchHint != "" {
			if ni, err := snapshot.GetNodeInPlacement(at.BatchHint); err == nil {
				at.BatchHinted = !f.HasFilterPlugins() || f.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni).IsSuccess()
			}
		}
	}
	// A preemptor's retry (a "sampling" scenario's later entry of a pod waiting nominated), or a
	// batching hint there (the nominated node goes first, as upstream's): findNodesThatFitPod's
	// evaluateNominatedNode. Upstream's cycle ends there when the node fits, so that the full
	// search, which moves the start index, must not run: unlike the retelling below for the
	// other scenarios, which reports the full cycle after a fitting hint. The node is judged by
	// findNodesThatPassFilters over that one node with the cycle's diagnosis: when it passes, the
	// cycle ends there (the only feasible node: no scoring); when it is rejected, its status stays
	// in the NodeToStatus the full search then shares (one more processed node for the start index
	// and EvaluatedNodes unless the search rejects it again, and its status in the FitError and
	// in PostFilter's view); an Error is logged and the full search follows.
	nnn := pod.Status.NominatedNodeName
	if nnn == "" {
		nnn = at.BatchHint
	}
	if nnn != "" && prof.sample != nil && group == nil {
		if ni, err := snapshot.GetNodeInPlacement(nnn); err == nil {
			var st *fwk.Status
			if f.HasFilterPlugins() {
				st = f.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			}
			if st.IsSuccess() {
				at.Feasible, at.Best, at.Selected = []string{nnn}, []string{nnn}, nnn
				one := 1 + diagnosis.NodeToStatus.Len()
				at.EvaluatedNodes = &one
				storeBatch(ctx, prof, sig, cycle, &at, nil)
				bindVolumes(ctx, prof, state, pod, &at)
				return
			}
			if st.Code() != fwk.Error {
				diagnosis.NodeToStatus.Set(nnn, st)
				diagnosis.AddPluginStatus(st)
				at.Filter[nnn] = toStatus(st)
			}
		}
	}
	nodes := append([]fwk.NodeInfo{}, allNodes...)
	if !preRes.AllNodes() {
		nodes = nodes[:0]
		for name := range preRes.NodeNames {
			if ni, err := snapshot.GetNodeInPlacement(name); err == nil {
				nodes = append(nodes, ni)
			}
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
			fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unschedPlugins))))
	}
	if prof.sample == nil || group != nil {
		// Upstream filters the nodes in parallel and a cycle ends with the first Error any of them
		// meets, so any node's error is upstream's possible answer: all of them are reported (Errors),
		// the first in the scenario's node order as Error.
		sort.SliceStable(nodes, func(i, j int) bool { return order[nodes[i].Node().Name] < order[nodes[j].Node().Name] })
	}
	defer func() {
		if len(at.Errors) > 0 {
			at.Error = at.Errors[0]
		}
	}()
	var feasible []fwk.NodeInfo
	if prof.sample != nil && group == nil {
		// (PreFilter's node names come in Go map order upstream; here in snapshot order: the
		// scenarios restrict to fewer than 100 nodes, all of which are examined)
		if !preRes.AllNodes() {
			sort.SliceStable(nodes, func(i, j int) bool { return snapshotIndex(allNodes, nodes[i]) < snapshotIndex(allNodes, nodes[j]) })
		}
		feasible = prof.sample.findNodesThatPassFilters(ctx, f, state, pod, &diagnosis, nodes, len(allNodes), &at)
	} else if !f.HasFilterPlugins() {
		feasible = nodes
	} else {
		for _, ni := range nodes {
			st := f.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			if st.Code() == fwk.Error { // every node's error is a possible answer (see above)
				at.Errors = append(at.Errors, st.AsError().Error())
				continue
			}
			if st.IsSuccess() {
				feasible = append(feasible, ni)
			} else {
				diagnosis.NodeToStatus.Set(ni.Node().Name, st)
				diagnosis.AddPluginStatus(st)
				at.Filter[ni.Node().Name] = toStatus(st)
			}
		}
	}
	if len(at.Errors) > 0 {
		return
	}
	at.Feasible = []string{}
	for _, ni := range feasible {
		at.Feasible = append(at.Feasible, ni.Node().Name)
	}
	sort.Strings(at.Feasible)
	if len(feasible) == 0 {
		fail()
		return
	}
	if len(feasible) == 1 { // "When only one node after predicate, just use it."
		at.Best = []string{feasible[0].Node().Name}
		at.Selected = at.Best[0]
		storeBatch(ctx, prof, sig, cycle, &at, nil)
		if group == nil {
			bindVolumes(ctx, prof, state, pod, &at)
		}
		return
	}
	at.Total = map[string]int64{}
	var scores []fwk.NodePluginScores
	if !f.HasScorePlugins() {
		for _, ni := range feasible {
			at.Total[ni.Node().Name] = 1
			scores = append(scores, fwk.NodePluginScores{Name: ni.Node().Name, TotalScore: 1})
		}
	} else {
		if st := f.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
			at.Error = st.AsError().Error()
			return
		}
		at.PreScoreSkipped = sets.List(state.GetSkipScorePlugins())
		var st *fwk.Status
		scores, st = f.RunScorePlugins(ctx, state, pod, feasible)
		if !st.IsSuccess() {
			at.Error = st.AsError().Error()
			return
		}
		at.Scores = map[string]map[string][3]int64{}
		rawLists := map[string]fwk.NodeScoreList{} // plugin -> the raw scores (RawScores, since 1.37)
		for _, nps := range scores {
			at.Total[nps.Name] = nps.TotalScore
			for _, ps := range nps.Scores {
				if at.Scores[ps.Name] == nil {
					at.Scores[ps.Name] = map[string][3]int64{}
				}
				at.Scores[ps.Name][nps.Name] = [3]int64{0, 0, ps.Score}
			}
			for _, ps := range nps.RawScores {
				rawLists[ps.Name] = append(rawLists[ps.Name], fwk.NodeScore{Name: nps.Name, Score: ps.Score})
			}
		}
		// normalized: the same plugin's NormalizeScore, called again on the raw scores and cycle state
		for name, perNode := range at.Scores {
			pl, ok := prof.plugins[name].(fwk.ScorePlugin)
			if !ok {
				continue
			}
			list := append(fwk.NodeScoreList{}, rawLists[name]...)
			raw := map[string]int64{}
			for _, ns := range list {
				raw[ns.Name] = ns.Score
			}
			if ext := pl.ScoreExtensions(); ext != nil {
				if st := ext.NormalizeScore(ctx, state, pod, list); !st.IsSuccess() {
					at.Error = st.AsError().Error()
					return
				}
			}
			for _, ns := range list {
				v := perNode[ns.Name]
				v[0], v[1] = raw[ns.Name], ns.Score
				perNode[ns.Name] = v
			}
		}
	}
	var best int64 = -1 << 62
	for _, t := range at.Total {
		if t > best {
			best = t
		}
	}
	for _, n := range sortedKeys(at.Total) {
		if at.Total[n] == best {
			at.Best = append(at.Best, n)
		}
	}
	at.Selected = at.Best[0]
	for _, n := range at.Best {
		if n == replay {
			at.Selected = replay
		}
	}
	storeBatch(ctx, prof, sig, cycle, &at, scores)
	if group == nil {
		bindVolumes(ctx, prof, state, pod, &at)
	}
	return
}

// batchFlushReasons: every reason of scheduler_batch_cache_flushed_total (pkg/scheduler/metrics).
var batchFlushReasons = []string{metrics.BatchFlushPodFailed, metrics.BatchFlushPodSkipped,
	metrics.BatchFlushPodNominated, metrics.BatchFlushNodeMissing, metrics.BatchFlushEmptyList,
	metrics.BatchFlushExpired, metrics.BatchFlushPodIncompatible, metrics.BatchFlushPodNotBatchable,
	metrics.BatchFlushFilterError, metrics.BatchFlushPreScoreError, metrics.BatchFlushRescoreError,
	metrics.BatchFlushNormalizeError}

// batchFlushes reads the profile's flush counters (scenarios run one at a time, so deltas are one
// attempt's).
func batchFlushes(profile string) map[string]float64 {
	out := map[string]float64{}
	for _, r := range batchFlushReasons {
		v, err := testutil.GetCounterMetricValue(metrics.BatchCacheFlushed.WithLabelValues(profile, r))
		if err == nil {
			out[r] = v
		}
	}
	return out
}

func batchFlushDelta(before, after map[string]float64) []string {
	var out []string
	for _, r := range batchFlushReasons {
		for n := int(after[r] - before[r]); n > 0; n-- {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// storeBatch settles the choice when opportunistic batching's hint fitted (upstream chose the
// hint: it stays the choice unless both it and the replay are among the full cycle's best, which
// a different heap order among tied scores would have given) and stores the cycle's results as
// schedulePod does (StoreScheduleResults: after a hint used, the remaining hints are kept; after a
// full cycle, the other scored nodes become the hints; nil = one feasible node, nothing kept).
func storeBatch(ctx context.Context, prof *profileFw, sig fwk.PodSignature, cycle int64, at *Attempt,
	scores []fwk.NodePluginScores) {
	if !prof.batch {
		return
	}
	if at.BatchHinted && at.Selected != at.BatchHint {
		inBest := func(n string) bool {
			for _, b := range at.Best {
				if b == n {
					return true
				}
			}
			return false
		}
		if !inBest(at.BatchHint) || !inBest(at.Selected) {
			at.Selected = at.BatchHint
		}
	}
	if at.BatchHinted && at.Selected == at.BatchHint {
		prof.fw.StoreScheduleResults(ctx, sig, at.BatchHint, at.Selected, nil, cycle)
		return
	}
	// schedulePod: NewSortedScoredNodes(priorityList).Pop() is the choice and the rest of the heap
	// is kept. Upstream's list is in its parallel filter's order, so among tied totals any node may
	// pop first; here the list is the chosen node, then the others in the scenario's node order:
	// heap.Init leaves a best node at index 0 where it is, so the heap pops the choice (the replay's
	// among the best) and keeps the rest in the order fastsched's heap keeps them.
	var rest framework.SortedScoredNodes
	if len(scores) > 0 {
		list := make([]fwk.NodePluginScores, 0, len(scores))
		for _, ns := range scores {
			if ns.Name == at.Selected {
				list = append(list, ns)
			}
		}
		for _, ns := range scores {
			if ns.Name != at.Selected {
				list = append(list, ns)
			}
		}
		rest = framework.NewSortedScoredNodes(list)
		if len(list) > 0 && list[0].Name == at.Selected {
			rest.Pop()
		}
	}
	prof.fw.StoreScheduleResults(ctx, sig, at.BatchHint, at.Selected, rest, cycle)
}

// bindVolumes runs what schedulingCycle and bindingCycle run after the choice that changes the
// cluster's volumes: Reserve, then PreBind (VolumeBinding's, through pvController).
func bindVolumes(ctx context.Context, prof *profileFw, state fwk.CycleState, pod *v1.Pod, at *Attempt) {
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = at.Selected
	if utilfeature.DefaultFeatureGate.Enabled(features.DRANodeAllocatableResources) {
		// schedule_one.go: assume copies DynamicResources' node-allocatable claim statuses into the
		// assumed pod (the cache counts them; PreBind patches the pod's status with them)
		assumed.Status.NodeAllocatableResourceClaimStatuses = dynamicresources.ExtractPodNodeAllocatableResourceClaimStatus(klog.FromContext(ctx), state, at.Selected)
	}
	if st := prof.fw.RunReservePluginsReserve(ctx, state, assumed, at.Selected); !st.IsSuccess() {
		prof.fw.RunReservePluginsUnreserve(ctx, state, assumed, at.Selected)
		at.Error = "reserve: " + st.Message()
		at.Selected = ""
		return
	}
	if prof.pvc != nil {
		prof.pvc.bindings = nil
	}
	// bindingCycle: with NominatedNodeNameForExpectation (beta, on since 1.35) the PreBind plugins'
	// pre-flights run first; they decide which PreBind plugins run and which run in parallel
	if utilfeature.DefaultFeatureGate.Enabled(features.NominatedNodeNameForExpectation) {
		if st := prof.fw.RunPreBindPreFlights(ctx, state, assumed, at.Selected); st.Code() == fwk.Error || st.IsRejected() {
			prof.fw.RunReservePluginsUnreserve(ctx, state, assumed, at.Selected)
			at.Error = "prebind: " + st.Message()
			at.Selected = ""
			return
		}
	}
	if st := prof.fw.RunPreBindPlugins(ctx, state, assumed, at.Selected); !st.IsSuccess() {
		prof.fw.RunReservePluginsUnreserve(ctx, state, assumed, at.Selected)
		at.Error = "prebind: " + st.Message()
		at.Selected = ""
		return
	}
	at.nodeAllocatableStatuses = assumed.Status.NodeAllocatableResourceClaimStatuses
	for _, st := range at.nodeAllocatableStatuses {
		at.NodeAllocatable = append(at.NodeAllocatable, nodeAllocatableStatusText(st))
	}
	if prof.pvc != nil && len(prof.pvc.bindings) > 0 {
		at.VolumeBindings = append([]string{}, prof.pvc.bindings...)
		sort.Strings(at.VolumeBindings)
	}
	if prof.dra != nil {
		for _, c := range pod.Spec.ResourceClaims {
			if c.ResourceClaimName == nil {
				continue
			}
			claim, err := prof.dra.ResourceClaims().Get(pod.Namespace, *c.ResourceClaimName)
			if err != nil || claim.Status.Allocation == nil {
				continue
			}
			fresh := true // allocated by this attempt: the pod is its only user
			for _, r := range claim.Status.ReservedFor {
				if r.UID != pod.UID {
					fresh = false
				}
			}
			if !fresh {
				continue
			}
			var devs []string
			for _, r := range claim.Status.Allocation.Devices.Results {
				devs = append(devs, allocationResultText(r))
			}
			at.ClaimAllocations = append(at.ClaimAllocations, pod.Namespace+"/"+claim.Name+"="+strings.Join(devs, ","))
		}
		// the claim DynamicResources created for the pod's DRA-backed extended resources, named by
		// its generateName and "*" (the generated suffix is the API server's)
		if list, err := prof.fw.ClientSet().ResourceV1().ResourceClaims(pod.Namespace).List(ctx, metav1.ListOptions{}); err == nil {
			for _, claim := range list.Items {
				if claim.Annotations[resourceapi.ExtendedResourceClaimAnnotation] != "true" || claim.Status.Allocation == nil {
					continue
				}
				owned := false
				for _, or := range claim.OwnerReferences {
					owned = owned || (or.UID == pod.UID && or.Controller != nil && *or.Controller)
				}
				if !owned {
					continue
				}
				var devs []string
				for _, r := range claim.Status.Allocation.Devices.Results {
					devs = append(devs, allocationResultText(r))
				}
				at.ClaimAllocations = append(at.ClaimAllocations, pod.Namespace+"/"+claim.GenerateName+"*="+strings.Join(devs, ","))
			}
		}
		sort.Strings(at.ClaimAllocations)
	}
}

// bench runs upstream's scheduling cycle on each incoming pod, as schedulePod and the binding
// cycle do it, minus the API: UpdateSnapshot, PreFilter, Filter on the nodes in parallel from the
// rotating start index until numFeasibleNodesToFind are found, PreScore, Score, selectHost,
// assume, Reserve, Permit and PreBind (1.37's cache has no FinishBinding: assumed pods no longer
// expire). PostFilter is not run (an unschedulable pod is counted and dropped).
func bench(ctx context.Context, cfg *schedulerapi.KubeSchedulerConfiguration, profiles map[string]*profileFw,
	cache internalcache.Cache, snapshot *internalcache.Snapshot, incoming []*v1.Pod) *Bench {
	logger := klog.FromContext(ctx)
	out := &Bench{Pods: len(incoming)}
	next := 0
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	start := time.Now()
	for _, pod := range incoming {
		if pod == nil { // (an incoming object: no cycle)
			continue
		}
		prof, ok := profiles[pod.Spec.SchedulerName]
		if !ok {
			continue
		}
		f := prof.fw
		if err := cache.UpdateSnapshot(logger, snapshot); err != nil {
			continue
		}
		state := framework.NewCycleState()
		allNodes, _ := snapshot.NodeInfos().List()
		preRes, s, _ := f.RunPreFilterPlugins(ctx, state, pod)
		if !s.IsSuccess() || len(allNodes) == 0 {
			continue
		}
		nodes := allNodes
		if !preRes.AllNodes() {
			nodes = nodes[:0:0]
			for name := range preRes.NodeNames {
				if ni, err := snapshot.Get(name); err == nil {
					nodes = append(nodes, ni)
				}
			}
		}
		pct := cfg.PercentageOfNodesToScore
		for i := range cfg.Profiles {
			if cfg.Profiles[i].SchedulerName == pod.Spec.SchedulerName && cfg.Profiles[i].PercentageOfNodesToScore != nil {
				pct = cfg.Profiles[i].PercentageOfNodesToScore
			}
		}
		toFind := numFeasibleNodesToFind(pct, int32(len(nodes)))
		feasible := make([]fwk.NodeInfo, toFind)
		var found, failed int32
		fctx, cancel := context.WithCancel(ctx)
		f.Parallelizer().Until(fctx, len(nodes), func(i int) {
			ni := nodes[(next+i)%len(nodes)]
			st := f.RunFilterPluginsWithNominatedPods(fctx, state, pod, ni)
			if st.IsSuccess() {
				l := atomic.AddInt32(&found, 1)
				if l > toFind {
					cancel()
					atomic.AddInt32(&found, -1)
				} else {
					feasible[l-1] = ni
				}
			} else {
				atomic.AddInt32(&failed, 1)
			}
		}, "Filter")
		cancel()
		feasible = feasible[:found]
		next = (next + int(found+failed)) % len(allNodes)
		if len(feasible) == 0 {
			continue
		}
		host := feasible[0].Node().Name
		if len(feasible) > 1 {
			if st := f.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
				continue
			}
			scores, st := f.RunScorePlugins(ctx, state, pod, feasible)
			if !st.IsSuccess() {
				continue
			}
			var best int64 = -1 << 62
			seen := 0
			for _, ns := range scores { // selectHost: reservoir sampling among the best
				if ns.TotalScore > best {
					best, host, seen = ns.TotalScore, ns.Name, 1
				} else if ns.TotalScore == best {
					seen++
					if rand.Intn(seen) == 0 {
						host = ns.Name
					}
				}
			}
		}
		assumed := pod.DeepCopy()
		assumed.Spec.NodeName = host
		if err := cache.AssumePod(logger, assumed); err != nil {
			continue
		}
		if st := f.RunReservePluginsReserve(ctx, state, assumed, host); !st.IsSuccess() {
			f.RunReservePluginsUnreserve(ctx, state, assumed, host)
			_ = cache.ForgetPod(logger, assumed)
			continue
		}
		if _, st := f.RunPermitPlugins(ctx, state, assumed, host); !st.IsSuccess() {
			f.RunReservePluginsUnreserve(ctx, state, assumed, host)
			_ = cache.ForgetPod(logger, assumed)
			continue
		}
		if st := f.RunPreBindPlugins(ctx, state, assumed, host); !st.IsSuccess() {
			f.RunReservePluginsUnreserve(ctx, state, assumed, host)
			_ = cache.ForgetPod(logger, assumed)
			continue
		}
		out.Scheduled++
	}
	out.Seconds = time.Since(start).Seconds()
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := func(r syscall.Rusage) float64 {
		return float64(r.Utime.Sec+r.Stime.Sec) + float64(r.Utime.Usec+r.Stime.Usec)/1e6
	}
	out.CPU = cpu(ru1) - cpu(ru0)
	return out
}

// numFeasibleNodesToFind is upstream's (schedule_one.go): all nodes below 100, else a percentage.
func numFeasibleNodesToFind(percentageOfNodesToScore *int32, numAllNodes int32) int32 {
	if numAllNodes < 100 {
		return numAllNodes
	}
	var percentage int32
	if percentageOfNodesToScore != nil {
		percentage = *percentageOfNodesToScore
	}
	if percentage == 0 {
		percentage = int32(50) - numAllNodes/125
		if percentage < 5 {
			percentage = 5
		}
	}
	numNodes := numAllNodes * percentage / 100
	if numNodes < 100 {
		return 100
	}
	return numNodes
}

// Version is what `oracle --version` prints (one JSON line): the k8s.io/kubernetes and
// k8s.io/kube-scheduler versions compiled in (from the build info, so go.mod is the only place that
// names them) and the protocol's revision. fastsched/testing/oracle.py reads it before it sends a
// scenario and refuses a binary that is not the one oracle/go.mod pins.
type Version struct {
	Kubernetes    string `json:"kubernetes"`
	KubeScheduler string `json:"kube_scheduler"`
	Go            string `json:"go"`
	// Protocol: 2 adds batch_hint and batch_hinted to the attempts (1: the v1.34 oracle, no --version);
	// 3 adds batch_signature and batch_flush; 4 answers "hints" scenarios (hints.go)
	Protocol int `json:"protocol"`
	// FeatureGates: the gates set on top of the defaults (--feature-gates, then the oracle's own)
	FeatureGates string `json:"feature_gates"`
}

func version(gates string) Version {
	v := Version{Go: goruntime.Version(), Protocol: 4, FeatureGates: gates}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			ver := d.Version
			if d.Replace != nil && d.Replace.Version != "" {
				ver = d.Replace.Version
			}
			switch d.Path {
			case "k8s.io/kubernetes":
				v.Kubernetes = ver
			case "k8s.io/kube-scheduler":
				v.KubeScheduler = ver
			}
		}
	}
	return v
}

// ownerGVR: the resource of each kind fastsched models (fastsched.api.SUPPORTED_KINDS) that can
// own a ResourceClaim, for the garbage collector's owner lookup in podDeletedClaims
// (clusterScopedOwner: the cluster-scoped ones, looked up without the claim's namespace). Each is
// the version the scenarios write (the tracker keeps an object under the resource of the version
// it was decoded from). Every such kind must be here: the API server serves them all, so the
// garbage collector's discovery resolves them and an owner of one that does not exist is dangling
// (fastsched's dra/controller.py _owner_absent looks every modelled kind up); a kind missing here
// was taken for one the API does not serve, never dangling, so a claim whose owner was, say, a
// deleted PodDisruptionBudget or PersistentVolume was kept here and deleted by fastsched.
var ownerGVR = map[string]schema.GroupVersionResource{
	"Pod":                   {Version: "v1", Resource: "pods"},
	"ReplicationController": {Version: "v1", Resource: "replicationcontrollers"},
	"Service":               {Version: "v1", Resource: "services"},
	"PersistentVolumeClaim": {Version: "v1", Resource: "persistentvolumeclaims"},
	"PersistentVolume":      {Version: "v1", Resource: "persistentvolumes"},
	"Node":                  {Version: "v1", Resource: "nodes"},
	"Namespace":             {Version: "v1", Resource: "namespaces"},
	"Deployment":            {Group: "apps", Version: "v1", Resource: "deployments"},
	"ReplicaSet":            {Group: "apps", Version: "v1", Resource: "replicasets"},
	"StatefulSet":           {Group: "apps", Version: "v1", Resource: "statefulsets"},
	"DaemonSet":             {Group: "apps", Version: "v1", Resource: "daemonsets"},
	"Job":                   {Group: "batch", Version: "v1", Resource: "jobs"},
	"CronJob":               {Group: "batch", Version: "v1", Resource: "cronjobs"},
	"PodDisruptionBudget":   {Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"},
	"PriorityClass":         {Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"},
	"RuntimeClass":          {Group: "node.k8s.io", Version: "v1", Resource: "runtimeclasses"},
	"StorageClass":          {Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"},
	"CSINode":               {Group: "storage.k8s.io", Version: "v1", Resource: "csinodes"},
	"CSIDriver":             {Group: "storage.k8s.io", Version: "v1", Resource: "csidrivers"},
	"CSIStorageCapacity":    {Group: "storage.k8s.io", Version: "v1", Resource: "csistoragecapacities"},
	"ResourceClaim":         {Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaims"},
	"ResourceClaimTemplate": {Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaimtemplates"},
	"ResourceSlice":         {Group: "resource.k8s.io", Version: "v1", Resource: "resourceslices"},
	"DeviceClass":           {Group: "resource.k8s.io", Version: "v1", Resource: "deviceclasses"},
	"DeviceTaintRule":       {Group: "resource.k8s.io", Version: "v1", Resource: "devicetaintrules"},
	"Workload":              {Group: "scheduling.k8s.io", Version: "v1beta1", Resource: "workloads"},
	"PodGroup":              {Group: "scheduling.k8s.io", Version: "v1beta1", Resource: "podgroups"},
	"CompositePodGroup":     {Group: "scheduling.k8s.io", Version: "v1alpha3", Resource: "compositepodgroups"},
}

// (fastsched.api.load._CLUSTER_SCOPED_KINDS)
var clusterScopedOwner = map[string]bool{"Node": true, "Namespace": true, "PersistentVolume": true,
	"PriorityClass": true, "RuntimeClass": true, "StorageClass": true, "CSINode": true, "CSIDriver": true,
	"ResourceSlice": true, "DeviceClass": true, "DeviceTaintRule": true}

func main() {
	printVersion := flag.Bool("version", false, "print the upstream versions compiled in (JSON) and exit")
	gates := flag.String("feature-gates", "", "feature gates to set on top of upstream's defaults (Gate=true,...)")
	flag.Parse()
	// Preemption deletes its victims before PostFilter returns, so that they can be reported;
	// unless the gates given set it (the class "hints" compares the registrations at v1.37's
	// defaults, where DefaultPreemption registers AssignedPod/Delete only with it on)
	all := "SchedulerAsyncPreemption=false"
	if strings.Contains(*gates, "SchedulerAsyncPreemption=") {
		all = *gates
	} else if *gates != "" {
		all = *gates + "," + all
	}
	if err := utilfeature.DefaultMutableFeatureGate.Set(all); err != nil {
		fmt.Fprintln(os.Stderr, "oracle:", err)
		os.Exit(2)
	}
	if *printVersion {
		_ = json.NewEncoder(os.Stdout).Encode(version(all))
		return
	}
	metrics.Register()
	klog.SetOutput(os.Stderr)
	klog.LogToStderr(false)
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			var sc Scenario
			var ans Answer
			if jerr := json.Unmarshal(line, &sc); jerr != nil {
				ans = Answer{Error: "input: " + jerr.Error()}
			} else {
				ans = run(&sc)
			}
			if ans.Attempts == nil {
				ans.Attempts = []Attempt{}
			}
			_ = enc.Encode(ans)
			out.Flush()
		}
		if err != nil {
			break
		}
	}
}

// groupMember is what attemptIn hands back for one member of a pod group's cycle.
type groupMember struct {
	podGroupState *framework.CycleState
	// placementState: the placement the member is tried in (CompositePodGroup's cycle; nil: none set)
	placementState *framework.CycleState
	state          *framework.CycleState
	fitErr         *framework.FitError
}

// GroupAnswer is the outcome of one pod group's scheduling cycle (GenericWorkload): the members'
// attempts are in Answer.Attempts as any pod's, in the order the cycle tried them.
type GroupAnswer struct {
	Group string `json:"group"` // namespace/name
	// Gated: the PreEnqueue status of the first gated member ("" = none): the group waits, no cycle
	Gated *statusJSON `json:"gated,omitempty"`
	// Status: the group algorithm's status after PodGroupPostFilter (code, reasons, error text first)
	Status *statusJSON `json:"status,omitempty"`
	// Messages: each member's failure message as the failure handler gets it ("" = bound)
	Messages map[string]string `json:"messages"`
	// Bound: the members bound, to their nodes
	Bound map[string]string `json:"bound"`
	// Condition: PodGroupInitiallyScheduled as updatePodGroupCondition writes it (status, reason, message)
	Condition []string `json:"condition,omitempty"`
	// Nominated: the node PodGroupPostFilter (workload-aware preemption) nominated, per member
	Nominated map[string]string `json:"nominated,omitempty"`
	// Victims: the pods preemption deleted during the group's cycle (namespace/name, sorted)
	Victims []string `json:"victims,omitempty"`
	// TopologyAwareWorkloadScheduling, per run ("1" the cycle, "2"... PodGroupPostFilter's reruns):
	// Placements, the generated placements' names in the generator's (Go map) order; Placement,
	// the placement whose result the run kept (the best, or the first evaluated when none fit);
	// PlacementBest, the placements tied for the best score when several fit
	Placements    map[string][]string `json:"placements,omitempty"`
	Placement     map[string]string   `json:"placement,omitempty"`
	PlacementBest map[string][]string `json:"placement_best,omitempty"`
	// Conditions: a CompositePodGroup tree's PodGroupInitiallyScheduled per leaf ("namespace/name")
	Conditions map[string][]string `json:"conditions,omitempty"`
}

// proposedAssignment is upstream's algorithmResult as a fwk.ProposedAssignment (the rerun of the
// group's algorithm inside PodGroupPostFilter).
type proposedAssignment struct {
	pod   *v1.Pod
	pi    fwk.PodInfo
	node  string
	state fwk.CycleState
}

func (p *proposedAssignment) GetPod() *v1.Pod               { return p.pod }
func (p *proposedAssignment) GetPodInfo() fwk.PodInfo       { return p.pi }
func (p *proposedAssignment) GetNodeName() string           { return p.node }
func (p *proposedAssignment) GetCycleState() fwk.CycleState { return p.state }

var errPodGroupUnschedulable = fmt.Errorf("pod group is unschedulable")

// groupAttempt retells scheduleOnePodGroup (schedule_one_podgroup.go) with CompositePodGroup off
// (TopologyAwareWorkloadScheduling: the placement algorithm, see runPlacements): validatePodGroup,
// the default algorithm (PlacementFeasible
// from the captured GangScheduling plugin before and after each member; each member through the
// retold cycle with PostFilter skipped, assumed in the snapshot and reserved; everything
// reverted), PodGroupPostFilter, then submitPodGroupAlgorithmResult's member statuses, condition and
// bindings (a successful group's scheduled members are bound: Permit's wait ends within the cycle).
func groupAttempt(ctx context.Context, prof *profileFw, snapshot *internalcache.Snapshot,
	pg *schedulingv1beta1.PodGroup, members []*v1.Pod, replay, rerunReplay map[string]string, order map[string]int,
	cycle int64, sc *Scenario, syncClaims func()) (ans GroupAnswer, attempts []Attempt, bound []*v1.Pod) {
	logger := klog.FromContext(ctx)
	ans.Group = pg.Namespace + "/" + pg.Name
	ans.Messages, ans.Bound = map[string]string{}, map[string]string{}
	f := prof.fw
	gs, _ := prof.plugins["GangScheduling"]
	for _, pod := range members {
		if pe, ok := gs.(fwk.PreEnqueuePlugin); ok {
			if st := pe.PreEnqueue(ctx, pod); !st.IsSuccess() {
				ans.Gated = toStatus(st.WithPlugin(pe.Name()))
				return
			}
		}
	}
	condition := func(status, reason, message string) {
		ans.Condition = []string{status, reason, message}
	}
	// validatePodGroup: with PodGroupPreemptionPolicy every pod's policy is the PodGroup's
	// (podGroupPreemptionPolicy: unset is PreemptLowerPriority), without it the first pod's
	pgPriority := int32(0)
	if pg.Spec.Priority != nil {
		pgPriority = *pg.Spec.Priority
	}
	policyGate := utilfeature.DefaultFeatureGate.Enabled(features.PodGroupPreemptionPolicy)
	schedulerName, policy := members[0].Spec.SchedulerName, ""
	if policyGate {
		policy = string(v1.PreemptLowerPriority)
		if pg.Spec.PreemptionPolicy != nil {
			policy = string(*pg.Spec.PreemptionPolicy)
		}
	}
	validate := func(pod *v1.Pod) error {
		if pod.Spec.SchedulerName != schedulerName {
			return fmt.Errorf("all pods in a single pod group should have the same .spec.schedulerName set, got: %q and %q", pod.Spec.SchedulerName, schedulerName)
		}
		prio := int32(0)
		if pod.Spec.Priority != nil {
			prio = *pod.Spec.Priority
		}
		if prio != pgPriority {
			return fmt.Errorf("all pods in a single pod group should have the same priority as the pod group's priority, got %d and %d", prio, pgPriority)
		}
		p := string(v1.PreemptLowerPriority)
		if pod.Spec.PreemptionPolicy != nil {
			p = string(*pod.Spec.PreemptionPolicy)
		}
		if policyGate {
			if p != policy {
				return fmt.Errorf("all pods in a single pod group should have the same preemption policy as the pod group's preemption policy, got %v and %v", p, policy)
			}
		} else if policy == "" {
			policy = p
		} else if p != policy {
			return fmt.Errorf("all pods in a single pod group should have the same preemption policy, got %v and %v", p, policy)
		}
		return nil
	}
	var verr error
	for _, pod := range members {
		if verr = validate(pod); verr != nil {
			break
		}
	}
	if verr == nil {
		if state, err := snapshot.PodGroupStates().Get(pg.Namespace, pg.Name); err != nil {
			verr = fmt.Errorf("failed to get pod group state: %w", err)
		} else {
			for _, pod := range state.ScheduledPods() {
				if verr = validate(pod); verr != nil {
					break
				}
			}
		}
	}
	if verr != nil {
		for _, pod := range members {
			ans.Messages[key(pod)] = verr.Error()
		}
		ans.Status = toStatus(fwk.AsStatus(verr))
		condition("False", "SchedulerError", verr.Error())
		return
	}

	pgInfo := &framework.PodGroupInfo{Namespace: pg.Namespace, Name: pg.Name, Type: fwk.PodGroupKeyType,
		PodGroup: pg, UnscheduledPods: members}
	type podResult struct {
		status *fwk.Status
		host   string
		state  *framework.CycleState
		pod    *v1.Pod
	}
	// runDefault is podGroupSchedulingDefaultAlgorithm in placementState (over groupState, in the
	// snapshot's current placement), every assumption reverted before it returns; replayOf: the
	// node fastsched chose for a member (its tie).
	type runResult struct {
		status         *fwk.Status
		results        []podResult
		anyScheduled   bool
		attempts       []Attempt
		placementState *framework.CycleState
	}
	runDefault := func(placementState, groupState *framework.CycleState, replayOf func(string) string) (r runResult) {
		r.placementState = placementState
		feasible := func(progress framework.PlacementProgress) *fwk.Status {
			pl, ok := gs.(framework.PlacementFeasiblePlugin)
			if !ok {
				return nil
			}
			st := pl.PlacementFeasible(ctx, placementState, pgInfo, progress)
			switch {
			case st.IsSuccess():
				return nil
			case st.Code() == fwk.Wait, st.Code() == fwk.Unschedulable:
				return st.WithPlugin(pl.Name())
			case st.IsError():
				return fwk.AsStatus(fmt.Errorf("running PlacementFeasible plugin: %w", st.AsError())).WithPlugin(pl.Name())
			}
			return fwk.AsStatus(fmt.Errorf("unexpected status from PlacementFeasible plugin: %v", st.Code())).WithPlugin(pl.Name())
		}
		results := []podResult{}
		var reverts []func()
		state, _ := snapshot.PodGroupStates().Get(pg.Namespace, pg.Name)
		progress := framework.PlacementProgress{Remaining: len(members), Scheduled: state.ScheduledPodsCount()}
		status := fwk.NewStatus(fwk.Unschedulable).WithError(errPodGroupUnschedulable)
		anyScheduled := false
		st := feasible(progress)
		status = st
		switch {
		case st.IsError():
			status = fwk.AsStatus(fmt.Errorf("failed to evaluate placement feasibility: %w", st.AsError()))
		case st.Code() == fwk.Unschedulable:
			status = fwk.NewStatus(fwk.Unschedulable, st.Reasons()...).WithError(errPodGroupUnschedulable)
		default:
			for _, pod := range members {
				gm := &groupMember{podGroupState: groupState}
				at := attemptIn(ctx, prof, snapshot, pod, replayOf(key(pod)), order, cycle, gm)
				r.attempts = append(r.attempts, at)
				var pst *fwk.Status
				switch {
				case at.Error != "":
					pst = fwk.AsStatus(fmt.Errorf("%s", at.Error))
				case at.Selected == "":
					if gm.fitErr != nil {
						pst = fwk.NewStatus(fwk.Unschedulable).WithError(gm.fitErr)
					} else {
						pst = fwk.NewStatus(fwk.UnschedulableAndUnresolvable).WithError(fmt.Errorf("%s", at.FitError))
					}
				default:
					assumed := pod.DeepCopy()
					assumed.Spec.NodeName = at.Selected
					if utilfeature.DefaultFeatureGate.Enabled(features.DRANodeAllocatableResources) {
						// schedule_one.go: assume (from assumeAndReserve, the pod group cycle's too)
						// copies the member's node-allocatable claim statuses into the assumed pod
						// before the snapshot counts it
						assumed.Status.NodeAllocatableResourceClaimStatuses = dynamicresources.ExtractPodNodeAllocatableResourceClaimStatus(logger, gm.state, at.Selected)
					}
					pi, _ := framework.NewPodInfo(assumed)
					if err := snapshot.AssumePod(pi); err != nil {
						pst = fwk.AsStatus(err)
						break
					}
					if rs := f.RunReservePluginsReserve(ctx, gm.state, assumed, at.Selected); !rs.IsSuccess() {
						f.RunReservePluginsUnreserve(ctx, gm.state, assumed, at.Selected)
						_ = snapshot.ForgetPod(logger, assumed)
						pst = rs
						break
					}
					host, s := at.Selected, gm.state
					reverts = append(reverts, func() {
						f.RunReservePluginsUnreserve(ctx, s, assumed, host)
						_ = snapshot.ForgetPod(logger, assumed)
					})
				}
				results = append(results, podResult{status: pst, host: at.Selected, state: gm.state, pod: pod})
				if !pst.IsSuccess() && !pst.IsRejected() {
					status = fwk.AsStatus(fmt.Errorf("failed to schedule other pod from a pod group: %w", pst.AsError()))
					break
				}
				progress.Remaining--
				if pst.IsSuccess() {
					progress.Scheduled++
				}
				st := feasible(progress)
				if st.IsError() {
					status = fwk.AsStatus(fmt.Errorf("failed to evaluate placement feasibility: %w", st.AsError()))
					break
				}
				status = st
				if st.Code() == fwk.Unschedulable {
					break
				}
				anyScheduled = anyScheduled || pst.IsSuccess()
			}
			if status.IsWait() {
				status = fwk.NewStatus(fwk.Unschedulable, status.Reasons()...).WithError(errPodGroupUnschedulable)
			}
		}
		for i := len(reverts) - 1; i >= 0; i-- {
			reverts[i]()
		}
		if !status.IsSuccess() {
			anyScheduled = false
		}
		r.status, r.results, r.anyScheduled = status, results, anyScheduled
		return r
	}
	// runPlacements is podGroupSchedulingPlacementAlgorithm (TopologyAwareWorkloadScheduling,
	// CompositePodGroup off): the PlacementGenerate plugin's placements of the current one's nodes;
	// in each, assumed in the snapshot, the default algorithm (its assumptions reverted); an Error
	// ends it; none fitting: "0/N placements are available, first placement status: ..." with the
	// first one's results; several fitting: RunPlacementScorePlugins, the highest total (a tie is
	// random upstream: fastsched's pick when it is among the tied).
	//
	// Upstream evaluates the placements in the generator's order, which for TopologyPlacement is
	// Go's map iteration order over the domains: random per call, and any domain can come first
	// (the iteration starts at a random slot). Each placement's run depends on the snapshot alone
	// here (every node is evaluated: the clusters are small; batching is dormant in the default
	// profile; each run's assumptions are reverted before the next), so only which placement comes
	// first matters (for the failure's message and results). The oracle evaluates them in the order
	// fastsched did (PlacementOrder, when it names the same placements), an order upstream can take;
	// the generator's own order is reported in Placements.
	runPlacements := func(groupState *framework.CycleState, run string) runResult {
		gk := ans.Group + "|" + run
		allNodes, _ := snapshot.ListNodesInPlacement()
		placements, st := f.RunPlacementGeneratePlugins(ctx, groupState, pgInfo, allNodes)
		if !st.IsSuccess() {
			return runResult{status: st}
		}
		names := make([]string, 0, len(placements))
		byName := map[string]*fwk.Placement{}
		for _, p := range placements {
			names = append(names, p.Name)
			byName[p.Name] = p
		}
		if ans.Placements == nil {
			ans.Placements, ans.Placement = map[string][]string{}, map[string]string{}
		}
		ans.Placements[run] = names
		if want := sc.PlacementOrder[gk]; len(want) == len(placements) {
			ordered := make([]*fwk.Placement, 0, len(want))
			for _, n := range want {
				if p, ok := byName[n]; ok {
					ordered = append(ordered, p)
				}
			}
			if len(ordered) == len(placements) {
				placements = ordered
			}
		}
		parent := snapshot.GetPlacement()
		defer func() {
			snapshot.ForgetPlacement()
			_ = snapshot.AssumePlacement(parent)
		}()
		var first *runResult
		firstName := ""
		var fit []runResult
		var fitPlacements []*fwk.Placement
		for _, p := range placements {
			if err := snapshot.AssumePlacement(p); err != nil {
				return runResult{status: fwk.AsStatus(fmt.Errorf("failed to assume pod group placement: %w", err))}
			}
			ps := framework.NewCycleState()
			ps.SetPodGroupSchedulingCycle(groupState)
			name := p.Name
			r := runDefault(ps, groupState, func(k string) string { return sc.ReplayTAS[gk+"|"+name+"|"+k] })
			if r.status.IsError() {
				ans.Placement[run] = name
				return r
			}
			if first == nil {
				rr := r
				first, firstName = &rr, name
			}
			if r.status.IsSuccess() {
				fit = append(fit, r)
				fitPlacements = append(fitPlacements, p)
			}
		}
		if len(fit) == 0 {
			first.status = fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("0/%d placements are available, first placement status: %v",
				len(placements), first.status.AsError())).WithError(errPodGroupUnschedulable)
			ans.Placement[run] = firstName
			return *first
		}
		if len(fit) == 1 {
			ans.Placement[run] = fitPlacements[0].Name
			return fit[0]
		}
		assignments := make([]*fwk.PodGroupAssignments, 0, len(fit))
		states := make([]fwk.PlacementCycleState, 0, len(fit))
		for i, r := range fit {
			proposed := make([]fwk.ProposedAssignment, 0)
			for _, pr := range r.results {
				if pr.status.IsSuccess() && pr.host != "" {
					pi, _ := framework.NewPodInfo(pr.pod)
					proposed = append(proposed, &proposedAssignment{pod: pr.pod, pi: pi, node: pr.host, state: pr.state})
				}
			}
			assignments = append(assignments, &fwk.PodGroupAssignments{Placement: fitPlacements[i], ProposedAssignments: proposed})
			states = append(states, r.placementState)
		}
		scores, st := f.RunPlacementScorePlugins(ctx, groupState, pgInfo, assignments, states)
		if !st.IsSuccess() {
			return runResult{status: st}
		}
		best := scores[0].TotalScore
		for _, score := range scores[1:] {
			if score.TotalScore > best {
				best = score.TotalScore
			}
		}
		var tied []string
		pick := -1
		for i, score := range scores {
			if score.TotalScore != best {
				continue
			}
			tied = append(tied, score.Placement.Name)
			if pick < 0 || score.Placement.Name == sc.PlacementPick[gk] {
				pick = i
			}
		}
		if ans.PlacementBest == nil {
			ans.PlacementBest = map[string][]string{}
		}
		ans.PlacementBest[run] = tied
		ans.Placement[run] = scores[pick].Placement.Name
		for i, p := range fitPlacements {
			if p == scores[pick].Placement {
				return fit[i]
			}
		}
		return runResult{status: fwk.AsStatus(fmt.Errorf("best placement not found"))}
	}
	// runAlgorithm is runRootSchedulingAlgorithm: the placement algorithm with
	// TopologyAwareWorkloadScheduling, else the default one in a fresh placement state over
	// groupState; everything assumed is reverted; record: the members' attempts (of the placement
	// kept) are the answer's (the first run; the reruns inside PodGroupPostFilter replay rerunReplay).
	runs := 0
	tas := utilfeature.DefaultFeatureGate.Enabled(features.TopologyAwareWorkloadScheduling)
	runAlgorithm := func(groupState *framework.CycleState, replay map[string]string, record bool) (*fwk.Status, []podResult) {
		runs++
		var r runResult
		if tas {
			r = runPlacements(groupState, fmt.Sprint(runs))
		} else {
			placementState := framework.NewCycleState()
			placementState.SetPodGroupSchedulingCycle(groupState)
			r = runDefault(placementState, groupState, func(k string) string { return replay[k] })
		}
		if record {
			attempts = append(attempts, r.attempts...)
		}
		status := r.status
		if status.IsSuccess() && !r.anyScheduled {
			status = fwk.NewStatus(fwk.Unschedulable).WithError(errPodGroupUnschedulable)
		}
		return status, r.results
	}
	groupState := framework.NewCycleState()
	status, results := runAlgorithm(groupState, replay, true)
	rootStatus := status
	for len(results) < len(members) { // completePodGroupAlgorithmResult
		results = append(results, podResult{status: status.Clone(), pod: members[len(results)]})
	}
	waitingOnPreemption := false
	nominating := map[string]string{} // member -> the node PodGroupPostFilter nominated
	if rootStatus.Code() == fwk.Unschedulable {
		pfResult, pst := f.RunPodGroupPostFilterPlugins(ctx, groupState, pgInfo, func(ctx context.Context) (*fwk.PodGroupAssignments, *fwk.Status) {
			// the claims DynamicResources' PodGroupPostFilter (before DefaultPreemption) deallocated or
			// unreserved reach the DRA manager before the rerun, as fastsched's writes are seen at
			// once (upstream: the informer's event races with the rerun; without this wait the oracle
			// would answer either way)
			syncClaims()
			st, again := runAlgorithm(framework.NewCycleState(), rerunReplay, false)
			proposed := make([]fwk.ProposedAssignment, 0)
			for _, r := range again {
				if r.status.IsSuccess() && r.host != "" {
					pi, _ := framework.NewPodInfo(r.pod)
					proposed = append(proposed, &proposedAssignment{pod: r.pod, pi: pi, node: r.host, state: r.state})
				}
			}
			return &fwk.PodGroupAssignments{ProposedAssignments: proposed}, st
		})
		// applyPodGroupPostFilterResult
		if pst.IsSuccess() {
			waitingOnPreemption = true
			if pfResult != nil {
				for _, pod := range members {
					if ni, ok := pfResult.NominatingInfos[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}]; ok && ni != nil {
						nominating[key(pod)] = ni.NominatedNodeName
					}
				}
			}
		}
		if pst.IsError() {
			status = pst
		} else {
			status.AppendReason(pst.String())
		}
	}
	ans.Status = toStatus(status)
	if ans.Status == nil {
		ans.Status = &statusJSON{Code: status.Code().String(), Reasons: []string{}}
	}
	// the binding cycles of the scheduled members (prepareForBindingCycle and runBindingCycle:
	// the member's own cycle state, out of the group's cycle, through Reserve and PreBind --
	// volumes bound, claims allocated: the member's attempt reports them; Permit
	// (GangScheduling) lets the group through), in sc.BindOrder's order
	bindings := map[string]*Attempt{}
	if status.IsSuccess() {
		index := map[string]int{}
		for i, pod := range members {
			index[key(pod)] = i
		}
		var ordered []int
		named := map[int]bool{}
		for _, k := range sc.BindOrder[ans.Group] {
			if i, ok := index[k]; ok && !named[i] {
				ordered, named[i] = append(ordered, i), true
			}
		}
		for i := range members {
			if !named[i] {
				ordered = append(ordered, i)
			}
		}
		for _, i := range ordered {
			pod, res := members[i], results[i]
			if !res.status.IsSuccess() {
				continue
			}
			res.state.SetPodGroupSchedulingCycle(nil)
			at := &Attempt{Selected: res.host}
			bindVolumes(ctx, prof, res.state, pod, at)
			bindings[key(pod)] = at
		}
	}
	for i, pod := range members {
		res := results[i]
		switch {
		case status.IsError():
			if res.status.IsError() {
				ans.Messages[key(pod)] = res.status.Message()
			} else {
				ans.Messages[key(pod)] = status.Message()
			}
		case res.status.IsSuccess() && status.IsSuccess():
			at := bindings[key(pod)] // (bound above)
			for k := range attempts {
				if attempts[k].Pod == key(pod) {
					attempts[k].VolumeBindings, attempts[k].ClaimAllocations = at.VolumeBindings, at.ClaimAllocations
					attempts[k].NodeAllocatable = at.NodeAllocatable
				}
			}
			if at.Selected == "" {
				// the member's binding failed: its message is the status' (handleBindingCycleError),
				// without the attempt's "prebind: " label
				ans.Messages[key(pod)] = strings.TrimPrefix(at.Error, "prebind: ")
				continue
			}
			b := pod.DeepCopy()
			b.Spec.NodeName = res.host
			b.Status.Phase = v1.PodRunning
			b.Status.NodeAllocatableResourceClaimStatuses = at.nodeAllocatableStatuses
			ans.Bound[key(pod)] = res.host
			bound = append(bound, b)
		case res.status.IsSuccess() && status.IsRejected() && waitingOnPreemption:
			ans.Messages[key(pod)] = status.Message()
		case res.status.IsSuccess() && status.IsRejected():
			ans.Messages[key(pod)] = fwk.NewStatus(fwk.Unschedulable, status.Message()).WithError(errPodGroupUnschedulable).Message()
		case res.status.IsSuccess():
			ans.Messages[key(pod)] = fmt.Sprintf("received unexpected pod group scheduling algorithm status code: %s", status.Code())
		default:
			ans.Messages[key(pod)] = res.status.Message()
		}
	}
	if !status.IsError() && len(nominating) > 0 {
		// the failure handler's nominations: a waiting member keeps PodGroupPostFilter's node; a
		// member that failed on its own keeps its result's (none in a group's cycle)
		ans.Nominated = map[string]string{}
		for _, pod := range members {
			if n, ok := nominating[key(pod)]; ok && n != "" && ans.Bound[key(pod)] == "" {
				ans.Nominated[key(pod)] = n
			}
		}
	}
	switch {
	case status.IsSuccess():
		condition("True", "Scheduled", status.Message())
	case status.IsRejected():
		condition("False", "Unschedulable", status.Message())
	default:
		condition("False", "SchedulerError", status.AsError().Error())
	}
	return
}

// allocationResultText is one device of a claim's allocation as compared: "pool/device", then for
// a share of a device allowing multiple allocations (DRAConsumableCapacity) "[share]" -- the
// shareID itself is a random UUID (uuid.NewUUID), so only its presence is compared -- and the
// consumed capacity "{name=quantity;...}" by name, quantities as Quantity.String(), then the
// operations the node skips "<skip:op,...>" (DRAOptionalNodeOperations), in the slice's order.
func allocationResultText(r resourceapi.DeviceRequestAllocationResult) string {
	text := r.Pool + "/" + r.Device
	if r.ShareID != nil {
		text += "[share]"
	}
	if len(r.ConsumedCapacity) > 0 {
		names := make([]string, 0, len(r.ConsumedCapacity))
		for name := range r.ConsumedCapacity {
			names = append(names, string(name))
		}
		sort.Strings(names)
		parts := make([]string, 0, len(names))
		for _, name := range names {
			q := r.ConsumedCapacity[resourceapi.QualifiedName(name)]
			parts = append(parts, name+"="+q.String())
		}
		text += "{" + strings.Join(parts, ";") + "}"
	}
	// DRAOptionalNodeOperations: the slice's skipNodeOperations copied into the result
	if len(r.SkipNodeOperations) > 0 {
		ops := make([]string, 0, len(r.SkipNodeOperations))
		for _, op := range r.SkipNodeOperations {
			ops = append(ops, string(op))
		}
		text += "<skip:" + strings.Join(ops, ",") + ">"
	}
	return text
}

// snapshotIndex: where ni is in list (the snapshot's node order); len(list) when absent.
func snapshotIndex(list []fwk.NodeInfo, ni fwk.NodeInfo) int {
	for i, x := range list {
		if x.Node().Name == ni.Node().Name {
			return i
		}
	}
	return len(list)
}
