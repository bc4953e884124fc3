"""Workload-aware preemption (DefaultPreemption's PodGroupPostFilter): upstream v1.37.2
``pkg/scheduler/framework/preemption/podgrouppreemption_test.go`` —
``TestPodGroupEvaluator_SelectVictimsOnDomain`` (its 33 cases, transcribed below as data),
``TestPodGroupEvaluator_SelectVictimsOnDomain_NominatedNodes`` and ``TestPodGroupEvaluator_Preempt``;
then the plugin's ``PodGroupPostFilter`` (the mutation session, the prefix, the actuation, PreEnqueue)
and whole groups preempting through ``Scheduler.run()``.

As upstream's table, the evaluator runs over a real snapshot (the cache's node table, its
PodGroups and PodGroupStates) with a mock Filter (each pod weighs its ``size`` label, default 1,
against the node's capacity) and a mock group algorithm (each member, in order, on the next node
round-robin with room, Unschedulable below the gang's ``minCount``). Priorities: low 10, mid 100,
high 1000 (upstream's ``lowPriority``, ``midPriority``, ``highPriority``); upstream's pods without a
namespace are in ``default`` here.
"""
from __future__ import annotations

from typing import Any

import pytest

from fastsched.api.labels import LabelSelector
from fastsched.api.objects import PodDisruptionBudget, PodSchedulingGroup
from fastsched.api.scheduling import DisruptionMode, GangSchedulingPolicy, PodGroup, PodGroupSchedulingPolicy
from fastsched.framework.cycle_state import CycleState
from fastsched.framework.podgroups import QueuedPodGroupInfo
from fastsched.framework.status import Code, Status
from fastsched.framework.types import NominatingInfo, NominatingMode, PodInfo, QueuedPodInfo
from fastsched.plugins.defaultpreemption.podgroup_preemption import (PodGroupEvaluator, PodGroupPreemptor,
                                                                     new_domain_for_workload_preemption)
from fastsched.scheduler.cache import Cache
from fastsched.scheduler.mutable_snapshot import MutableSnapshot
from fastsched.testing import make_node, make_pod

CODES = {"Success": Code.SUCCESS, "Unschedulable": Code.UNSCHEDULABLE,
         "UnschedulableAndUnresolvable": Code.UNSCHEDULABLE_AND_UNRESOLVABLE}
PREEMPTED = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}

# TestPodGroupEvaluator_SelectVictimsOnDomain, transcribed: nodes, initPods (uid, node, priority,
# group = PodGroupName, labels, start = StartTime seconds, nnn = NominatedNodeName, terminating and
# preempted_condition = Terminating() and Condition(DisruptionTarget, True, PreemptionByScheduler)),
# initPodGroups (priority, disruption mode, minCount), the preemptor's PodGroup and pods, its policy,
# the PDBs (matchLabels, disruptionsAllowed), the node capacities, and the expectations.
SELECT_VICTIMS_CASES: list[dict[str, Any]] = [{'name': 'Priority: mix of no groups and pod groups',
  'nodes': ['node1'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 10, 'labels': {'size': '1'}},
           {'name': 'p2', 'uid': 'v2', 'node': 'node1', 'priority': 10, 'group': 'pg1', 'labels': {'size': '1'}}],
  'groups': [{'name': 'pg1', 'priority': 10, 'mode': 'single'}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 1000, 'labels': {'size': '1'}}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 2)],
  'victims': ['p1'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'Priority: StartTime of pods from same group with disruption mode single ',
  'nodes': ['node1'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 10, 'group': 'pg1', 'start': 1},
           {'name': 'p2', 'uid': 'v2', 'node': 'node1', 'priority': 10, 'group': 'pg1', 'start': 0}],
  'groups': [{'name': 'pg1', 'priority': 10, 'mode': 'single'}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 2)],
  'victims': ['p1'],
  'status': 'Success',
  'disruptions': 1,
  'pdb_violations': 0},
 {'name': 'Pod group with disruption mode group not reprieved',
  'nodes': ['node1', 'node2'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 10, 'group': 'pg1'},
           {'name': 'p2', 'uid': 'v2', 'node': 'node2', 'priority': 10, 'group': 'pg1'}],
  'groups': [{'name': 'pg1', 'priority': 10, 'mode': 'all'}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 1), ('node2', 1)],
  'victims': ['p1', 'p2'],
  'status': 'Success',
  'disruptions': 1,
  'pdb_violations': 0},
 {'name': 'Complex Mixed: Shared, different, and no groups',
  'nodes': ['node1', 'node2', 'node3', 'node4', 'node5'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 10, 'group': 'pg1', 'start': 2},
           {'name': 'p2', 'uid': 'v2', 'node': 'node2', 'priority': 10, 'group': 'pg1', 'start': 1},
           {'name': 'p3', 'uid': 'v3', 'node': 'node3', 'priority': 10, 'group': 'pg2', 'start': 0},
           {'name': 'p4', 'uid': 'v4', 'node': 'node4', 'priority': 100},
           {'name': 'p5', 'uid': 'v5', 'node': 'node5', 'priority': 1000, 'group': 'pg3', 'start': 0}],
  'groups': [{'name': 'pg1', 'priority': 10, 'mode': 'single'},
             {'name': 'pg2', 'priority': 10, 'mode': 'single'},
             {'name': 'pg3', 'priority': 1000, 'mode': 'single'}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p-1', 'uid': 'p-1', 'priority': 1000},
                     {'name': 'p-2', 'uid': 'p-2', 'priority': 1000},
                     {'name': 'p-3', 'uid': 'p-3', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 2), ('node2', 1), ('node3', 2), ('node4', 2), ('node5', 2)],
  'victims': ['p2'],
  'status': 'Success',
  'disruptions': 1,
  'pdb_violations': 0},
 {'name': 'PDB: Mixed groups',
  'nodes': ['node1'],
  'pods': [{'name': 'victim-pdb',
            'uid': 'v1',
            'node': 'node1',
            'priority': 10,
            'group': 'pg1',
            'labels': {'app': 'foo'}},
           {'name': 'victim-no-pdb', 'uid': 'v2', 'node': 'node1', 'priority': 10, 'group': 'pg1'}],
  'groups': [],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [{'match': {'app': 'foo'}, 'allowed': 0}],
  'caps': [('node1', 2)],
  'victims': ['victim-no-pdb'],
  'status': 'Success',
  'disruptions': 1,
  'pdb_violations': 0},
 {'name': 'PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption',
  'nodes': ['node1', 'node2', 'node3'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 10},
           {'name': 'p2', 'uid': 'v2', 'node': 'node2', 'priority': 10, 'group': 'pg1'},
           {'name': 'p3', 'uid': 'v3', 'node': 'node3', 'priority': 10, 'group': 'pg2'}],
  'groups': [],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p-1', 'uid': 'p-1', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 1), ('node2', 1), ('node3', 1)],
  'victims': ['p1'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption, ignoring member pod '
          'preemption policy',
  'nodes': ['node1', 'node2', 'node3'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 10},
           {'name': 'p2', 'uid': 'v2', 'node': 'node2', 'priority': 10, 'group': 'pg1'},
           {'name': 'p3', 'uid': 'v3', 'node': 'node3', 'priority': 10, 'group': 'pg2'}],
  'groups': [],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000, 'policy': 'PreemptLowerPriority'},
  'preemptor_pods': [{'name': 'p-1', 'uid': 'p-1', 'priority': 1000, 'policy': 'PreemptNever'}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 1), ('node2', 1), ('node3', 1)],
  'victims': ['p1'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'Preemptor group is eligible if terminating pods are on non-nominated nodes',
  'nodes': ['node1', 'node2'],
  'pods': [{'name': 'victim',
            'uid': 'v1',
            'node': 'node2',
            'priority': 10,
            'terminating': True,
            'preempted_condition': True},
           {'name': 'other-victim', 'uid': 'v2', 'node': 'node1', 'priority': 10}],
  'groups': [],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p1', 'uid': 'p1', 'priority': 1000},
                     {'name': 'p2', 'uid': 'p2', 'priority': 1000, 'nnn': 'node1'}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 1), ('node2', 1)],
  'victims': ['other-victim', 'victim'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'Preemptor group is eligible if nominated node has terminating pod belonging to a pod group of higher '
          'priority',
  'nodes': ['node1', 'node2'],
  'pods': [{'name': 'victim',
            'uid': 'v1',
            'node': 'node1',
            'priority': 10,
            'group': 'victim-pg',
            'terminating': True,
            'preempted_condition': True},
           {'name': 'other-victim', 'uid': 'v2', 'node': 'node1', 'priority': 10}],
  'groups': [{'name': 'victim-pg', 'priority': 1000, 'mode': 'all'}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 100},
  'preemptor_pods': [{'name': 'p1', 'uid': 'p1', 'priority': 100},
                     {'name': 'p2', 'uid': 'p2', 'priority': 100, 'nnn': 'node1'}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 2), ('node2', 1)],
  'victims': ['other-victim'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'Preemptor group is eligible if nominated node has terminating pod belonging to a pod group of higher '
          'priority with nil DisruptionMode',
  'nodes': ['node1', 'node2'],
  'pods': [{'name': 'victim',
            'uid': 'v1',
            'node': 'node1',
            'priority': 10,
            'group': 'victim-pg',
            'terminating': True,
            'preempted_condition': True},
           {'name': 'other-victim', 'uid': 'v2', 'node': 'node1', 'priority': 10}],
  'groups': [{'name': 'victim-pg', 'priority': 1000, 'mode': 'single'}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 100},
  'preemptor_pods': [{'name': 'p1', 'uid': 'p1', 'priority': 100},
                     {'name': 'p2', 'uid': 'p2', 'priority': 100, 'nnn': 'node1'}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 2), ('node2', 1)],
  'victims': ['other-victim'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'Preempt single lower priority pod',
  'nodes': ['node1'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 10}],
  'groups': [],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 1)],
  'victims': ['p1'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'Priority: Prefer lower priority victim',
  'nodes': ['node1'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 10},
           {'name': 'p2', 'uid': 'v2', 'node': 'node1', 'priority': 100},
           {'name': 'p3', 'uid': 'v3', 'node': 'node1', 'priority': 1000}],
  'groups': [],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 2)],
  'victims': ['p1', 'p2'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'Efficiency: Preempt minimum number of victims',
  'nodes': ['node1'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 10},
           {'name': 'p2', 'uid': 'v2', 'node': 'node1', 'priority': 10},
           {'name': 'p3', 'uid': 'v3', 'node': 'node1', 'priority': 10},
           {'name': 'p4', 'uid': 'v4', 'node': 'node1', 'priority': 10}],
  'groups': [],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 3)],
  'victims': ['p3', 'p4'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'PDB: Prefer non-violating victim',
  'nodes': ['node1'],
  'pods': [{'name': 'victim-pdb', 'uid': 'v1', 'node': 'node1', 'priority': 10, 'labels': {'app': 'foo'}},
           {'name': 'victim-no-pdb', 'uid': 'v2', 'node': 'node1', 'priority': 10}],
  'groups': [],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [{'match': {'app': 'foo'}, 'allowed': 0}],
  'caps': [('node1', 2)],
  'victims': ['victim-no-pdb'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'PDB: Prefer removing non-violating victim over lower priority violating victim',
  'nodes': ['node1'],
  'pods': [{'name': 'victim-pdb', 'uid': 'v1', 'node': 'node1', 'priority': 10, 'labels': {'app': 'foo'}},
           {'name': 'victim-no-pdb', 'uid': 'v2', 'node': 'node1', 'priority': 100}],
  'groups': [],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [{'match': {'app': 'foo'}, 'allowed': 0}],
  'caps': [('node1', 2)],
  'victims': ['victim-no-pdb'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption with PodGroup '
          'victims',
  'nodes': ['node1', 'node2', 'node3'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 10},
           {'name': 'p2', 'uid': 'v2', 'node': 'node2', 'priority': 10, 'group': 'pg1'},
           {'name': 'p3', 'uid': 'v3', 'node': 'node3', 'priority': 10, 'group': 'pg2'}],
  'groups': [{'name': 'pg1', 'priority': 10, 'mode': 'single'}, {'name': 'pg2', 'priority': 10, 'mode': 'single'}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p-1', 'uid': 'p-1', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 1), ('node2', 1), ('node3', 1)],
  'victims': ['p1'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption with PodGroup '
          'victims, ignoring member pod preemption policy',
  'nodes': ['node1', 'node2', 'node3'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 10},
           {'name': 'p2', 'uid': 'v2', 'node': 'node2', 'priority': 10, 'group': 'pg1'},
           {'name': 'p3', 'uid': 'v3', 'node': 'node3', 'priority': 10, 'group': 'pg2'}],
  'groups': [{'name': 'pg1', 'priority': 10, 'mode': 'single'}, {'name': 'pg2', 'priority': 10, 'mode': 'single'}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p-1', 'uid': 'p-1', 'priority': 1000, 'policy': 'PreemptNever'}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 1), ('node2', 1), ('node3', 1)],
  'victims': ['p1'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'PDB: Prefer lower priority pod for preemption, when preemption without pdb violation is not possible',
  'nodes': ['node1'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 10, 'labels': {'app': 'foo'}},
           {'name': 'p2', 'uid': 'v2', 'node': 'node1', 'priority': 100, 'labels': {'app': 'foo'}}],
  'groups': [],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [{'match': {'app': 'foo'}, 'allowed': 0}],
  'caps': [('node1', 2)],
  'victims': ['p1'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 1},
 {'name': 'PodGroup: Preempt group as a whole',
  'nodes': ['node1', 'node2'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 10, 'group': 'pg1'},
           {'name': 'p2', 'uid': 'v2', 'node': 'node2', 'priority': 10, 'group': 'pg1'}],
  'groups': [{'name': 'pg1', 'priority': 10, 'mode': 'all'}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 1), ('node1', 2)],
  'victims': ['p1', 'p2'],
  'status': 'Success',
  'disruptions': 1,
  'pdb_violations': 0},
 {'name': 'PodGroup: Prefer single pod over podGroup for preemption candidate',
  'nodes': ['node1'],
  'pods': [{'name': 'p1', 'uid': 'p1', 'node': 'node1', 'priority': 10},
           {'name': 'g1-1', 'uid': 'g1', 'node': 'node1', 'priority': 10, 'group': 'pg1'},
           {'name': 'g1-2', 'uid': 'g2', 'node': 'node1', 'priority': 10, 'group': 'pg1'}],
  'groups': [{'name': 'pg1', 'priority': 10, 'mode': 'all'}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 3)],
  'victims': ['p1'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'PodGroup: Preempt group as a whole on single node',
  'nodes': ['node1'],
  'pods': [{'name': 'g1-1', 'uid': 'g1', 'node': 'node1', 'priority': 10, 'group': 'pg1'},
           {'name': 'g1-2', 'uid': 'g2', 'node': 'node1', 'priority': 10, 'group': 'pg1'},
           {'name': 'p1', 'uid': 'p1', 'node': 'node1', 'priority': 100}],
  'groups': [{'name': 'pg1', 'priority': 10, 'mode': 'all'}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 3)],
  'victims': ['g1-1', 'g1-2'],
  'status': 'Success',
  'disruptions': 1,
  'pdb_violations': 0},
 {'name': 'PDB: Unit violation if any member violates',
  'nodes': ['node1'],
  'pods': [{'name': 'g1-1', 'uid': 'g1', 'node': 'node1', 'priority': 10, 'group': 'pg1', 'labels': {'app': 'foo'}},
           {'name': 'g1-2', 'uid': 'g2', 'node': 'node1', 'priority': 10, 'group': 'pg1'},
           {'name': 'p1', 'uid': 'p1', 'node': 'node1', 'priority': 10}],
  'groups': [{'name': 'pg1', 'priority': 10, 'mode': 'all'}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [{'match': {'app': 'foo'}, 'allowed': 0}],
  'caps': [('node1', 3)],
  'victims': ['p1'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'Failure: Cannot preempt the victim with higher priority',
  'nodes': ['node1'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 1000}],
  'groups': [],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 100},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 100}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 100)],
  'victims': [],
  'status': 'UnschedulableAndUnresolvable',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'Failure: Cannot preempt the victim with equal priority',
  'nodes': ['node1'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 100}],
  'groups': [],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 100},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 100}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 100)],
  'victims': [],
  'status': 'UnschedulableAndUnresolvable',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'Failure: Cannot preempt if node is empty',
  'nodes': ['node1'],
  'pods': [],
  'groups': [],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 100},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 100}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 100)],
  'victims': [],
  'status': 'UnschedulableAndUnresolvable',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'Priority divergence: candidate victim PodGroup has lower priority than the Pods from that group',
  'nodes': ['node1', 'node2'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 1000, 'group': 'pg1'},
           {'name': 'p2', 'uid': 'v2', 'node': 'node2', 'priority': 1000, 'group': 'pg1'}],
  'groups': [{'name': 'pg1', 'priority': 100, 'mode': 'all'}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 1), ('node2', 1)],
  'victims': ['p1', 'p2'],
  'status': 'Success',
  'disruptions': 1,
  'pdb_violations': 0},
 {'name': 'Priority divergence: candidate victim PodGroup has higher priority than the Pods from that group',
  'nodes': ['node1', 'node2'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 10, 'group': 'pg1'},
           {'name': 'p2', 'uid': 'v2', 'node': 'node2', 'priority': 10, 'group': 'pg1'}],
  'groups': [{'name': 'pg1', 'priority': 100, 'mode': 'all'}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 100},
  'preemptor_pods': [{'name': 'p', 'uid': 'p', 'priority': 100}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 1), ('node2', 1)],
  'victims': [],
  'status': 'UnschedulableAndUnresolvable',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'Gang scheduling: schedule as many pods as possible without preempting higher priority pods, but still '
          'more than minCount',
  'nodes': ['node1', 'node2', 'node3', 'node4'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 10},
           {'name': 'p2', 'uid': 'v2', 'node': 'node2', 'priority': 10},
           {'name': 'p3', 'uid': 'v3', 'node': 'node3', 'priority': 1000},
           {'name': 'p4', 'uid': 'v4', 'node': 'node4', 'priority': 1000}],
  'groups': [],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000, 'min_count': 1},
  'preemptor_pods': [{'name': 'p-a', 'uid': 'p-a', 'priority': 1000},
                     {'name': 'p-b', 'uid': 'p-b', 'priority': 1000},
                     {'name': 'p-c', 'uid': 'p-c', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 1), ('node2', 1), ('node3', 1), ('node4', 1)],
  'victims': ['p1', 'p2'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'Gang scheduling: do not reprieve victim pod group of lower priority',
  'nodes': ['node1', 'node2', 'node3'],
  'pods': [{'name': 'v1', 'uid': 'v1', 'node': 'node1', 'priority': 100, 'group': 'victim-pg'},
           {'name': 'v2', 'uid': 'v2', 'node': 'node2', 'priority': 100, 'group': 'victim-pg'},
           {'name': 'v3', 'uid': 'v3', 'node': 'node3', 'priority': 10}],
  'groups': [{'name': 'victim-pg', 'priority': 100, 'mode': 'all', 'min_count': 1}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000, 'min_count': 1},
  'preemptor_pods': [{'name': 'p-a', 'uid': 'p-a', 'priority': 1000},
                     {'name': 'p-b', 'uid': 'p-b', 'priority': 1000},
                     {'name': 'p-c', 'uid': 'p-c', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 1), ('node2', 1), ('node3', 1)],
  'victims': ['v1', 'v2', 'v3'],
  'status': 'Success',
  'disruptions': 1,
  'pdb_violations': 0},
 {'name': 'Gang scheduling: preempt a pod group victim but do not schedule full pod group',
  'nodes': ['node1', 'node2', 'node3', 'node4'],
  'pods': [{'name': 'v1', 'uid': 'v1', 'node': 'node1', 'priority': 100, 'group': 'victim-pg'},
           {'name': 'v2', 'uid': 'v2', 'node': 'node2', 'priority': 100, 'group': 'victim-pg'},
           {'name': 'v3', 'uid': 'v3', 'node': 'node3', 'priority': 1000, 'group': 'victim-pg2'},
           {'name': 'v4', 'uid': 'v4', 'node': 'node4', 'priority': 1000, 'group': 'victim-pg2'}],
  'groups': [{'name': 'victim-pg', 'priority': 100, 'mode': 'all', 'min_count': 2},
             {'name': 'victim-pg2', 'priority': 1000, 'mode': 'all', 'min_count': 2}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000, 'mode': 'all', 'min_count': 1},
  'preemptor_pods': [{'name': 'p-a', 'uid': 'p-a', 'priority': 1000},
                     {'name': 'p-b', 'uid': 'p-b', 'priority': 1000},
                     {'name': 'p-c', 'uid': 'p-c', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 1), ('node2', 1), ('node3', 1), ('node4', 1)],
  'victims': ['v1', 'v2'],
  'status': 'Success',
  'disruptions': 1,
  'pdb_violations': 0},
 {'name': 'Basic scheduling: schedule as many pods as possible without preempting higher priority pods',
  'nodes': ['node1', 'node2', 'node3', 'node4'],
  'pods': [{'name': 'p1', 'uid': 'v1', 'node': 'node1', 'priority': 10},
           {'name': 'p2', 'uid': 'v2', 'node': 'node2', 'priority': 10},
           {'name': 'p3', 'uid': 'v3', 'node': 'node3', 'priority': 1000},
           {'name': 'p4', 'uid': 'v4', 'node': 'node4', 'priority': 1000}],
  'groups': [],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p-a', 'uid': 'p-a', 'priority': 1000},
                     {'name': 'p-b', 'uid': 'p-b', 'priority': 1000},
                     {'name': 'p-c', 'uid': 'p-c', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 1), ('node2', 1), ('node3', 1), ('node4', 1)],
  'victims': ['p1', 'p2'],
  'status': 'Success',
  'disruptions': 0,
  'pdb_violations': 0},
 {'name': 'Basic scheduling: do not reprieve victim pod group of lower priority',
  'nodes': ['node1', 'node2', 'node3'],
  'pods': [{'name': 'v1', 'uid': 'v1', 'node': 'node1', 'priority': 100, 'group': 'victim-pg'},
           {'name': 'v2', 'uid': 'v2', 'node': 'node2', 'priority': 100, 'group': 'victim-pg'},
           {'name': 'v3', 'uid': 'v3', 'node': 'node3', 'priority': 10}],
  'groups': [{'name': 'victim-pg', 'priority': 100, 'mode': 'all', 'min_count': 1}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000},
  'preemptor_pods': [{'name': 'p-a', 'uid': 'p-a', 'priority': 1000},
                     {'name': 'p-b', 'uid': 'p-b', 'priority': 1000},
                     {'name': 'p-c', 'uid': 'p-c', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 1), ('node2', 1), ('node3', 1)],
  'victims': ['v1', 'v2', 'v3'],
  'status': 'Success',
  'disruptions': 1,
  'pdb_violations': 0},
 {'name': 'Basic scheduling: preempt a pod group victim but do not schedule full pod group',
  'nodes': ['node1', 'node2', 'node3', 'node4'],
  'pods': [{'name': 'v1', 'uid': 'v1', 'node': 'node1', 'priority': 100, 'group': 'victim-pg'},
           {'name': 'v2', 'uid': 'v2', 'node': 'node2', 'priority': 100, 'group': 'victim-pg'},
           {'name': 'v3', 'uid': 'v3', 'node': 'node3', 'priority': 1000, 'group': 'victim-pg2'},
           {'name': 'v4', 'uid': 'v4', 'node': 'node4', 'priority': 1000, 'group': 'victim-pg2'}],
  'groups': [{'name': 'victim-pg', 'priority': 100, 'mode': 'all', 'min_count': 2},
             {'name': 'victim-pg2', 'priority': 1000, 'mode': 'all', 'min_count': 2}],
  'preemptor_group': {'name': 'preemptor-pg', 'priority': 1000, 'mode': 'all'},
  'preemptor_pods': [{'name': 'p-a', 'uid': 'p-a', 'priority': 1000},
                     {'name': 'p-b', 'uid': 'p-b', 'priority': 1000},
                     {'name': 'p-c', 'uid': 'p-c', 'priority': 1000}],
  'policy': 'PreemptLowerPriority',
  'pdbs': [],
  'caps': [('node1', 1), ('node2', 1), ('node3', 1), ('node4', 1)],
  'victims': ['v1', 'v2'],
  'status': 'Success',
  'disruptions': 1,
  'pdb_violations': 0}]


def build_pod(d: dict):
    pod = make_pod(d["name"], priority=d.get("priority"), labels=d.get("labels")).replace(uid=d.get("uid", d["name"]))
    if "group" in d:
        pod = pod.replace(scheduling_group=PodSchedulingGroup(d["group"]))
    if "start" in d:
        pod = pod.replace(start_time=float(d["start"]))
    if d.get("nnn"):
        pod = pod.replace(nominated_node_name=d["nnn"])
    if d.get("policy"):
        pod = pod.replace(preemption_policy=d["policy"])
    if d.get("preempted_condition"):
        pod = pod.replace(conditions=(PREEMPTED,))
    if d.get("terminating"):
        pod = pod.replace(deletion_timestamp=0.0)
    return pod.with_node_name(d["node"]) if d.get("node") else pod


def build_group(d: dict) -> PodGroup:
    policy = PodGroupSchedulingPolicy(basic=True) if "min_count" not in d else \
        PodGroupSchedulingPolicy(gang=GangSchedulingPolicy(d["min_count"]))
    mode = None if "mode" not in d else DisruptionMode(all=True) if d["mode"] == "all" else DisruptionMode(single=True)
    return PodGroup(name=d["name"], namespace="default", uid=d["name"], scheduling_policy=policy,
                    disruption_mode=mode, priority=d.get("priority"), preemption_policy=d.get("policy"))


def size(pod) -> int:
    v = pod.labels.get("size")
    return int(v) if v is not None and v.isdigit() else 1


class MockHandle:
    """The framework as the evaluator uses it: the mutable snapshot, the mock Filter (capacity by
    ``size`` labels), PreFilter extensions and Reserve that do nothing, as in upstream's framework
    built with the mock filter plugin alone."""

    def __init__(self, cache: Cache, capacities: list[tuple[str, int]], pdbs=()):
        self.mutable_snapshot = MutableSnapshot(cache)
        self.capacities = capacities
        self.client = self
        self._pdbs = list(pdbs)
        self.reserved: list = []

    def list_pdbs(self):
        return self._pdbs

    def run_filter_plugins_with_nominated_pods(self, state, pod, node_info):
        used = sum(size(pi.pod) for pi in node_info.pods)
        # the first entry of the node's name (upstream's loop; a node without one has no room)
        capacity = next((c for name, c in self.capacities if name == node_info.node().name), 0)
        if used + size(pod) > capacity:
            return Status(Code.UNSCHEDULABLE, "not enough capacity")
        return None

    def run_pre_filter_extension_add_pod(self, state, pod, pi, node_info):
        return None

    def run_pre_filter_extension_remove_pod(self, state, pod, pi, node_info):
        return None

    def run_reserve_plugins_reserve(self, state, pod, node_name):
        self.reserved.append((pod.name, node_name))
        return None

    def run_reserve_plugins_unreserve(self, state, pod, node_name):
        self.reserved.remove((pod.name, node_name))


class Assignment:
    """``mockProposedAssignment``."""

    def __init__(self, pod, node_name, state=None):
        self.pod, self.node_name, self.state = pod, node_name, state if state is not None else CycleState()


def build_cluster(nodes, pods, groups):
    cache = Cache(generic_workload=True)
    for name in nodes:
        cache.add_node(make_node(name))
    for g in groups:
        cache.add_pod_group(g)
    for pod in pods:
        cache.add_pod(pod)
    return cache


def mock_scheduling_func(handle: MockHandle, nodes: list[str], caps: list, preemptor_pods, min_count: int):
    """Upstream's ``mockSchedulingFunc``: each member on the next node (round-robin) with room in
    the current snapshot."""
    def run():
        snapshot = handle.mutable_snapshot.node_infos()
        assigned = {name: sum(size(pi.pod) for pi in snapshot.get(name).pods) for name in nodes}
        out = []
        idx = 0
        for pod in preemptor_pods:
            for step in range(len(nodes)):
                i = (idx + step) % len(nodes)
                name = nodes[i]
                if assigned[name] + size(pod) <= caps[i][1]:
                    out.append(Assignment(pod, name))
                    assigned[name] += size(pod)
                    idx = (i + 1) % len(nodes)
                    break
        if len(out) >= min_count:
            return out, Status(Code.SUCCESS)
        return None, Status(Code.UNSCHEDULABLE)
    return run


def node_pod_uids(cache: Cache) -> dict:
    table = cache.snapshot.table
    return {name: [pi.pod.uid for pi in table.pods[row]] for name, row in table.row_of.items()}


@pytest.mark.parametrize("case", SELECT_VICTIMS_CASES, ids=[c["name"] for c in SELECT_VICTIMS_CASES])
def test_select_victims_on_domain(case):
    pods = [build_pod(d) for d in case["pods"]]
    cache = build_cluster(case["nodes"], pods, [build_group(g) for g in case["groups"]])
    pdbs = [PodDisruptionBudget(name=f"pdb{i}", namespace="default",
                                selector=LabelSelector.from_match_labels(p["match"]),
                                disruptions_allowed=p["allowed"]) for i, p in enumerate(case["pdbs"])]
    handle = MockHandle(cache, case["caps"], pdbs)
    pg = build_group(case["preemptor_group"])
    preemptor_pods = [build_pod(d) for d in case["preemptor_pods"]]
    preemptor = PodGroupPreemptor(pg, preemptor_pods, case["policy"])
    min_count = pg.min_count if pg.is_gang else 1
    ev = PodGroupEvaluator(handle, executor=None)
    ms = handle.mutable_snapshot
    before = node_pod_uids(cache)
    ms.start_mutations()
    domain = new_domain_for_workload_preemption(ms.node_infos(), ms.pod_groups(), ms.pod_group_states(), "test-domain")
    res, status = ev.select_victims_on_domain(
        preemptor, domain, pdbs, mock_scheduling_func(handle, case["nodes"], case["caps"], preemptor_pods, min_count),
        ms.pod_groups())
    ms.end_mutations()
    assert node_pod_uids(cache) == before  # EndMutations restores the snapshot exactly
    assert handle.reserved == []
    assert status.code() == CODES[case["status"]], status.message()
    if status.code() != Code.SUCCESS:
        return
    assert {p.name for p in res.victims.pods} == set(case["victims"])
    assert res.num_pod_group_disruptions == case["disruptions"]
    assert res.victims.num_pdb_violations == case["pdb_violations"]


# The differential's gangs-8100039, reduced to its essence: selectVictimsOnDomain sorts the 13 units
# with sort.Slice(potentialVictims, MoreImportantVictim), which beyond 12 elements is pdqsort, not
# stable. Among the tied units (a gang's members bound in one cycle: same priority, start time and
# size) it puts pg-1-1 before pg-1-0, so FilterVictimsWithPDBViolation spends the PDB's one disruption
# on pg-1-1 and counts pg-1-0 as violating; the violating unit is reprieved first, and pg-1-1 (now
# without room) is the victim. A stable sort keeps pg-1-0 first and preempts it instead. Only the two
# tied `app: a` pods weigh (size 1 each, the node holds 2 with the preemptor); the rest are the
# scenario's units (priority, kind, size, start time, domain order) at size 0.
_Z = {"size": "0"}
SORT_SLICE_TIES_CASE: dict[str, Any] = {
    'name': 'sort.Slice beyond 12 units: ties in pdqsort order decide the PDB-violating victim',
    'nodes': ['node1'],
    'pods': [{'name': 'run-pg-0-0', 'node': 'node1', 'priority': 5, 'group': 'run-pg-0', 'start': 2, 'labels': _Z},
             {'name': 'run-pg-1-1', 'node': 'node1', 'priority': 5, 'group': 'run-pg-1', 'start': 6, 'labels': _Z},
             {'name': 'pg-0-0', 'node': 'node1', 'priority': 0, 'group': 'pg-0', 'start': 100, 'labels': _Z},
             {'name': 'pg-0-2', 'node': 'node1', 'priority': 0, 'group': 'pg-0', 'start': 100, 'labels': _Z},
             {'name': 'pg-1-0', 'node': 'node1', 'priority': 5, 'group': 'pg-1', 'start': 101,
              'labels': {'app': 'a', 'size': '1'}},
             {'name': 'run-pg-0-1', 'node': 'node1', 'priority': 5, 'group': 'run-pg-0', 'start': 3, 'labels': _Z},
             {'name': 'pg-1-run-0', 'node': 'node1', 'priority': 5, 'group': 'pg-1', 'start': 11, 'labels': _Z},
             {'name': 'pg-0-1', 'node': 'node1', 'priority': 0, 'group': 'pg-0', 'start': 100, 'labels': _Z},
             {'name': 'pg-0-3', 'node': 'node1', 'priority': 0, 'group': 'pg-0', 'start': 100, 'labels': _Z},
             {'name': 'pg-1-1', 'node': 'node1', 'priority': 5, 'group': 'pg-1', 'start': 101,
              'labels': {'app': 'a', 'size': '1'}},
             {'name': 'run-1', 'node': 'node1', 'priority': 0, 'start': 1, 'labels': _Z},
             {'name': 'run-pg-1-0', 'node': 'node1', 'priority': 5, 'group': 'run-pg-1', 'start': 5, 'labels': _Z},
             {'name': 'pg-1-run-1', 'node': 'node1', 'priority': 5, 'group': 'pg-1', 'start': 12, 'labels': _Z},
             {'name': 'run-pg-0-2', 'node': 'node1', 'priority': 5, 'group': 'run-pg-0', 'start': 4, 'labels': _Z},
             {'name': 'pg-1-2', 'node': 'node1', 'priority': 5, 'group': 'pg-1', 'start': 101, 'labels': _Z}],
    'groups': [{'name': 'run-pg-0', 'priority': 5, 'mode': 'all'},
               {'name': 'run-pg-1', 'priority': 5, 'mode': 'single'},
               {'name': 'pg-0', 'min_count': 4},  # no priority (0), no disruptionMode (single)
               {'name': 'pg-1', 'priority': 5, 'mode': 'single', 'min_count': 3}],
    'preemptor_group': {'name': 'pg-2', 'priority': 20},
    'preemptor_pods': [{'name': 'pg-2-0', 'priority': 20, 'labels': {'size': '1'}}],
    'policy': 'PreemptLowerPriority',
    'pdbs': [{'match': {'app': 'a'}, 'allowed': 1}],
    'caps': [('node1', 2)],
    'victims': ['pg-1-1'],  # a stable sort: pg-1-0
    'status': 'Success',
    'disruptions': 1,
    'pdb_violations': 0}


def test_select_victims_on_domain_sort_slice_ties():
    """``selectVictimsOnDomain``'s ``sort.Slice`` over more than 12 units (see the case above)."""
    test_select_victims_on_domain(SORT_SLICE_TIES_CASE)


def test_select_victims_on_domain_nominated_nodes():
    """``TestPodGroupEvaluator_SelectVictimsOnDomain_NominatedNodes``: only assignments with a
    node are nominated."""
    p1, p2 = make_pod("p1").replace(uid="p1"), make_pod("p2").replace(uid="p2")
    p3 = make_pod("p3", priority=10).replace(uid="p3").with_node_name("node1")
    cache = build_cluster(["node1"], [p3], [])
    handle = MockHandle(cache, [("node1", 10)])
    preemptor = PodGroupPreemptor(PodGroup(name="preemptor-pg", priority=1000), [p1, p2], "PreemptLowerPriority")
    ms = handle.mutable_snapshot
    ms.start_mutations()
    domain = new_domain_for_workload_preemption(ms.node_infos(), ms.pod_groups(), ms.pod_group_states(), "test-domain")

    def func():
        return [Assignment(p1, "node1"), Assignment(p2, "")], Status(Code.SUCCESS)
    res, status = PodGroupEvaluator(handle, None).select_victims_on_domain(preemptor, domain, [], func, ms.pod_groups())
    ms.end_mutations()
    assert status.is_success(), status.message()
    assert res.nominated_node_names == {("default", "p1"): NominatingInfo("node1", NominatingMode.OVERRIDE)}


def group_info(pg: PodGroup, pods) -> QueuedPodGroupInfo:
    entity = QueuedPodGroupInfo(pg)
    for pod in pods:
        entity.add_pod(QueuedPodInfo(PodInfo(pod)))
    return entity


def _pod(name, uid, priority, node=None, group=None, nnn=None, terminating=False):
    d = {"name": name, "uid": uid, "priority": priority}
    if node:
        d["node"] = node
    if group:
        d["group"] = group
    if nnn:
        d["nnn"] = nnn
    if terminating:
        d["terminating"] = d["preempted_condition"] = True
    return d


ONGOING = {("default", "p1"): NominatingInfo("", NominatingMode.OVERRIDE),
           ("default", "p2"): NominatingInfo("node1", NominatingMode.OVERRIDE)}
PREEMPT_CASES = {
    "Preemptor group returns success with current nominating infos if member has nominated node with terminating pods":
        (["node1"], [_pod("victim", "v1", 10, "node1", terminating=True)], [], {"name": "preemptor-pg", "priority": 1000},
         [_pod("p1", "p1", 1000), _pod("p2", "p2", 1000, nnn="node1")],
         (Code.SUCCESS, "ongoing preemption on nominated nodes"), ONGOING),
    "Preemptor group returns success with current nominating infos if nominated node has terminating pod belonging to "
    "a pod group of lower priority":
        (["node1"], [_pod("victim", "v1", 1000, "node1", "victim-pg", terminating=True)],
         [{"name": "victim-pg", "priority": 10, "mode": "all"}], {"name": "preemptor-pg", "priority": 1000},
         [_pod("p1", "p1", 1000), _pod("p2", "p2", 1000, nnn="node1")],
         (Code.SUCCESS, "ongoing preemption on nominated nodes"), ONGOING),
    "Preemptor group returns success with current nominating infos if nominated node has terminating pod belonging to "
    "a pod group of lower priority with DisruptionModePod":
        (["node1"], [_pod("victim", "v1", 1000, "node1", "victim-pg", terminating=True)],
         [{"name": "victim-pg", "priority": 10, "mode": "single"}], {"name": "preemptor-pg", "priority": 1000},
         [_pod("p1", "p1", 1000), _pod("p2", "p2", 1000, nnn="node1")],
         (Code.SUCCESS, "ongoing preemption on nominated nodes"), ONGOING),
    "PodGroup preemptor with PreemptNever policy does not perform preemption":
        (["node1", "node2", "node3"],
         [_pod("p1", "v1", 10, "node1"), _pod("p2", "v2", 10, "node2", "pg1"), _pod("p3", "v3", 10, "node3", "pg2")], [],
         {"name": "preemptor-pg", "priority": 1000, "policy": "Never"},
         [_pod("p-1", "p-1", 1000), _pod("p-2", "p-2", 1000)],
         (Code.UNSCHEDULABLE, "not eligible due to preemptionPolicy=Never."), None),
    "PodGroup preemptor with PreemptNever preemption policy does not perform preemption with PodGroup victims":
        (["node1", "node2", "node3"],
         [_pod("p1", "v1", 10, "node1"), _pod("p2", "v2", 10, "node2", "pg1"), _pod("p3", "v3", 10, "node3", "pg2")],
         [{"name": "pg1", "priority": 10, "mode": "single"}, {"name": "pg2", "priority": 10, "mode": "single"}],
         {"name": "preemptor-pg", "priority": 1000, "policy": "Never"},
         [_pod("p-1", "p-1", 1000), _pod("p-2", "p-2", 1000)],
         (Code.UNSCHEDULABLE, "not eligible due to preemptionPolicy=Never."), None),
}


@pytest.mark.parametrize("name", list(PREEMPT_CASES), ids=list(PREEMPT_CASES))
def test_preempt(name):
    """``TestPodGroupEvaluator_Preempt`` (GenericWorkload and PodGroupPreemptionPolicy on)."""
    nodes, pods, groups, pg, preemptor_pods, (code, message), nominating = PREEMPT_CASES[name]
    cache = build_cluster(nodes, [build_pod(d) for d in pods], [build_group(g) for g in groups])
    handle = MockHandle(cache, [])
    ev = PodGroupEvaluator(handle, executor=None, enable_pod_group_preemption_policy=True)

    def func():
        raise AssertionError("podGroupSchedulingFunc should not be called when ongoing preemption is detected")
    ms = handle.mutable_snapshot
    ms.start_mutations()
    # (the queued group entity holds its members only: they name the preemptor's PodGroup)
    members = [build_pod(dict(d, group=pg["name"])) for d in preemptor_pods]
    result, status = ev.preempt(group_info(build_group(pg), members), func)
    ms.end_mutations()
    assert (status.code(), status.message()) == (code, message)
    if code == Code.SUCCESS:
        assert result.nominating_infos == nominating


# -- DefaultPreemption: PreEnqueue (TestPreEnqueue's rows without CompositePodGroup; those with it below)
def _plugin(async_preemption=True, generic_workload=True, groups=()):
    from types import SimpleNamespace

    from fastsched.features import FeatureGates
    from fastsched.plugins.defaultpreemption import DefaultPreemption
    gates = FeatureGates({"SchedulerAsyncPreemption": async_preemption, "GenericWorkload": generic_workload})
    cache = Cache(generic_workload=True)
    for g in groups:
        cache.add_pod_group(g)
    return DefaultPreemption(None, SimpleNamespace(feature_gates=gates, pod_group_manager=cache, client=None))


PG1, PG2 = build_group({"name": "pg1", "priority": 1000}), build_group({"name": "pg2", "priority": 1000})
P = build_pod({"name": "p", "uid": "p", "priority": 1000})
P_OTHER = build_pod({"name": "p_other", "uid": "p_other", "priority": 1000})
P_GROUP1 = build_pod({"name": "p", "uid": "p", "priority": 1000, "group": "pg1"})
P_OTHER_GROUP1 = build_pod({"name": "p_other", "uid": "p_other", "priority": 1000, "group": "pg1"})
P_OTHER_GROUP2 = build_pod({"name": "p_other", "uid": "p_other", "priority": 1000, "group": "pg2"})
P_OTHER_MISSING = build_pod({"name": "p_other", "uid": "p_other", "priority": 1000, "group": "pg_missing"})
WAIT_POD = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for the preemption for this pod to be finished")
WAIT_GROUP = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for the preemption for this pod group to be finished")


@pytest.mark.parametrize("async_preemption,generic_workload,preempting,check,want", [
    (False, False, "p", P, None),
    (True, False, "p", P, WAIT_POD),
    (True, False, "p", P_OTHER, None),
    (True, True, "pg1", P_OTHER_GROUP1, WAIT_GROUP),
    (True, False, "pg1", P_OTHER_GROUP1, None),
    (True, True, "pg1", P_OTHER_GROUP2, None),
    (True, True, "pg1", P_OTHER_MISSING, None),
], ids=["AsyncPreemption disabled, returns nil",
        "AsyncPreemption enabled, same pod, returns UnschedulableAndUnresolvable",
        "AsyncPreemption enabled, different pod, returns nil",
        "GenericWorkload enabled, pod in same PodGroup, returns UnschedulableAndUnresolvable",
        "GenericWorkload disabled, pod in same PodGroup, returns nil",
        "GenericWorkload enabled, pod in different PodGroup, returns nil",
        "GenericWorkload enabled, pod group not found, returns nil"])
def test_pre_enqueue(async_preemption, generic_workload, preempting, check, want):
    """The preemptor's asynchronous preemption is under way (its uid in the executor's
    ``preempting`` set, a PodGroup's uid for a group preemptor)."""
    pl = _plugin(async_preemption, generic_workload, [PG1, PG2])
    if async_preemption:
        pl.evaluator.preempting.add(preempting)
    st = pl.pre_enqueue(check)
    assert (None if st is None else (st.code(), st.message())) == want


# -- TestPreEnqueue's CompositePodGroup rows ----------------------------------------------------------
def _cpg(name: str, parent: str | None = None):
    from fastsched.api.compositepodgroup import CompositePodGroup
    return CompositePodGroup(name=name, namespace="default", uid=name, parent_composite_pod_group_name=parent,
                             priority=1000)


def _child(name: str, parent: str) -> PodGroup:
    return build_group({"name": name, "priority": 1000}).replace(parent_composite_pod_group_name=parent)


@pytest.fixture
def composite_gate(monkeypatch):
    """The gate is not switchable for users yet: switchable for these tests (upstream's rows set
    ``feature.Features.EnableCompositePodGroup``)."""
    import dataclasses

    from fastsched.features import COMPOSITE_POD_GROUP, KNOWN_GATES
    monkeypatch.setitem(KNOWN_GATES, COMPOSITE_POD_GROUP,
                        dataclasses.replace(KNOWN_GATES[COMPOSITE_POD_GROUP], switchable=True))


def _composite_plugin(enabled: bool, pgs=(), cpgs=()):
    from types import SimpleNamespace

    from fastsched.features import FeatureGates
    from fastsched.plugins.defaultpreemption import DefaultPreemption
    gates = FeatureGates({"SchedulerAsyncPreemption": True, "GenericWorkload": True,
                          "TopologyAwareWorkloadScheduling": enabled, "CompositePodGroup": enabled})
    cache = Cache(generic_workload=True, composite_pod_group=enabled)
    for g in pgs:
        cache.add_pod_group(g)
    for c in cpgs:
        cache.add_composite_pod_group(c)
    return DefaultPreemption(None, SimpleNamespace(feature_gates=gates, pod_group_manager=cache, client=None))


# (CompositePodGroup, the groups of the preemptor's tree and the extra trees, the preemptor's root
# (whose UID the executor holds), the pod checked, want)
COMPOSITE_PRE_ENQUEUE_ROWS = {
    "CompositePodGroup enabled, pod in different leaf PodGroup but same root CompositePodGroup, returns "
    "UnschedulableAndUnresolvable": (True, [_child("pg1", "cpg1"), _child("pg2", "cpg1")], [_cpg("cpg1")], "cpg1",
                                     P_OTHER_GROUP2, WAIT_GROUP),
    "CompositePodGroup enabled, pod in different leaf PodGroup and different root CompositePodGroup, returns nil": (
        True, [_child("pg1", "cpg1"), _child("pg2", "cpg2")], [_cpg("cpg1"), _cpg("cpg2")], "cpg1", P_OTHER_GROUP2,
        None),
    "CompositePodGroup disabled, pod in different leaf PodGroup but same root CompositePodGroup, returns nil": (
        False, [_child("pg1", "cpg1"), _child("pg2", "cpg1")], [_cpg("cpg1")], "cpg1", P_OTHER_GROUP2, None),
    "CompositePodGroup enabled, parent CompositePodGroup is missing, returns nil": (
        True, [_child("pg1", "cpg_missing")], [], "pg1", P_OTHER_GROUP1, None),
    "CompositePodGroup enabled, pod in different leaf PodGroup under multi-level CompositePodGroup hierarchy, returns "
    "UnschedulableAndUnresolvable": (
        True, [_child("pg1", "child-cpg1"), _child("pg2", "child-cpg2")],
        [_cpg("root-cpg"), _cpg("child-cpg1", "root-cpg"), _cpg("child-cpg2", "root-cpg")], "root-cpg",
        P_OTHER_GROUP2, WAIT_GROUP),
    "CompositePodGroup enabled, intermediate parent CompositePodGroup missing, returns nil": (
        True, [_child("pg1", "child-cpg-missing")], [_cpg("child-cpg-missing", "missing-root")],
        "child-cpg-missing", P_OTHER_GROUP1, None),
}


@pytest.mark.parametrize("enabled,pgs,cpgs,preempting,check,want", list(COMPOSITE_PRE_ENQUEUE_ROWS.values()),
                         ids=list(COMPOSITE_PRE_ENQUEUE_ROWS))
def test_pre_enqueue_composite(composite_gate, enabled, pgs, cpgs, preempting, check, want):
    """The preemptor's root group is preempting asynchronously (its root's UID in the executor's
    ``preempting`` set: a root CompositePodGroup's for a composite preemptor)."""
    pl = _composite_plugin(enabled, pgs, cpgs)
    pl.evaluator.preempting.add(preempting)
    st = pl.pre_enqueue(check)
    assert (None if st is None else (st.code(), st.message())) == want


# -- DefaultPreemption: PodGroupPostFilter through the Scheduler ------------------------------------
def _scheduler(async_preemption: bool, nodes=("n0", "n1"), **kwargs):
    from fastsched import Scheduler
    from fastsched.features import FeatureGates
    gates = FeatureGates({"SchedulerAsyncPreemption": async_preemption, "GenericWorkload": True})
    s = Scheduler(feature_gates=gates, **kwargs)
    s.add_nodes([make_node(n, cpu="1") for n in nodes])
    s.add([{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}])
    return s


def _member(name, group, cpu="1"):
    return make_pod(name, cpu=cpu).replace(uid=name, scheduling_group=PodSchedulingGroup(group),
                                           priority_class_name="high")


def _gang(name, min_count, priority_class_name="high", mode=None):
    pg = build_group({"name": name, "min_count": min_count})
    return pg.replace(priority=None, priority_class_name=priority_class_name,
                      disruption_mode=mode or DisruptionMode(single=True))


@pytest.mark.parametrize("async_preemption", [True, False])
def test_gang_preempts_lower_priority_pods(async_preemption):
    s = _scheduler(async_preemption)
    s.add_pods([make_pod("low0", cpu="1"), make_pod("low1", cpu="1")])
    s.run()
    s.add(_gang("g", 2))
    s.add_pods([_member("m0", "g"), _member("m1", "g")])
    results = {r.pod.name: r for r in s.run()}
    assert {n: results[n].status for n in ("low0", "low1", "m0", "m1")} == {
        "low0": "Deleted", "low1": "Deleted", "m0": "Scheduled", "m1": "Scheduled"}
    assert results["low0"].message == "preempted by default/g on node cluster"
    history = [c["message"] for c in s.cluster.get_object("PodGroup", "g", "default").conditions]
    assert history == [""]  # PodGroupInitiallyScheduled True/Scheduled, after the preemption attempt


def test_preemption_dry_run_leaves_the_members_records_alone():
    """PodGroupPostFilter reruns the group's algorithm with the victims removed; the members'
    decision records are those of the group's cycle, not of that dry run: m0 failed there (no node
    fitted), m1 was not tried (PlacementFeasible gave up after m0), then both bound."""
    s = _scheduler(False, record="all")
    s.add_pods([make_pod("low0", cpu="1"), make_pod("low1", cpu="1")])
    s.run()
    s.add(_gang("g", 2))
    s.add_pods([_member("m0", "g"), _member("m1", "g")])
    results = {r.pod.name: r for r in s.run()}
    m0, m1 = results["m0"].history, results["m1"].history
    assert [r.attempt for r in m0] == [1, 2] and [r.attempt for r in m1] == [2]
    assert not m0[0].selected_node and m0[0].outcome == "Unschedulable"
    assert {m0[1].selected_node, m1[0].selected_node} == {"n0", "n1"}


def test_preemption_message_and_snapshot_restored():
    """The attempt that preempts: the group's condition carries ``pod group preemption: found a
    placement for podgroup, preempting 2 victims`` and the members are nominated; the cache's
    table is as it was until the victims' deletions land."""
    s = _scheduler(True)
    s.add_pods([make_pod("low0", cpu="1"), make_pod("low1", cpu="1")])
    s.run()
    fw = s.profiles["default-scheduler"]
    fw.plugins_map["DefaultPreemption"].api_delay = 5.0
    s.add(_gang("g", 2))
    s.add_pods([_member("m0", "g"), _member("m1", "g")])
    before = node_pod_uids(s.cache)
    s.run(until=1)
    assert node_pod_uids(s.cache) == before
    cond = s.cluster.get_object("PodGroup", "g", "default").conditions[0]
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"].endswith(", pod group preemption: found a placement for podgroup, preempting 2 victims")
    assert {s.cluster.pods[u].nominated_node_name for u in ("m0", "m1")} == {"n0", "n1"}
    # the members wait at PreEnqueue while the preemption runs
    st = fw.plugins_map["DefaultPreemption"].pre_enqueue(s.cluster.pods["m0"])
    assert (st.code(), st.message()) == WAIT_GROUP
    results = {r.pod.name: r.status for r in s.run()}
    assert results == {"low0": "Deleted", "low1": "Deleted", "m0": "Scheduled", "m1": "Scheduled"}


def test_disruption_mode_all_victim_is_preempted_whole():
    """A ``disruptionMode: all`` group is one victim: freeing one node for a one-pod gang
    preempts both of its pods (on two nodes)."""
    s = _scheduler(False)
    s.add([{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": 1}])
    s.add(_gang("victims", 2, "low", DisruptionMode(all=True)))
    s.add_pods([_member("v0", "victims").replace(priority_class_name="low"),
                _member("v1", "victims").replace(priority_class_name="low")])
    s.run()
    s.add(_gang("g", 1))
    s.add_pods([_member("m0", "g")])
    results = {r.pod.name: r.status for r in s.run()}
    assert results == {"v0": "Deleted", "v1": "Deleted", "m0": "Scheduled"}


def test_never_policy_does_not_preempt():
    """Without PodGroupPreemptionPolicy a member with ``preemptionPolicy: Never`` (here from its
    PriorityClass, as admission sets it) makes the group ineligible."""
    s = _scheduler(False)
    s.add([{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high-never"},
            "value": 1000, "preemptionPolicy": "Never"}])
    s.add_pods([make_pod("low0", cpu="1"), make_pod("low1", cpu="1")])
    s.run()
    s.add(_gang("g", 2, "high-never"))
    s.add_pods([_member("m0", "g").replace(priority_class_name="high-never"),
                _member("m1", "g").replace(priority_class_name="high-never")])
    assert s.cluster.pods["m0"].preemption_policy == "Never"
    results = {r.pod.name: r for r in s.run(until=1)}
    assert results["low0"].status == "Scheduled"
    cond = s.cluster.get_object("PodGroup", "g", "default").conditions[0]
    assert cond["message"].endswith(", pod group preemption: not eligible due to preemptionPolicy=Never.")


# -- TestDefaultPreemption_PodGroupPostFilter_InvalidSnapshot (every row) -------------------------
class FailingSession(MutableSnapshot):
    def __init__(self, cache, start_error=None, end_error=None):
        super().__init__(cache)
        self.start_error, self.end_error = start_error, end_error

    def start_mutations(self):
        if self.start_error:
            raise RuntimeError(self.start_error)
        super().start_mutations()

    def end_mutations(self):
        super().end_mutations()
        if self.end_error:
            raise RuntimeError(self.end_error)


@pytest.mark.parametrize("is_cpg,start_error,end_error,want", [
    (False, "start mutation error", None, "pod group preemption: failed to start mutations: start mutation error"),
    (False, None, "end mutation error", "pod group preemption: failed to end mutations: end mutation error"),
    (True, "start mutation error", None, "pod group preemption: failed to start mutations: start mutation error"),
    (True, None, "end mutation error", "pod group preemption: failed to end mutations: end mutation error"),
], ids=["PodGroup start mutation error", "PodGroup end mutation error", "CompositePodGroup start mutation error",
        "CompositePodGroup end mutation error"])
def test_pod_group_post_filter_invalid_snapshot(composite_gate, is_cpg, start_error, end_error, want):
    """Upstream's rows: node1 runs pod1 (low priority); the preemptor is PodGroup ``preemptor-pg-ok``
    or, with CompositePodGroup on, the childless CompositePodGroup ``cpg`` (both priority high)
    with the one pod ``p``; the scheduling function answers Unschedulable."""
    from types import SimpleNamespace

    from fastsched.api.compositepodgroup import CompositePodGroup
    from fastsched.features import FeatureGates
    from fastsched.framework.composite import COMPOSITE_POD_GROUP_KEY_TYPE, PodGroupInfo
    from fastsched.plugins.defaultpreemption import DefaultPreemption
    gates = FeatureGates({"SchedulerAsyncPreemption": False, "GenericWorkload": True,
                          "TopologyAwareWorkloadScheduling": is_cpg, "CompositePodGroup": is_cpg})
    cache = Cache(generic_workload=True, composite_pod_group=is_cpg)
    cache.add_node(make_node("node1", cpu="500m", memory="500"))
    cache.add_pod(build_pod({"name": "pod1", "uid": "pod1", "priority": 0, "node": "node1"}))
    preemptor_pods = [build_pod({"name": "p", "uid": "p", "priority": 1000})]
    if is_cpg:
        cpg = CompositePodGroup(name="cpg", namespace="default", priority=1000)
        entity = QueuedPodGroupInfo.from_tree(PodGroupInfo("default", "cpg", COMPOSITE_POD_GROUP_KEY_TYPE,
                                                           composite_pod_group=cpg, children=[]))
        for pod in preemptor_pods:
            entity.add_pod(QueuedPodInfo(PodInfo(pod)))
    else:
        pg = build_group({"name": "preemptor-pg-ok", "priority": 1000})
        cache.add_pod_group(pg)
        entity = group_info(pg, preemptor_pods)
    pl = DefaultPreemption(None, SimpleNamespace(feature_gates=gates, pod_group_manager=cache, client=None))
    pl.handle.mutable_snapshot = FailingSession(cache, start_error, end_error)
    pl.pod_group_evaluator.handle = pl.handle

    def func():
        return None, Status(Code.UNSCHEDULABLE)
    _, st = pl.pod_group_post_filter(CycleState(), entity, func)
    assert (st.code(), st.message()) == (Code.ERROR, want)


def test_pod_group_post_filter_composite_pod_group_without_victims(composite_gate):
    """Upstream ``TestDefaultPreemption_PodGroupPostFilter_CompositePodGroup`` (one case, no table):
    an empty cluster, GenericWorkload, TopologyAwareWorkloadScheduling and CompositePodGroup on, a
    childless CompositePodGroup preemptor (no priority) with the one pod ``p``, a scheduling
    function answering (nil, nil): UnschedulableAndUnresolvable, no victims."""
    from types import SimpleNamespace

    from fastsched.api.compositepodgroup import CompositePodGroup
    from fastsched.features import FeatureGates
    from fastsched.framework.composite import COMPOSITE_POD_GROUP_KEY_TYPE, PodGroupInfo
    from fastsched.plugins.defaultpreemption import DefaultPreemption
    gates = FeatureGates({"SchedulerAsyncPreemption": False, "GenericWorkload": True,
                          "TopologyAwareWorkloadScheduling": True, "CompositePodGroup": True})
    cache = Cache(generic_workload=True, composite_pod_group=True)
    cache.add_pod_group(build_group({"name": "preemptor-pg-ok", "priority": 1000}))
    entity = QueuedPodGroupInfo.from_tree(PodGroupInfo(
        "default", "cpg", COMPOSITE_POD_GROUP_KEY_TYPE, composite_pod_group=CompositePodGroup(name="cpg", namespace="default"),
        children=[]))
    entity.add_pod(QueuedPodInfo(PodInfo(build_pod({"name": "p", "uid": "p", "priority": 1000}))))
    pl = DefaultPreemption(None, SimpleNamespace(feature_gates=gates, pod_group_manager=cache, client=None,
                                                 mutable_snapshot=MutableSnapshot(cache)))
    pl.pod_group_evaluator.handle = pl.handle
    _, st = pl.pod_group_post_filter(CycleState(), entity, lambda: (None, None))
    assert (st.code(), st.message()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                         "pod group preemption: No preemption victims found for incoming preemptor")


# -- integration: test/integration/scheduler/podgroup/podgroup_test.go TestPodGroupScheduling --------
def _integration_scheduler():
    """One node of 4 CPUs (zone1), SchedulerAsyncPreemption on (its default), priority classes for
    the priorities the integration pods set directly."""
    from fastsched import Scheduler
    from fastsched.features import FeatureGates
    gates = FeatureGates({"GenericWorkload": True})
    s = Scheduler(feature_gates=gates)
    s.add_nodes([make_node("node", cpu="4", labels={"topology.kubernetes.io/zone": "zone1"})])
    s.add([{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": f"p{v}"}, "value": v}
           for v in (5, 10, 50, 100)])
    return s


def _ipod(name, cpu, priority, group=None):
    p = make_pod(name, cpu=cpu).replace(uid=name, priority_class_name=f"p{priority}")
    return p.replace(scheduling_group=PodSchedulingGroup(group)) if group else p


def _ipg(name, priority, min_count=None):
    d = {"name": name}
    if min_count is not None:
        d["min_count"] = min_count
    return build_group(d).replace(priority=None, priority_class_name=f"p{priority}",
                                  disruption_mode=DisruptionMode(single=True))


def _statuses(s):
    return {r.pod.name: r.status for r in s.run()}


def test_integration_basic_group_schedules_with_workload_aware_preemption():
    s = _integration_scheduler()
    s.add_pods([_ipod("low-priority-blocker", "2", 10)])
    assert _statuses(s) == {"low-priority-blocker": "Scheduled"}
    s.add(_ipg("pg1", 100))
    s.add_pods([_ipod(f"p{i}", "1", 100, "pg1") for i in range(1, 5)])
    got = _statuses(s)
    assert got == {"low-priority-blocker": "Deleted", "p1": "Scheduled", "p2": "Scheduled", "p3": "Scheduled",
                   "p4": "Scheduled"}


def test_integration_gang_schedules_with_workload_aware_preemption():
    s = _integration_scheduler()
    s.add_pods([_ipod(f"low-p{i}", "1", 10) for i in range(1, 5)])
    assert set(_statuses(s).values()) == {"Scheduled"}
    s.add(_ipg("pg1", 100, 3))
    s.add_pods([_ipod(f"p{i}", "1", 100, "pg1") for i in range(1, 5)])
    got = _statuses(s)
    assert got == {**{f"low-p{i}": "Deleted" for i in range(1, 5)}, **{f"p{i}": "Scheduled" for i in range(1, 5)}}
    cond = s.cluster.get_object("PodGroup", "pg1", "default").conditions[0]
    assert (cond["type"], cond["status"], cond["reason"]) == ("PodGroupInitiallyScheduled", "True", "Scheduled")


def test_integration_gang_schedules_with_partial_workload_aware_preemption():
    s = _integration_scheduler()
    s.add_pods([_ipod("very-low-p1", "1", 5), _ipod("very-low-p2", "1", 5), _ipod("low-p1", "1", 10),
                _ipod("low-p2", "1", 10)])
    assert set(_statuses(s).values()) == {"Scheduled"}
    s.add(_ipg("mid-pg", 50, 2))
    s.add_pods([_ipod("mid-p1", "1", 50, "mid-pg"), _ipod("mid-p2", "1", 50, "mid-pg")])
    got = _statuses(s)
    assert got == {"very-low-p1": "Deleted", "very-low-p2": "Deleted", "low-p1": "Scheduled", "low-p2": "Scheduled",
                   "mid-p1": "Scheduled", "mid-p2": "Scheduled"}


def test_integration_workload_aware_preemption_invocation_event():
    """TestWorkloadAwarePreemptionInvocation: a victim's Preempted event reads ``Preempted by
    podgroup <uid> on node cluster`` (the candidate of a pod group preemption is the cluster)."""
    from types import SimpleNamespace

    events, deleted = [], []
    recorder = SimpleNamespace(eventf=lambda obj, related, kind, reason, action, msg: events.append((obj.name, reason,
                                                                                                     msg)))
    client = SimpleNamespace(preempt_pod=lambda victim, preemptor, node: deleted.append((victim.name, preemptor.name,
                                                                                          node)),
                             get_pod_by_uid=lambda uid: object())
    handle = SimpleNamespace(event_recorder=recorder, client=client, get_waiting_pod=lambda uid: None)
    ev = PodGroupEvaluator(handle, SimpleNamespace(enable_async_preemption=False,
                                                   _clear_lower_priority_nominations=lambda *a: False))
    pg = build_group({"name": "pg1", "priority": 100, "mode": "all", "min_count": 3})
    low = build_pod({"name": "low-1", "uid": "low-1", "priority": 10, "node": "node"})
    from fastsched.plugins.defaultpreemption.podgroup_preemption import GroupVictims, SelectVictimsResult
    res = SelectVictimsResult({}, GroupVictims([low], 0), 0)
    preemptor = PodGroupPreemptor(pg, [], "PreemptLowerPriority")
    assert ev.actuate(res, group_info(pg, []), preemptor) is None
    assert deleted == [("low-1", "pg1", "cluster")]
    assert events == [("low-1", "Preempted", "Preempted by podgroup pg1 on node cluster")]


def test_fork_preempts_on_its_own_snapshot():
    """A fork's frameworks hold the fork's mutable snapshot: its group preemption leaves the
    original scheduler's cluster and table as they were."""
    from fastsched.scheduler.fork import fork_scheduler
    s = _integration_scheduler()
    s.add_pods([_ipod(f"low-p{i}", "1", 10) for i in range(1, 5)])
    s.run()
    s.add(_ipg("pg1", 100, 3))
    before = node_pod_uids(s.cache)
    clone = fork_scheduler(s)
    assert clone.profiles["default-scheduler"].mutable_snapshot._cache is clone.cache is not s.cache
    clone.add_pods([_ipod(f"p{i}", "1", 100, "pg1") for i in range(1, 5)])
    assert {r.pod.name for r in clone.run() if r.status == "Deleted"} == {f"low-p{i}" for i in range(1, 5)}
    assert node_pod_uids(s.cache) == before
    assert {r.status for r in s.pod_results()} == {"Scheduled"}


# -- PodGroupPreemptionPolicy ---------------------------------------------------------------------------
# types_test.go TestNewPodGroupPreemptorResolvesPreemptionPolicy, the PodGroup rows (the
# CompositePodGroup ones need that gate): (group policy, member policies, gate, wanted)
RESOLVE_POLICY = {
    "PreemptionPolicy PreemptNever is resolved from PodGroup, ignoring policy in pod, with PodGroupPreemptionPolicy "
    "enabled": ("Never", ["PreemptLowerPriority"], True, "Never"),
    "PreemptionPolicy PreemptLowerPriority is resolved from PodGroup, ignoring different policies in pods, with "
    "PodGroupPreemptionPolicy enabled": ("PreemptLowerPriority", ["PreemptLowerPriority", None], True,
                                         "PreemptLowerPriority"),
    "PreemptionPolicy is resolved from pods with PodGroupPreemptionPolicy disabled": (
        "Never", ["PreemptLowerPriority"], False, "PreemptLowerPriority"),
    "PreemptionPolicy is resolved from pods when multiple pods have different policies, with PodGroupPreemptionPolicy "
    "disabled": ("PreemptLowerPriority", ["Never", "PreemptLowerPriority", None], False, "Never"),
}


@pytest.mark.parametrize("name", list(RESOLVE_POLICY), ids=list(RESOLVE_POLICY))
def test_new_pod_group_preemptor_resolves_preemption_policy(name):
    from fastsched.plugins.defaultpreemption.podgroup_preemption import resolve_preemption_policy
    group_policy, pod_policies, gate, want = RESOLVE_POLICY[name]
    pg = build_group({"name": "pg"}).replace(preemption_policy=group_policy)
    pods = [make_pod(f"p-{i}").replace(preemption_policy=p) for i, p in enumerate(pod_policies)]
    assert resolve_preemption_policy(pg, pods, gate) == want


# test/integration/scheduler/preemption/podgroup/podgrouppreemption_test.go TestPodGroupPreemption, the
# PodGroupPreemptionPolicy rows: one node of 3 CPUs, three running pods of priority 10 (1 CPU each), a
# gang of three (minCount 3, priority 100, 1 CPU each). The integration API server sets priorities
# as given (no Priority admission): (group policy, member policy, gate, preempts)
POLICY_INTEGRATION = {
    "PodGroup with PreemptNever preemption policy does not perform preemption, with PodGroupPreemptionPolicy "
    "enabled": ("Never", "Never", True, False),
    "PodGroup with PreemptLowerPriority preemption policy performs preemption, with PodGroupPreemptionPolicy "
    "enabled": ("PreemptLowerPriority", None, True, True),
    "PodGroup with default preemption policy performs preemption, with PodGroupPreemptionPolicy enabled": (
        None, None, True, True),
    "PodGroup with PreemptNever preemption policy in all pods does not perform preemption, with "
    "PodGroupPreemptionPolicy disabled": (None, "Never", False, False),
}


@pytest.mark.parametrize("name", list(POLICY_INTEGRATION), ids=list(POLICY_INTEGRATION))
def test_integration_pod_group_preemption_policy(name):
    from fastsched import Scheduler
    from fastsched.features import FeatureGates
    group_policy, member_policy, gate, preempts = POLICY_INTEGRATION[name]
    s = Scheduler(feature_gates=FeatureGates({"GenericWorkload": True, "PodGroupPreemptionPolicy": gate}))
    s.cluster.priority_admission = False
    s.add_nodes([make_node("node1", cpu="3", memory="4Gi", pods=32)])
    s.add_pods([make_pod(f"low-{i}", cpu="1", priority=10).replace(uid=f"low-{i}") for i in (1, 2, 3)])
    assert set(_statuses(s).values()) == {"Scheduled"}
    pg = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg1",
                                                                                      "namespace": "default"},
          "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}, "priority": 100}}
    if group_policy is not None:
        pg["spec"]["preemptionPolicy"] = group_policy
    s.add(pg)
    assert s.cluster.get_object("PodGroup", "pg1", "default").preemption_policy == (
        (group_policy or "PreemptLowerPriority") if gate else None)
    s.add_pods([make_pod(f"high-{i}", cpu="1", priority=100).replace(
        uid=f"high-{i}", scheduling_group=PodSchedulingGroup("pg1"),
        preemption_policy=member_policy or "PreemptLowerPriority") for i in (1, 2, 3)])
    # the group fails at 0 and preempts; it has no rejector plugins (upstream sets none on a group
    # entity), so it backs off in the error backoff queue, which SchedulerPopFromBackoffQ's Pop does
    # not take from: its 1 s backoff, truncated to its window, ends when the next window starts (2)
    got = {r.pod.name: r.status for r in s.run(until=2)}
    if preempts:
        assert got == {**{f"low-{i}": "Deleted" for i in (1, 2, 3)}, **{f"high-{i}": "Scheduled" for i in (1, 2, 3)}}
    else:
        assert {k: v for k, v in got.items() if k.startswith("high")} == {f"high-{i}": "Unschedulable"
                                                                          for i in (1, 2, 3)}
        assert all(s.cluster.pods[f"low-{i}"].node_name == "node1" for i in (1, 2, 3))
        cond = s.cluster.get_object("PodGroup", "pg1", "default").conditions[0]
        assert cond["message"].endswith("pod group preemption: not eligible due to preemptionPolicy=Never.")


def test_sort_victims_orders_units_not_started_by_creation():
    """``NewVictim`` takes ``GetPodStartTime``'s ``time.Now()`` for a pod not started, so upstream's
    ``MoreImportantVictim`` never ties two such units: the one made first is earlier (more
    important). Over more than 12 units ``sort.Slice`` (pdqsort) would move tied units; these keep
    their creation order among themselves."""
    from fastsched.plugins.defaultpreemption.podgroup_preemption import new_victim, sort_victims
    rng = __import__("random").Random(3)
    units = []
    for i in range(40):
        started = rng.random() < 0.4
        pod = build_pod({"name": f"p{i}", "node": "node1", "priority": rng.choice((5, 5, 0)),
                         **({"start": rng.randrange(3)} if started else {})})
        units.append(new_victim([PodInfo(pod)], pod.priority or 0, "pod"))
    got = sort_victims(units)
    for prio in (5, 0):
        made = [u.pods()[0].pod.name for u in units if u.priority() == prio and u.pods()[0].pod.start_time is None]
        out = [u.pods()[0].pod.name for u in got if u.priority() == prio and u.pods()[0].pod.start_time is None]
        assert out == made
    # and they follow the started ones of their priority (now is after every start)
    assert [u.priority() for u in got] == sorted((u.priority() for u in units), reverse=True)
