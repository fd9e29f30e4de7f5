package report

import (
	"fmt"
	"strings"

	"github.com/rollcheck/rollcheck/check"
)

// writeDrains writes, for the rows whose disruptions drained nodes, each drain: its node, the
// evictions the API accepted and refused (429: the PodDisruptionBudget allowed none then), how
// long the drain took, when the replacements were ready, and whether it was blocked.
func writeDrains(p func(string, ...any), rows []Row) {
	var drained []Row
	for _, r := range rows {
		if r.Config.Disruption.Info().Evicts && len(r.Disruptions) > 0 {
			drained = append(drained, r)
		}
	}
	if len(drained) == 0 {
		return
	}
	p("\n## Node drains\n\n")
	p("Each drain cordoned the node running the most ready pods of the app, evicted the app's pods on it through the eviction API (other pods on the node stay), asked again 5 s after each eviction refused with 429 (the PodDisruptionBudget allowed no disruption then), waited until the evicted pods were gone and uncordoned the node. Drain time is from the drain's start until the last evicted pod was gone; replacements ready is when the Deployment had all its replicas ready again. A drain not finished within its timeout is blocked: the node was uncordoned and the row went on.\n\n")
	p("%s", drainTable.markdownHeader())
	for _, r := range drained {
		c := rowCells(r)
		budget := "none"
		if b := r.Config.PDB; b != nil {
			budget = b.String()
			if r.Config.PDBFromManifests {
				budget += " (manifests)"
			}
		}
		for _, d := range r.Disruptions {
			dr := d.Drain
			if dr == nil {
				continue
			}
			drainTime, ready, blocked := "—", "—", "no"
			if t, ok := d.DrainTime(); ok {
				drainTime = fmt.Sprintf("%.1f s", t.Seconds())
			}
			if t, ok := d.ReplacementsAfter(); ok {
				ready = fmt.Sprintf("%.1f s", t.Seconds())
			}
			if dr.Blocked {
				blocked = check.BlockedNote([]check.DisruptionResult{d})
			}
			n := fmt.Sprintf("%d/%d", d.N, len(r.Disruptions))
			if r.Repeat > 0 {
				n = fmt.Sprintf("run %d: %s", r.Repeat, n) // a repeated row's runs share its name
			}
			cols := []string{c.Scenario, n, dr.Node, budget,
				fmt.Sprintf("%d of %d", dr.Evictions, len(dr.Pods)), fmt.Sprint(dr.Refused429), drainTime, ready, blocked}
			for i := range cols {
				cols[i] = mdEscape(cols[i])
			}
			p("| %s |\n", strings.Join(cols, " | "))
		}
	}
}
