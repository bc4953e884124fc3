// The "hints" scenarios: upstream's queueing hints, asked directly (fastsched's class `hints`,
// fastsched/testing/oracle_hints.py).
//
// A scenario with "hints" schedules nothing. Its cluster (nodes, pods, objects, incoming pods) is
// the cluster as the informers hold it once a change happened (the new object stored, a deleted
// one gone: upstream's event handlers run after the informer's store is updated), and each case
// is that change: an object kind, add/update/delete, the old and the new object, and the pod a
// plugin rejected. The answer gives, per plugin of the first profile, what its EventsToRegister
// returns (the queueing hint map as scheduler.New's buildQueueingHintMap builds it), and per case
// the cluster events the change is (the event handlers' classification:
// NodeSchedulingPropertiesChange, PodSchedulingPropertiesChange, eventhandlers.go) and, for each
// event, every plugin registration that matches it (MatchClusterEvents) with the answer of its
// QueueingHintFn for the pod (isPodWorthRequeuing asks the matching registrations of the pod's
// rejector plugins; here every plugin is asked, as if all had rejected the pod).
package main

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/plugin/pkg/admission/runtimeclass"
)

// HintCase is one change asked about (Scenario.Hints).
type HintCase struct {
	// Pod: the rejected pod (a manifest, admitted as an incoming pod is); with Target, ignored
	// (the rejected pod is the updated pod itself, New)
	Pod json.RawMessage `json:"pod"`
	// Kind: the changed object's kind (Node, Pod, PersistentVolumeClaim, ResourceClaim, ...)
	Kind string `json:"kind"`
	// Op: add, update or delete
	Op  string          `json:"op"`
	Old json.RawMessage `json:"old"`
	New json.RawMessage `json:"new"`
	// Target: a pod update of the rejected (unscheduled) pod itself (PriorityQueue.Update:
	// PodSchedulingPropertiesChange with isTargetPod)
	Target bool `json:"target"`
}

// RegisteredEvent is one entry of a plugin's EventsToRegister.
type RegisteredEvent struct {
	Plugin   string `json:"plugin"`
	Resource string `json:"resource"`
	// Action: the ActionType bits (the same values as fastsched's ActionType)
	Action int64 `json:"action"`
	// Hint: the registration has a QueueingHintFn (nil: defaultQueueingHintFn, always Queue)
	Hint bool `json:"hint"`
}

// HintResult: one matching registration's answer.
type HintResult struct {
	Event    string `json:"event"` // the incoming event's label (resource + action)
	Plugin   string `json:"plugin"`
	Resource string `json:"resource"` // the registration's resource and action bits
	Action   int64  `json:"action"`
	// Hint: Queue or QueueSkip ("Queue" too for a registration without a function)
	Hint  string `json:"hint"`
	Error string `json:"error,omitempty"`
}

// HintAnswer is the answer to one case.
type HintAnswer struct {
	// Events: the cluster events the change is, as "<resource>/<action bits>"
	Events []string     `json:"events"`
	Hints  []HintResult `json:"hints"`
	Error  string       `json:"error,omitempty"`
}

var kindResource = map[string]fwk.EventResource{
	"Node":                  fwk.Node,
	"PersistentVolume":      fwk.PersistentVolume,
	"PersistentVolumeClaim": fwk.PersistentVolumeClaim,
	"CSINode":               fwk.CSINode,
	"CSIDriver":             fwk.CSIDriver,
	"VolumeAttachment":      fwk.VolumeAttachment,
	"CSIStorageCapacity":    fwk.CSIStorageCapacity,
	"StorageClass":          fwk.StorageClass,
	"ResourceClaim":         fwk.ResourceClaim,
	"ResourceSlice":         fwk.ResourceSlice,
	"DeviceClass":           fwk.DeviceClass,
	"PodGroup":              fwk.PodGroup,
	"CompositePodGroup":     fwk.CompositePodGroup,
}

func eventText(e fwk.ClusterEvent) string {
	return fmt.Sprintf("%s/%d", e.Resource, int64(e.ActionType))
}

// registered: the first profile's queueing hint registrations, plugin by plugin in the
// framework's EnqueueExtensions order, each as EventsToRegister gives it (a Pod registration is
// kept as Pod: buildQueueingHintMap's UnrollPodEvent only spreads it over the three pod resources,
// which MatchClusterEvents' Pod rule does as well).
func registered(ctx context.Context, f framework.Framework) ([]RegisteredEvent, map[string][]fwk.ClusterEventWithHint, error) {
	var out []RegisteredEvent
	byPlugin := map[string][]fwk.ClusterEventWithHint{}
	for _, e := range f.EnqueueExtensions() {
		events, err := e.EventsToRegister(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("EventsToRegister of %s: %w", e.Name(), err)
		}
		byPlugin[e.Name()] = events
		for _, ev := range events {
			out = append(out, RegisteredEvent{Plugin: e.Name(), Resource: string(ev.Event.Resource),
				Action: int64(ev.Event.ActionType), Hint: ev.QueueingHintFn != nil})
		}
	}
	return out, byPlugin, nil
}

// hintObject: a case's old or new object as the informers deliver it (nil interface when absent,
// so that util.As sees no object rather than a typed nil)
func hintObject(raw json.RawMessage, kind string, classes map[string]*schedulingv1.PriorityClass,
	runtimeClasses *runtimeclass.RuntimeClass) (interface{}, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if kind == "Pod" {
		return decodePod(raw, classes, runtimeClasses)
	}
	var o runtime.Object
	o, err := decode(raw)
	if err != nil {
		return nil, err
	}
	return o, nil
}

// caseEvents: the cluster events a change is, as upstream's event handlers classify it
// (eventhandlers.go: addNodeToCache, updateNodeInCache, deleteNodeFromCache, addPodToCache,
// updatePodInCache, deletePodFromCache, the unscheduled pods' handlers, PriorityQueue.Update for the
// pod itself, and the generic handlers of the other resources: <resource>/Add|Update|Delete)
func caseEvents(c HintCase, oldObj, newObj interface{}) ([]fwk.ClusterEvent, error) {
	action := map[string]fwk.ActionType{"add": fwk.Add, "update": fwk.Update, "delete": fwk.Delete}[c.Op]
	if action == fwk.None {
		return nil, fmt.Errorf("op %q: want add, update or delete", c.Op)
	}
	switch c.Kind {
	case "Node":
		if c.Op == "update" {
			return framework.NodeSchedulingPropertiesChange(newObj.(*v1.Node), oldObj.(*v1.Node)), nil
		}
		return []fwk.ClusterEvent{{Resource: fwk.Node, ActionType: action}}, nil
	case "Pod":
		var p *v1.Pod
		if newObj != nil {
			p = newObj.(*v1.Pod)
		} else {
			p = oldObj.(*v1.Pod)
		}
		if c.Op == "update" {
			return framework.PodSchedulingPropertiesChange(newObj.(*v1.Pod), oldObj.(*v1.Pod), c.Target), nil
		}
		r := fwk.UnscheduledPod
		if p.Spec.NodeName != "" {
			r = fwk.AssignedPod
		}
		return []fwk.ClusterEvent{{Resource: r, ActionType: action}}, nil
	}
	r, ok := kindResource[c.Kind]
	if !ok {
		return nil, fmt.Errorf("kind %q: no cluster event resource", c.Kind)
	}
	return []fwk.ClusterEvent{{Resource: r, ActionType: action}}, nil
}

// answerHints answers a "hints" scenario on the first profile's framework.
func answerHints(ctx context.Context, f framework.Framework, cases []HintCase,
	classes map[string]*schedulingv1.PriorityClass, runtimeClasses *runtimeclass.RuntimeClass) ([]RegisteredEvent, []HintAnswer, error) {
	logger := klog.FromContext(ctx)
	regs, byPlugin, err := registered(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	var plugins []string
	for _, e := range f.EnqueueExtensions() {
		plugins = append(plugins, e.Name())
	}
	answers := make([]HintAnswer, 0, len(cases))
	for _, c := range cases {
		var a HintAnswer
		oldObj, err := hintObject(c.Old, c.Kind, classes, runtimeClasses)
		if err == nil {
			var newObj interface{}
			newObj, err = hintObject(c.New, c.Kind, classes, runtimeClasses)
			if err == nil {
				a, err = answerCase(logger, c, oldObj, newObj, plugins, byPlugin, classes, runtimeClasses)
			}
		}
		if err != nil {
			a = HintAnswer{Error: err.Error()}
		}
		if a.Events == nil {
			a.Events = []string{}
		}
		if a.Hints == nil {
			a.Hints = []HintResult{}
		}
		answers = append(answers, a)
	}
	return regs, answers, nil
}

func answerCase(logger klog.Logger, c HintCase, oldObj, newObj interface{}, plugins []string,
	byPlugin map[string][]fwk.ClusterEventWithHint, classes map[string]*schedulingv1.PriorityClass,
	runtimeClasses *runtimeclass.RuntimeClass) (a HintAnswer, err error) {
	var pod *v1.Pod
	if c.Target {
		pod, _ = newObj.(*v1.Pod)
		if pod == nil {
			return a, fmt.Errorf("a target pod update needs the new pod")
		}
	} else if pod, err = decodePod(c.Pod, classes, runtimeClasses); err != nil {
		return a, fmt.Errorf("pod: %w", err)
	}
	events, err := caseEvents(c, oldObj, newObj)
	if err != nil {
		return a, err
	}
	for _, ev := range events {
		a.Events = append(a.Events, eventText(ev))
		for _, name := range plugins {
			for _, reg := range byPlugin[name] {
				if !framework.MatchClusterEvents(reg.Event, ev) {
					continue
				}
				r := HintResult{Event: eventText(ev), Plugin: name, Resource: string(reg.Event.Resource),
					Action: int64(reg.Event.ActionType), Hint: "Queue"}
				if reg.QueueingHintFn != nil {
					h, herr := callHint(reg.QueueingHintFn, logger, pod, oldObj, newObj)
					if herr != nil {
						r.Error = herr.Error()
					}
					if h == fwk.QueueSkip {
						r.Hint = "QueueSkip"
					}
				}
				a.Hints = append(a.Hints, r)
			}
		}
	}
	return a, nil
}

// callHint runs a QueueingHintFn, a panic reported as an error (the queue would crash: here it is
// a difference to look at)
func callHint(fn fwk.QueueingHintFn, logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (h fwk.QueueingHint, err error) {
	defer func() {
		if r := recover(); r != nil {
			h, err = fwk.Queue, fmt.Errorf("panic: %v", r)
		}
	}()
	return fn(logger, pod, oldObj, newObj)
}
