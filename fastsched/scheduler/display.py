"""HTML views of the scheduler's answers, for notebooks (``_repr_html_``) and the simulation
report: a pod's result with its decision records, one decision record, an explanation.

One module for the views, below the classes it renders: they take the objects as they come
(duck-typed), so :mod:`.result`, :mod:`.records` and :mod:`.explain` import it, never the reverse.
"""
from __future__ import annotations

from typing import Any

from ..framework.status import Code, Status

def _esc(value: Any) -> str:
    import html

    return html.escape("" if value is None else str(value))


def _status_cell(s: Status | None) -> str:
    if s is None or s.code() == Code.SUCCESS:
        return '<span class="fs-ok">Success</span>'
    return f'<span class="fs-bad">{_esc(s.code())}</span> {_esc(s.message())}'


def _statuses_html(title: str, statuses: dict) -> str:
    if not statuses:
        return ""
    rows = "".join(f"<tr><td>{_esc(p)}</td><td>{_status_cell(s)}</td></tr>" for p, s in statuses.items())
    return f'<tr><th>{_esc(title)}</th><td><table class="fs-inner">{rows}</table></td></tr>'


def _pre_point_rows(point: str, statuses: dict, next_point: str) -> list[str]:
    """Rows for PreFilter or PreScore: the plugins that failed (their statuses), then those that
    answered Skip (their ``next_point`` does not run)."""
    rows = []
    bad = {p: s for p, s in statuses.items() if s is not None and s.code() not in (Code.SUCCESS, Code.SKIP)}
    if bad:
        rows.append(_statuses_html(point, bad))
    skipped = [p for p, s in statuses.items() if s is not None and s.code() == Code.SKIP]
    if skipped:
        rows.append(f'<tr><th>{point}</th><td class="fs-skip">skipped (their {next_point} does not run): '
                    f'{_esc(", ".join(skipped))}</td></tr>')
    return rows


def record_html(rec: Any, top: int = 5, examples: int = 3) -> str:
    """An HTML fragment for one decision record (:class:`~fastsched.scheduler.records.AttemptRecord`):
    which plugin rejected which nodes (counts, reasons, example nodes), the score breakdown of the
    chosen node against the ``top - 1`` runners-up, the binding cycle's statuses and PostFilter's
    outcome (nominated node, victims)."""
    from collections import Counter

    outcome_class = "fs-ok" if rec.outcome == "Scheduled" else "fs-bad"
    parts = [f'<div class="fs-record"><div class="fs-record-head"><b>{_esc(rec.pod_key)}</b> attempt '
             f'{rec.attempt} at t={rec.time:g}s, profile {_esc(rec.profile)}: '
             f'<span class="{outcome_class}">{_esc(rec.outcome or "in flight")}</span>'
             f'{" on <b>" + _esc(rec.selected_node) + "</b>" if rec.selected_node and rec.outcome == "Scheduled" else ""}'
             f'</div>']
    if rec.message and rec.outcome != "Scheduled":
        parts.append(f'<div class="fs-message">{_esc(rec.message)}</div>')
    parts.append('<table class="fs-steps">')
    # Skip is PreFilter saying "nothing to check for this pod": its Filter does not run
    parts.extend(_pre_point_rows("PreFilter", rec.pre_filter, "Filter"))
    for plugin, nodes in rec.pre_filter_nodes.items():
        narrowed_to = ", ".join(_esc(n) for n in nodes[:examples]) + (" ..." if len(nodes) > examples else "")
        parts.append(f"<tr><th>PreFilter</th><td>{_esc(plugin)} narrowed to {len(nodes)} node(s): {narrowed_to}</td></tr>")
    if rec.nominated_node:
        parts.append(f"<tr><th>Nominated node</th><td>{_esc(rec.nominated_node)} tried first: "
                     f"{_status_cell(rec.nominated_node_status)}</td></tr>")
    feasible = int((rec.filter_codes == 0).sum())
    parts.append(f"<tr><th>Filter</th><td>{rec.nodes_examined} of {rec.nodes_total} nodes examined "
                 f"({rec.nodes_not_examined} not examined), {feasible} passed every plugin")
    rejected = rec.rejected_by()
    if rejected:
        rows = []
        for plugin, nodes in sorted(rejected.items(), key=lambda kv: -len(kv[1])):
            reasons = Counter(nodes.values()).most_common(3)
            reason_text = "; ".join(f"{_esc(r)} ({c})" for r, c in reasons)
            example = ", ".join(_esc(n) for n in list(nodes)[:examples])
            rows.append(f'<tr><td class="fs-plugin">{_esc(plugin)}</td><td class="fs-num">{len(nodes)}</td>'
                        f"<td>{reason_text}</td><td>{example}{' ...' if len(nodes) > examples else ''}</td></tr>")
        parts.append('<table class="fs-inner fs-rejections"><tr><th>rejected by</th><th>nodes</th>'
                     '<th>reasons (nodes)</th><th>e.g.</th></tr>' + "".join(rows) + "</table>")
    parts.append("</td></tr>")
    for ext in rec.extender_prioritize:
        parts.append(f"<tr><th>Extender prioritize</th><td>{_esc(ext['name'])} (weight {ext['weight']}): "
                     f"{_esc(ext['error']) or _esc(dict(list(ext['scores'].items())[:top]))}</td></tr>")
    parts.extend(_pre_point_rows("PreScore", rec.pre_score, "Score"))
    table = rec.score_table()
    if table:
        chosen = [r for r in table if r["node"] == rec.selected_node]
        shown = (chosen + [r for r in table if r["node"] != rec.selected_node])[:top]
        head = "".join(f"<th>{_esc(p)}<br><small>x{w}</small></th>"
                       for p, w in zip(rec.score_plugins, rec.score_weights.tolist()))
        rows = []
        for r in shown:
            mark = ' class="fs-chosen"' if r["node"] == rec.selected_node else ""
            cells = "".join(f'<td class="fs-num" title="raw {d["raw"]}, normalized {d["normalized"]}">'
                            f'{d["weighted"]}</td>' for d in r["plugins"].values())
            rows.append(f"<tr{mark}><td>{_esc(r['node'])}</td>{cells}<td class=\"fs-num\"><b>{r['total']}</b></td></tr>")
        parts.append(f"<tr><th>Score</th><td>{len(table)} nodes scored; selected node first, then the "
                     f"runners-up (weighted scores; hover for raw and normalized)"
                     f'<table class="fs-inner fs-scores"><tr><th>node</th>{head}<th>total</th></tr>'
                     + "".join(rows) + "</table></td></tr>")
    elif rec.selected_node:
        parts.append(f"<tr><th>Score</th><td>not run: {_esc(rec.selected_node)} was the only feasible node</td></tr>")
    if rec.selected_node:
        parts.append(f"<tr><th>Selected node</th><td>{_esc(rec.selected_node)}</td></tr>")
    for title, statuses in (("Reserve", rec.reserve), ("Permit", rec.permit), ("PreBind", rec.pre_bind),
                            ("Bind", rec.bind)):
        parts.append(_statuses_html(title, statuses))
    if rec.permit_wait:
        parts.append(f"<tr><th>Permit wait</th><td>{_esc(rec.permit_wait)}</td></tr>")
    if rec.post_filter:
        parts.append(_statuses_html("PostFilter", rec.post_filter))
        nominated = _esc(rec.nominated_node_name) if rec.nominated_node_name else "none"
        victims = ", ".join(f"{_esc(k)}" for k, _ in rec.victims) or "none"
        parts.append(f'<tr><th>Preemption</th><td>nominated node: <b>{nominated}</b>; victims: '
                     f'<span class="fs-victims">{victims}</span></td></tr>')
    parts.append("</table></div>")
    return "".join(parts)


NOTEBOOK_STYLE = """<style>
.fs-record{font-family:sans-serif;font-size:13px;border:1px solid #ccc;border-radius:4px;padding:6px;margin:4px 0}
.fs-record table{border-collapse:collapse}.fs-record th,.fs-record td{border:1px solid #ddd;padding:2px 6px;
text-align:left;vertical-align:top}.fs-ok{color:#1a7f37}.fs-bad{color:#cf222e;font-weight:bold}
.fs-num{text-align:right}.fs-chosen{background:#e6f4ea}.fs-message{color:#555;margin:2px 0 4px}.fs-skip{color:#666}
</style>"""


def pod_result_html(res: Any) -> str:
    """HTML for a :class:`~fastsched.scheduler.scheduler.PodResult`: outcome and decision records."""
    head = (f"<div class='fs-record-head'><b>{_esc(res.pod.key)}</b>: {_esc(res.status)}"
            f"{' on <b>' + _esc(res.node_name) + '</b>' if res.node_name else ''} after {res.attempts} attempt(s)"
            f"<div class='fs-message'>{_esc(res.message)}</div></div>")
    if not res.history:
        body = "<i>no decision records (Scheduler(record='all') keeps them)</i>"
    else:
        body = "".join(record_html(r) for r in res.history)
    return NOTEBOOK_STYLE + f"<div>{head}{body}</div>"


def explanation_html(e: Any, top: int = 10) -> str:
    feasible = e.feasible
    rows = []
    plugins = list(e.scores)
    order = sorted(e.total, key=lambda n: -e.total[n])[:top]
    for n in order:
        cells = "".join(f'<td class="fs-num">{e.scores[p][n].weighted if n in e.scores[p] else ""}</td>'
                        for p in plugins)
        mark = ' class="fs-chosen"' if n in e.best_nodes else ""
        rows.append(f"<tr{mark}><td>{_esc(n)}</td>{cells}<td class='fs-num'><b>{e.total[n]}</b></td></tr>")
    head = "".join(f"<th>{_esc(p)}</th>" for p in plugins)
    from collections import Counter

    rejections: Counter = Counter()
    for verdicts in e.filter.values():
        for plugin, s in verdicts.items():
            if s is not None:
                rejections[(plugin, s.message())] += 1
    rej_rows = "".join(f"<tr><td>{_esc(p)}</td><td>{_esc(m)}</td><td class='fs-num'>{c}</td></tr>"
                       for (p, m), c in rejections.most_common(top))
    parts = [NOTEBOOK_STYLE, f"<div class='fs-record'><div class='fs-record-head'><b>{_esc(e.pod.key)}</b> "
             f"(profile {_esc(e.profile)}): {len(feasible)} of {len(e.node_names)} nodes feasible; best: "
             f"{_esc(', '.join(e.best_nodes)) or 'none'}</div>"]
    if e.error is not None:
        parts.append(f"<div class='fs-message'>{_status_cell(e.error)}</div>")
    if rej_rows:
        parts.append("<table><tr><th>Filter plugin</th><th>reason</th><th>nodes</th></tr>" + rej_rows + "</table>")
    if rows:
        parts.append(f"<table><tr><th>node</th>{head}<th>total</th></tr>" + "".join(rows) + "</table>")
    g = getattr(e, "pod_group", None)
    if g is not None:
        policy = "no such PodGroup" if g.policy is None else (
            f"gang, minCount {g.min_count}" if g.policy == "gang" else "basic")
        parts.append(f"<div class='fs-message'><b>pod group {_esc(g.namespace)}/{_esc(g.name)}</b> ({policy}): "
                     + (f"its cycle now would schedule {len(g.scheduled)} of {len(g.members)} member(s)"
                        if g.cycle_ran else f"no group cycle would run now: {_esc(g.reason)}") + "</div>")
        if g.members:
            parts.append("<table><tr><th>member</th><th>result</th><th>node</th><th>message</th></tr>" + "".join(
                f"<tr><td>{_esc(k)}</td><td>{_esc(st)}</td><td>{_esc(node)}</td><td>{_esc(msg)}</td></tr>"
                for k, (st, node, msg) in g.members.items()) + "</table>")
    parts.append("</div>")
    return "".join(parts)

