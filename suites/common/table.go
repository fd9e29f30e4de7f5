package common

import (
	. "github.com/onsi/ginkgo/v2"

	"github.com/rollcheck/rollcheck/internal/scenario"
)

// Table declares one spec per Scenario: a DescribeTable whose rows are named by the
// Scenario, labelled by disruption and expectation, each with its own SpecTimeout.
func Table(title, suite string, env **Env, rows ...scenario.Scenario) bool {
	entries := make([]TableEntry, 0, len(rows))
	for _, s := range rows {
		entries = append(entries, Entry(nil, RowLabels(s), SpecTimeout(RowTimeout(s)), s))
	}
	return DescribeTable(title, Serial, func(ctx SpecContext, s scenario.Scenario) {
		(*env).RunScenario(ctx, suite, s)
	}, func(s scenario.Scenario) string { return RowName(s) }, entries)
}
