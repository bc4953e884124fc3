package main

// The group cycle of a CompositePodGroup tree (CompositePodGroup on, which needs
// TopologyAwareWorkloadScheduling): schedule_one_podgroup.go's composite paths retold on the
// captured plugins, as groupAttempt retells the flat one. The members of every leaf of one root
// CompositePodGroup that follow each other among the incoming pods get one cycle.
//
// Upstream's order-dependent choices are fastsched's (the scenario's replays, keyed
// "<root>|<run>|<n>": run 1 the cycle, 2... the reruns inside PodGroupPostFilter; n counts the
// member attempts (ReplayComposite), the PlacementGenerate calls (PlacementOrder) and the
// placement scorings with a tie (PlacementPick) within the run, in evaluation order, which both
// sides share once those choices are the same). A CompositePodGroup's children are tried in
// GetChildGroups order (creation time, then name: deterministic); the tree's Children slice
// (upstream: the queue forest's set order) is the scenario's object order.

import (
	"context"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	schedutil "k8s.io/kubernetes/pkg/scheduler/util"
)

// cpgPodResult is upstream's algorithmResult: a member's outcome in the tree's algorithm.
type cpgPodResult struct {
	pod        *v1.Pod
	status     *fwk.Status
	host       string
	state      *framework.CycleState
	nominating string
	at         *Attempt // nil: not evaluated (completed from its group's status)
}

// cpgResult is upstream's podGroupAlgorithmResult.
type cpgResult struct {
	pgi            *framework.PodGroupInfo
	podResults     []cpgPodResult
	status         *fwk.Status
	waiting        bool
	placementState *framework.CycleState
	anyScheduled   bool
}

type reverts []func()

func (r *reverts) revert() {
	for i := len(*r) - 1; i >= 0; i-- {
		(*r)[i]()
	}
	*r = nil
}

func entityKey(pgi *framework.PodGroupInfo) string {
	return string(pgi.Type) + "/" + pgi.Namespace + "/" + pgi.Name
}

// rootOfComposite: the root CompositePodGroup ("namespace/name") of a pod's PodGroup when it has a
// parent and every ancestor exists; "" otherwise (a flat group, or a missing parent: the
// members are gated by GangScheduling's PreEnqueue).
func rootOfComposite(p *v1.Pod, podGroups map[string]*schedulingv1beta1.PodGroup,
	cpgs map[string]*schedulingv1alpha3.CompositePodGroup) string {
	if !utilfeature.DefaultFeatureGate.Enabled(features.CompositePodGroup) || p.Spec.SchedulingGroup == nil ||
		p.Spec.SchedulingGroup.PodGroupName == nil {
		return ""
	}
	pg, ok := podGroups[p.Namespace+"/"+*p.Spec.SchedulingGroup.PodGroupName]
	if !ok || pg.Spec.ParentCompositePodGroupName == nil {
		return ""
	}
	name := *pg.Spec.ParentCompositePodGroupName
	for seen := 0; seen < 100; seen++ {
		cpg, ok := cpgs[p.Namespace+"/"+name]
		if !ok {
			return ""
		}
		if cpg.Spec.ParentCompositePodGroupName == nil {
			return p.Namespace + "/" + name
		}
		name = *cpg.Spec.ParentCompositePodGroupName
	}
	return ""
}

// buildTree is the entity's PodGroupInfo tree under the CompositePodGroup ns/name: its children
// in the scenario's object order, each leaf with its queued members.
func buildTree(ns, name string, order []string, podGroups map[string]*schedulingv1beta1.PodGroup,
	cpgs map[string]*schedulingv1alpha3.CompositePodGroup, members map[string][]*v1.Pod) *framework.PodGroupInfo {
	node := &framework.PodGroupInfo{Namespace: ns, Name: name, Type: fwk.CompositePodGroupKeyType,
		CompositePodGroup: cpgs[ns+"/"+name]}
	for _, k := range order {
		if c, ok := cpgs[k]; ok && c.Namespace == ns && c.Spec.ParentCompositePodGroupName != nil &&
			*c.Spec.ParentCompositePodGroupName == name {
			node.Children = append(node.Children, buildTree(ns, c.Name, order, podGroups, cpgs, members))
		}
		if pg, ok := podGroups[k]; ok && pg.Namespace == ns && pg.Spec.ParentCompositePodGroupName != nil &&
			*pg.Spec.ParentCompositePodGroupName == name {
			node.Children = append(node.Children, &framework.PodGroupInfo{Namespace: ns, Name: pg.Name,
				Type: fwk.PodGroupKeyType, PodGroup: pg, UnscheduledPods: members[k]})
		}
	}
	return node
}

// leavesInChildOrder: the tree's PodGroups depth first in GetChildGroups order.
func leavesInChildOrder(pgi *framework.PodGroupInfo) []*framework.PodGroupInfo {
	if pgi.CompositePodGroup == nil {
		return []*framework.PodGroupInfo{pgi}
	}
	var out []*framework.PodGroupInfo
	for _, c := range pgi.GetChildGroups() {
		out = append(out, leavesInChildOrder(c)...)
	}
	return out
}

// compositeAttempt retells scheduleOnePodGroup for the entity of the root CompositePodGroup
// (ns/name): PreEnqueue (GangScheduling's, over the hierarchy), validatePodGroup over the tree,
// runRootSchedulingAlgorithm's composite branch, completeCompositePodGroupAlgorithmResult,
// PodGroupPostFilter with the root, submitPodGroupAlgorithmResult per leaf (a condition each).
func compositeAttempt(ctx context.Context, prof *profileFw, snapshot *internalcache.Snapshot, root string,
	objOrder []string, podGroups map[string]*schedulingv1beta1.PodGroup,
	cpgs map[string]*schedulingv1alpha3.CompositePodGroup, members []*v1.Pod, order map[string]int, cycle int64,
	sc *Scenario) (ans GroupAnswer, attempts []Attempt, bound []*v1.Pod) {
	ans.Group = root
	ans.Messages, ans.Bound, ans.Conditions = map[string]string{}, map[string]string{}, map[string][]string{}
	f := prof.fw
	gs := prof.plugins["GangScheduling"]
	for _, pod := range members {
		if pe, ok := gs.(fwk.PreEnqueuePlugin); ok {
			if st := pe.PreEnqueue(ctx, pod); !st.IsSuccess() {
				ans.Gated = toStatus(st.WithPlugin(pe.Name()))
				return
			}
		}
	}
	rootCPG := cpgs[root]
	byLeaf := map[string][]*v1.Pod{}
	for _, pod := range members {
		k := pod.Namespace + "/" + *pod.Spec.SchedulingGroup.PodGroupName
		byLeaf[k] = append(byLeaf[k], pod)
	}
	for k := range byLeaf { // QueuedPodInfos per leaf: higher priority first, then the scenario's order
		ms := byLeaf[k]
		sort.SliceStable(ms, func(a, b int) bool {
			return corev1helpers.PodPriority(ms[a]) > corev1helpers.PodPriority(ms[b])
		})
	}
	tree := buildTree(rootCPG.Namespace, rootCPG.Name, objOrder, podGroups, cpgs, byLeaf)
	leaves := leavesInChildOrder(tree)

	// validatePodGroup: the root's priority; the first pod's scheduler name; the preemption
	// policy the root CompositePodGroup's with PodGroupPreemptionPolicy (podGroupPreemptionPolicy:
	// unset is PreemptLowerPriority), else the first pod's; then the scheduled pods of every leaf
	priority := schedutil.CompositePodGroupPriority(rootCPG)
	schedulerName, policy := "", ""
	policyGate := utilfeature.DefaultFeatureGate.Enabled(features.PodGroupPreemptionPolicy)
	if policyGate {
		policy = string(v1.PreemptLowerPriority)
		if rootCPG.Spec.PreemptionPolicy != nil {
			policy = string(*rootCPG.Spec.PreemptionPolicy)
		}
	}
	validate := func(pod *v1.Pod) error {
		if pod.Spec.SchedulerName != schedulerName {
			return fmt.Errorf("all pods in a single pod group should have the same .spec.schedulerName set, got: %q and %q", pod.Spec.SchedulerName, schedulerName)
		}
		if p := corev1helpers.PodPriority(pod); p != priority {
			return fmt.Errorf("all pods in a single pod group should have the same priority as the pod group's priority, got %d and %d", p, priority)
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
	for _, leaf := range leavesByQueue(members, byLeaf) { // ForEachPodInfo: the QueuedPodInfos map (any order)
		for _, pod := range leaf {
			if schedulerName == "" {
				schedulerName = pod.Spec.SchedulerName
			}
			if verr = validate(pod); verr != nil {
				break
			}
		}
		if verr != nil {
			break
		}
	}
	if verr == nil {
		for _, leaf := range leaves {
			state, err := snapshot.PodGroupStates().Get(leaf.Namespace, leaf.Name)
			if err != nil {
				verr = fmt.Errorf("failed to get pod group state: %w", err)
				break
			}
			for _, pod := range state.ScheduledPods() {
				if verr = validate(pod); verr != nil {
					break
				}
			}
			if verr != nil {
				break
			}
		}
	}
	if verr != nil {
		for _, pod := range members {
			ans.Messages[key(pod)] = verr.Error()
		}
		ans.Status = toStatus(fwk.AsStatus(verr))
		for _, leaf := range leaves {
			ans.Conditions[leaf.Namespace+"/"+leaf.Name] = []string{"False", "SchedulerError", verr.Error()}
		}
		return
	}

	// the run's counters (see the file's comment)
	run, attemptN, generateN, pickN := 0, 0, 0, 0
	runKey := func(n int) string { return fmt.Sprintf("%s|%d|%d", root, run, n) }

	// podGroupPodSchedulingAlgorithm + assumeAndReserveWithRevert
	podAlgorithm := func(placementState *framework.CycleState, pod *v1.Pod) (cpgPodResult, func()) {
		attemptN++
		gm := &groupMember{podGroupState: placementState.GetPodGroupSchedulingCycle().(*framework.CycleState),
			placementState: placementState}
		at := attemptIn(ctx, prof, snapshot, pod, sc.ReplayComposite[runKey(attemptN)], order, cycle, gm)
		res := cpgPodResult{pod: pod, host: at.Selected, state: gm.state, at: &at}
		switch {
		case at.Error != "":
			res.status = fwk.AsStatus(fmt.Errorf("%s", at.Error))
		case at.Selected == "":
			if gm.fitErr != nil {
				res.status = fwk.NewStatus(fwk.Unschedulable).WithError(gm.fitErr)
			} else {
				res.status = fwk.NewStatus(fwk.UnschedulableAndUnresolvable).WithError(fmt.Errorf("%s", at.FitError))
			}
		default:
			st, revert := assumeAndReserve(ctx, prof, snapshot, gm.state, pod, at.Selected)
			if !st.IsSuccess() {
				res.status, res.host = st, ""
				return res, nil
			}
			return res, revert
		}
		return res, nil
	}

	// podGroupSchedulingDefaultAlgorithm
	leafDefault := func(placementState *framework.CycleState, pgi *framework.PodGroupInfo) (result *cpgResult, rv reverts) {
		defer func() {
			if !result.status.IsSuccess() {
				rv.revert()
				result.anyScheduled = false
			}
		}()
		result = &cpgResult{pgi: pgi, status: fwk.NewStatus(fwk.Unschedulable).WithError(errPodGroupUnschedulable),
			placementState: placementState}
		state, err := snapshot.PodGroupStates().Get(pgi.Namespace, pgi.Name)
		if err != nil {
			result.status = fwk.AsStatus(fmt.Errorf("failed to get podGroup state for podGroup %s to compute gang feasibility: %w", klog.KObj(pgi), err))
			return result, nil
		}
		progress := framework.PlacementProgress{Remaining: len(pgi.GetUnscheduledPods()), Scheduled: state.ScheduledPodsCount()}
		st := f.RunPlacementFeasiblePlugins(ctx, placementState, pgi, progress)
		result.status = st
		if st.IsError() {
			result.status = fwk.AsStatus(fmt.Errorf("failed to evaluate placement feasibility: %w", st.AsError()))
			return result, nil
		}
		if st.Code() == fwk.Unschedulable {
			result.status = fwk.NewStatus(fwk.Unschedulable, result.status.Reasons()...).WithError(errPodGroupUnschedulable)
			return result, nil
		}
		anyScheduled := false
		for _, pod := range pgi.UnscheduledPods {
			pr, revert := podAlgorithm(placementState, pod)
			result.podResults = append(result.podResults, pr)
			if revert != nil {
				rv = append(rv, revert)
			}
			if !pr.status.IsSuccess() && !pr.status.IsRejected() {
				result.status = fwk.AsStatus(fmt.Errorf("failed to schedule other pod from a pod group: %w", pr.status.AsError()))
				break
			}
			progress.Remaining--
			if pr.status.IsSuccess() {
				progress.Scheduled++
			}
			st := f.RunPlacementFeasiblePlugins(ctx, placementState, pgi, progress)
			if st.IsError() {
				result.status = fwk.AsStatus(fmt.Errorf("failed to evaluate placement feasibility: %w", st.AsError()))
				break
			}
			result.status = st
			if st.Code() == fwk.Unschedulable {
				break
			}
			anyScheduled = anyScheduled || pr.status.IsSuccess()
		}
		if result.status.IsWait() {
			result.status = fwk.NewStatus(fwk.Unschedulable, result.status.Reasons()...).WithError(errPodGroupUnschedulable)
		}
		result.anyScheduled = anyScheduled
		return result, rv
	}

	// RunPlacementGeneratePlugins in the order fastsched evaluated them (when it names the same)
	generate := func(groupState *framework.CycleState, pgi *framework.PodGroupInfo) ([]*fwk.Placement, *fwk.Status) {
		allNodes, err := snapshot.ListNodesInPlacement()
		if err != nil {
			return nil, fwk.AsStatus(fmt.Errorf("failed to list node infos: %w", err))
		}
		groupState.SetRecordPluginMetrics(true)
		placements, st := f.RunPlacementGeneratePlugins(ctx, groupState, pgi, allNodes)
		if !st.IsSuccess() {
			return nil, st
		}
		generateN++
		byName := map[string]*fwk.Placement{}
		for _, p := range placements {
			byName[p.Name] = p
		}
		if want := sc.PlacementOrder[runKey(generateN)]; len(want) == len(placements) {
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
		return placements, nil
	}
	// findBestPlacement: the highest total; a tie is random upstream (fastsched's pick when it is
	// among the tied, else the first)
	findBest := func(groupState *framework.CycleState, pgi *framework.PodGroupInfo, placements []*fwk.Placement,
		assignments []*fwk.PodGroupAssignments, states []fwk.PlacementCycleState) (int, *fwk.Status) {
		if len(placements) == 1 {
			return 0, nil
		}
		scores, st := f.RunPlacementScorePlugins(ctx, groupState, pgi, assignments, states)
		if !st.IsSuccess() {
			return -1, st
		}
		pickN++
		best := scores[0].TotalScore
		for _, s := range scores[1:] {
			if s.TotalScore > best {
				best = s.TotalScore
			}
		}
		pick := -1
		for i, s := range scores {
			if s.TotalScore == best && (pick < 0 || s.Placement.Name == sc.PlacementPick[runKey(pickN)]) {
				pick = i
			}
		}
		for i, p := range placements {
			if p == scores[pick].Placement {
				return i, nil
			}
		}
		return -1, fwk.AsStatus(fmt.Errorf("best placement not found"))
	}
	proposedOf := func(res *cpgResult) []fwk.ProposedAssignment {
		out := make([]fwk.ProposedAssignment, 0)
		for _, pr := range res.podResults {
			if pr.status.IsSuccess() && pr.host != "" {
				pi, _ := framework.NewPodInfo(pr.pod)
				out = append(out, &proposedAssignment{pod: pr.pod, pi: pi, node: pr.host, state: pr.state})
			}
		}
		return out
	}
	// successfulLeafResults
	var successfulLeaves func(pgi *framework.PodGroupInfo, results map[string]*cpgResult, yield func(*cpgResult))
	successfulLeaves = func(pgi *framework.PodGroupInfo, results map[string]*cpgResult, yield func(*cpgResult)) {
		r, ok := results[entityKey(pgi)]
		if !ok || !r.status.IsSuccess() {
			return
		}
		for _, c := range pgi.Children {
			successfulLeaves(c, results, yield)
		}
		if len(r.podResults) > 0 {
			yield(r)
		}
	}
	// assumeSubtreeWithRevert
	assumeSubtree := func(pgi *framework.PodGroupInfo, results map[string]*cpgResult) (rv reverts, err error) {
		successfulLeaves(pgi, results, func(r *cpgResult) {
			if err != nil {
				return
			}
			for _, pr := range r.podResults {
				if !pr.status.IsSuccess() || pr.host == "" {
					continue
				}
				st, revert := assumeAndReserve(ctx, prof, snapshot, pr.state, pr.pod, pr.host)
				if revert != nil {
					rv = append(rv, revert)
				}
				if !st.IsSuccess() {
					err = st.AsError()
					return
				}
			}
		})
		if err != nil {
			rv.revert()
			return nil, err
		}
		return rv, nil
	}
	restore := func(parent *fwk.Placement, result **cpgResult, rv *reverts) {
		snapshot.ForgetPlacement()
		if err := snapshot.AssumePlacement(parent); err != nil {
			(*result).status = fwk.AsStatus(fmt.Errorf("failed to restore parent pod group placement: %w", err))
			rv.revert()
		}
	}

	// podGroupSchedulingPlacementAlgorithm for a leaf (its best result assumed again)
	leafPlacement := func(groupState *framework.CycleState, pgi *framework.PodGroupInfo) (final *cpgResult, rv reverts) {
		placements, st := generate(groupState, pgi)
		if !st.IsSuccess() {
			return &cpgResult{pgi: pgi, status: st}, nil
		}
		parent := snapshot.GetPlacement()
		defer restore(parent, &final, &rv)
		var anyResult *cpgResult
		var fitP []*fwk.Placement
		var fit []*cpgResult
		for _, p := range placements {
			if err := snapshot.AssumePlacement(p); err != nil {
				return &cpgResult{pgi: pgi, status: fwk.AsStatus(fmt.Errorf("failed to assume pod group placement: %w", err))}, nil
			}
			ps := framework.NewCycleState()
			ps.SetPodGroupSchedulingCycle(groupState)
			r, prv := leafDefault(ps, pgi)
			prv.revert()
			if r.status.IsError() {
				return r, nil
			}
			if anyResult == nil {
				anyResult = r
			}
			if r.status.IsSuccess() {
				fitP, fit = append(fitP, p), append(fit, r)
			}
		}
		if len(fit) == 0 {
			anyResult.status = fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("0/%d placements are available, first placement status: %v", len(placements), anyResult.status.AsError())).WithError(errPodGroupUnschedulable)
			return anyResult, nil
		}
		assignments := make([]*fwk.PodGroupAssignments, 0, len(fit))
		states := make([]fwk.PlacementCycleState, 0, len(fit))
		for i, r := range fit {
			assignments = append(assignments, &fwk.PodGroupAssignments{Placement: fitP[i], ProposedAssignments: proposedOf(r)})
			states = append(states, r.placementState)
		}
		i, st := findBest(groupState, pgi, fitP, assignments, states)
		if !st.IsSuccess() {
			return &cpgResult{pgi: pgi, status: st}, nil
		}
		best := fit[i]
		arv, err := assumeSubtree(pgi, map[string]*cpgResult{entityKey(pgi): best})
		if err != nil {
			return &cpgResult{pgi: pgi, status: fwk.AsStatus(fmt.Errorf("failed to assume the subtree: %w", err))}, nil
		}
		return best, arv
	}

	var recursive func(groupState *framework.CycleState, pgi *framework.PodGroupInfo, results map[string]*cpgResult) (*cpgResult, reverts)
	// compositePodGroupSchedulingDefaultAlgorithm
	cpgDefault := func(placementState *framework.CycleState, pgi *framework.PodGroupInfo, results map[string]*cpgResult) (result *cpgResult, rv reverts) {
		defer func() {
			results[entityKey(pgi)] = result
			if !result.status.IsSuccess() {
				rv.revert()
				result.anyScheduled = false
			}
		}()
		progress := framework.PlacementProgress{Remaining: len(pgi.Children)}
		st := f.RunPlacementFeasiblePlugins(ctx, placementState, pgi, progress)
		if st.Code() == fwk.Unschedulable || st.Code() == fwk.Error {
			return &cpgResult{pgi: pgi, status: st, placementState: placementState}, rv
		}
		anyScheduled := false
		for _, child := range pgi.GetChildGroups() {
			childState := framework.NewCycleState()
			childState.SetPlacementCycleState(placementState)
			cr, crv := recursive(childState, child, results)
			if cr.status.IsError() {
				return &cpgResult{pgi: pgi, status: fwk.AsStatus(fmt.Errorf("composite pod group evaluation failed due to child error: %w", cr.status.AsError())),
					placementState: placementState}, rv
			}
			anyScheduled = anyScheduled || cr.anyScheduled
			rv = append(rv, crv...)
			progress.Remaining--
			if cr.status.IsSuccess() {
				progress.Scheduled++
			}
			st = f.RunPlacementFeasiblePlugins(ctx, placementState, pgi, progress)
			if st.Code() == fwk.Unschedulable || st.Code() == fwk.Error {
				break
			}
		}
		if st.IsWait() {
			st = fwk.NewStatus(fwk.Unschedulable, st.Reasons()...).WithError(errPodGroupUnschedulable)
		}
		return &cpgResult{pgi: pgi, status: st, placementState: placementState, anyScheduled: anyScheduled}, rv
	}
	// compositePodGroupSchedulingPlacementAlgorithm
	cpgPlacement := func(groupState *framework.CycleState, pgi *framework.PodGroupInfo, results map[string]*cpgResult) (final *cpgResult, rv reverts) {
		defer func() { results[entityKey(pgi)] = final }()
		placements, st := generate(groupState, pgi)
		if !st.IsSuccess() {
			return &cpgResult{pgi: pgi, status: st}, nil
		}
		parent := snapshot.GetPlacement()
		defer restore(parent, &final, &rv)
		var anySubtree map[string]*cpgResult
		var fitP []*fwk.Placement
		var fit []map[string]*cpgResult
		for _, p := range placements {
			if err := snapshot.AssumePlacement(p); err != nil {
				return &cpgResult{pgi: pgi, status: fwk.AsStatus(fmt.Errorf("failed to assume pod group placement: %w", err))}, nil
			}
			ps := framework.NewCycleState()
			ps.SetPodGroupSchedulingCycle(groupState)
			subtree := map[string]*cpgResult{}
			r, prv := cpgDefault(ps, pgi, subtree)
			prv.revert()
			if r.status.IsError() {
				return r, nil
			}
			if anySubtree == nil {
				anySubtree = subtree
			}
			if r.status.IsSuccess() {
				fitP, fit = append(fitP, p), append(fit, subtree)
			}
		}
		if len(fit) == 0 {
			anyRoot := anySubtree[entityKey(pgi)]
			anyRoot.status = fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("0/%d placements are available, first placement status: %v", len(placements), anyRoot.status.AsError())).WithError(errPodGroupUnschedulable)
			for k, v := range anySubtree {
				results[k] = v
			}
			return anyRoot, nil
		}
		assignments := make([]*fwk.PodGroupAssignments, 0, len(fit))
		states := make([]fwk.PlacementCycleState, 0, len(fit))
		for i, subtree := range fit {
			var combined []fwk.ProposedAssignment
			successfulLeaves(pgi, subtree, func(r *cpgResult) { combined = append(combined, proposedOf(r)...) })
			assignments = append(assignments, &fwk.PodGroupAssignments{Placement: fitP[i], ProposedAssignments: combined})
			states = append(states, subtree[entityKey(pgi)].placementState)
		}
		i, st := findBest(groupState, pgi, fitP, assignments, states)
		if !st.IsSuccess() {
			return &cpgResult{pgi: pgi, status: st}, nil
		}
		best := fit[i]
		arv, err := assumeSubtree(pgi, best)
		if err != nil {
			return &cpgResult{pgi: pgi, status: fwk.AsStatus(fmt.Errorf("failed to assume the subtree: %w", err))}, nil
		}
		for k, v := range best {
			results[k] = v
		}
		return best[entityKey(pgi)], arv
	}
	recursive = func(groupState *framework.CycleState, pgi *framework.PodGroupInfo, results map[string]*cpgResult) (*cpgResult, reverts) {
		if pgi.Type == fwk.PodGroupKeyType {
			r, rv := leafPlacement(groupState, pgi)
			results[entityKey(pgi)] = r
			return r, rv
		}
		return cpgPlacement(groupState, pgi, results)
	}
	// runRootSchedulingAlgorithm (composite): everything assumed reverted at its end
	runRoot := func(groupState *framework.CycleState) map[string]*cpgResult {
		run++
		attemptN, generateN, pickN = 0, 0, 0
		results := map[string]*cpgResult{}
		r, rv := recursive(groupState, tree, results)
		rv.revert()
		if r.status.IsSuccess() && !r.anyScheduled {
			r.status = fwk.NewStatus(fwk.Unschedulable).WithError(errPodGroupUnschedulable)
		}
		return results
	}

	groupState := framework.NewCycleState()
	results := runRoot(groupState)
	rootStatus := results[entityKey(tree)].status
	for _, leaf := range leaves { // the evaluated members' attempts (of the subtree kept)
		if r, ok := results[entityKey(leaf)]; ok {
			for _, pr := range r.podResults {
				if pr.at != nil {
					attempts = append(attempts, *pr.at)
				}
			}
		}
	}
	// completeCompositePodGroupAlgorithmResult
	var completeMap func(pgi *framework.PodGroupInfo, parent *cpgResult)
	completeMap = func(pgi *framework.PodGroupInfo, parent *cpgResult) {
		r, ok := results[entityKey(pgi)]
		if !ok || (!parent.status.IsSuccess() && r.status.IsSuccess()) {
			r = &cpgResult{pgi: pgi, status: parent.status}
			results[entityKey(pgi)] = r
		}
		if pgi.CompositePodGroup != nil {
			for _, c := range pgi.GetChildGroups() {
				completeMap(c, r)
			}
		}
	}
	completeMap(tree, &cpgResult{})
	for _, leaf := range leaves {
		r := results[entityKey(leaf)]
		for len(r.podResults) < len(leaf.UnscheduledPods) {
			r.podResults = append(r.podResults, cpgPodResult{pod: leaf.UnscheduledPods[len(r.podResults)], status: r.status.Clone()})
		}
	}
	if rootStatus.Code() == fwk.Unschedulable {
		pfResult, pst := f.RunPodGroupPostFilterPlugins(ctx, groupState, tree, func(ctx context.Context) (*fwk.PodGroupAssignments, *fwk.Status) {
			again := runRoot(framework.NewCycleState())
			proposed := make([]fwk.ProposedAssignment, 0)
			for _, r := range again {
				proposed = append(proposed, proposedOf(r)...)
			}
			return &fwk.PodGroupAssignments{ProposedAssignments: proposed}, again[entityKey(tree)].status
		})
		// applyPodGroupPostFilterResult
		if pst.IsSuccess() {
			for _, r := range results {
				r.waiting = true
				if r.pgi.CompositePodGroup != nil || pfResult == nil {
					continue
				}
				for j := range r.podResults {
					pod := r.podResults[j].pod
					if ni, ok := pfResult.NominatingInfos[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}]; ok && ni != nil {
						r.podResults[j].nominating = ni.NominatedNodeName
					}
				}
			}
		}
		for _, r := range results {
			if pst.IsError() {
				r.status = pst
			} else {
				r.status.AppendReason(pst.String())
			}
		}
	}
	rootResult := results[entityKey(tree)]
	ans.Status = toStatus(rootResult.status)
	if ans.Status == nil {
		ans.Status = &statusJSON{Code: rootResult.status.Code().String(), Reasons: []string{}}
	}
	// submitPodGroupAlgorithmResult, leaf by leaf
	for _, leaf := range leaves {
		r := results[entityKey(leaf)]
		status := r.status
		for _, pr := range r.podResults {
			pod := pr.pod
			switch {
			case status.IsError():
				if pr.status.IsError() {
					ans.Messages[key(pod)] = pr.status.Message()
				} else {
					ans.Messages[key(pod)] = status.Message()
				}
			case pr.status.IsSuccess() && status.IsSuccess():
				pr.state.SetPodGroupSchedulingCycle(nil)
				at := &Attempt{Selected: pr.host}
				bindVolumes(ctx, prof, pr.state, pod, at)
				for k := range attempts {
					if attempts[k].Pod == key(pod) {
						attempts[k].VolumeBindings, attempts[k].ClaimAllocations = at.VolumeBindings, at.ClaimAllocations
					}
				}
				if at.Selected == "" { // (handleBindingCycleError: the status' message, without the label)
					ans.Messages[key(pod)] = strings.TrimPrefix(at.Error, "prebind: ")
					continue
				}
				b := pod.DeepCopy()
				b.Spec.NodeName = pr.host
				b.Status.Phase = v1.PodRunning
				ans.Bound[key(pod)] = pr.host
				bound = append(bound, b)
			case pr.status.IsSuccess() && status.IsRejected() && r.waiting:
				ans.Messages[key(pod)] = status.Message()
				if pr.nominating != "" {
					if ans.Nominated == nil {
						ans.Nominated = map[string]string{}
					}
					ans.Nominated[key(pod)] = pr.nominating
				}
			case pr.status.IsSuccess() && status.IsRejected():
				ans.Messages[key(pod)] = fwk.NewStatus(fwk.Unschedulable, status.Message()).WithError(errPodGroupUnschedulable).Message()
			case pr.status.IsSuccess():
				ans.Messages[key(pod)] = fmt.Sprintf("received unexpected pod group scheduling algorithm status code: %s", status.Code())
			default:
				ans.Messages[key(pod)] = pr.status.Message()
				if pr.nominating != "" && !status.IsError() {
					if ans.Nominated == nil {
						ans.Nominated = map[string]string{}
					}
					ans.Nominated[key(pod)] = pr.nominating
				}
			}
		}
		k := leaf.Namespace + "/" + leaf.Name
		switch {
		case status.IsSuccess():
			ans.Conditions[k] = []string{"True", "Scheduled", status.Message()}
		case status.IsRejected():
			ans.Conditions[k] = []string{"False", "Unschedulable", status.Message()}
		default:
			ans.Conditions[k] = []string{"False", "SchedulerError", status.AsError().Error()}
		}
	}
	return
}

// leavesByQueue: the queued members per leaf, the leaves in the order their first member comes
// among all the members (higher priority first). validatePodGroup's ForEachPodInfo ranges over
// the QueuedPodInfos map upstream, so any leaf can come first (the first failing pod's message
// depends on it when members disagree in two ways at once); fastsched validates the entity's
// members by priority, and this is the leaf order that gives the same first pod.
func leavesByQueue(members []*v1.Pod, byLeaf map[string][]*v1.Pod) [][]*v1.Pod {
	var out [][]*v1.Pod
	seen := map[string]bool{}
	for _, pod := range members {
		k := pod.Namespace + "/" + *pod.Spec.SchedulingGroup.PodGroupName
		if !seen[k] {
			seen[k] = true
			out = append(out, byLeaf[k])
		}
	}
	return out
}

// assumeAndReserve assumes pod on node in the snapshot and runs Reserve (Unreserve and forget on
// a failure); the revert undoes both (unreserveAndForget).
func assumeAndReserve(ctx context.Context, prof *profileFw, snapshot *internalcache.Snapshot, state *framework.CycleState,
	pod *v1.Pod, node string) (*fwk.Status, func()) {
	logger := klog.FromContext(ctx)
	f := prof.fw
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = node
	pi, _ := framework.NewPodInfo(assumed)
	if err := snapshot.AssumePod(pi); err != nil {
		return fwk.AsStatus(err), nil
	}
	if rs := f.RunReservePluginsReserve(ctx, state, assumed, node); !rs.IsSuccess() {
		f.RunReservePluginsUnreserve(ctx, state, assumed, node)
		_ = snapshot.ForgetPod(logger, assumed)
		return rs, nil
	}
	return nil, func() {
		f.RunReservePluginsUnreserve(ctx, state, assumed, node)
		_ = snapshot.ForgetPod(logger, assumed)
	}
}
