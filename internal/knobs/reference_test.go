package knobs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// targetTable is the Markdown table of make's e2e targets that docs/maintainers.md holds: each
// target's label filter, suites and cluster, from Targets and the knobs' defaults.
func targetTable() string {
	def := func(name string) string { v, _ := Get(func(string) string { return "" }, name); return v }
	cell := func(v string) string { return "`" + strings.ReplaceAll(v, "|", `\|`) + "`" }
	var b strings.Builder
	b.WriteString("| make target | label filter (`ROLLCHECK_LABELS`) | suites (`ROLLCHECK_SUITES`) | cluster | files |\n|---|---|---|---|---|\n")
	for _, t := range Targets {
		labels, suites := "the default", cell(def(EnvSuites))
		if t.Labels != "" {
			labels = cell(t.Labels)
		}
		if t.Suites != "" {
			suites = cell(t.Suites)
		}
		cluster := cell(def(EnvName))
		if t.Cluster != "" {
			cluster = cell(t.Cluster)
		}
		if t.Workers != "" {
			cluster += fmt.Sprintf(", %s workers", t.Workers)
		}
		if t.ProxyMode != "" {
			cluster += ", kube-proxy " + cell(t.ProxyMode)
		}
		if t.NodeImage != "" {
			cluster += ", node image " + cell(t.NodeImage)
		}
		files := cell(def(EnvArtifacts))
		if t.Artifacts != "" {
			files = cell(filepath.Join(def(EnvArtifacts), t.Artifacts))
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", t.Name, labels, suites, cluster, files)
	}
	return b.String()
}

// docs/maintainers.md's table of make's e2e targets, and the default label filter it quotes, are
// the code's (Targets, the ROLLCHECK_LABELS default).
func TestReferenceTargetTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "docs", "maintainers.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc, want := string(b), targetTable()
	if !strings.Contains(doc, want) {
		t.Errorf("docs/maintainers.md lacks the table of make's e2e targets (internal/knobs.Targets); put in this one:\n%s", want)
	}
	if def, _ := Get(func(string) string { return "" }, EnvLabels); !strings.Contains(doc, "`"+def+"`") {
		t.Errorf("docs/maintainers.md does not quote ROLLCHECK_LABELS' default, `%s`", def)
	}
}
