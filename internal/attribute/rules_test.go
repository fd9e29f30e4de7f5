package attribute

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/timeline"
)

// Rules state the order of trying once: timeline.Phases follows them, each phase has one
// entry with its doc and reference row and a way to be tried, and the last, unknown, matches
// every request in every row.
func TestRules(t *testing.T) {
	var phases []timeline.Phase
	for _, r := range Rules {
		phases = append(phases, r.Phase)
		if r.Doc == "" || strings.Contains(r.Doc, "\n") || r.Ref.Rule == "" || r.Ref.Evidence == "" || r.Ref.Tolerance == "" {
			t.Errorf("%s: a one-line Doc and every column of Ref, please: %+v", r.Phase, r)
		}
		if r.Pod == nil && r.Whole == nil {
			t.Errorf("%s: neither Pod nor Whole: it can never match", r.Phase)
		}
	}
	if !slices.Equal(phases, timeline.Phases) {
		t.Errorf("timeline.Phases is %v; the rules are tried in the order %v", timeline.Phases, phases)
	}
	last := Rules[len(Rules)-1]
	if last.Phase != timeline.PhaseUnknown || last.Applies != nil || last.Pod != nil {
		t.Fatalf("the last rule is %s, which must be unknown, in every row, of the whole Service", last.Phase)
	}
	rw := &row{}
	if _, ok := last.Whole(newRequest(rw, &loadgen.Request{Seq: 1, Class: loadgen.ClassRefused}, "")); !ok {
		t.Error("unknown did not match")
	}
}

// Attribute's doc lists the rules in their order, each with its one-line Doc.
func TestAttributeDocListsRules(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "attribute.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var doc string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "Attribute" && fn.Recv == nil {
			doc = fn.Doc.Text()
		}
	}
	var got []string
	for _, l := range strings.Split(doc, "\n") {
		if item, ok := strings.CutPrefix(l, "  - "); ok {
			got = append(got, item)
		}
	}
	var want []string
	for _, r := range Rules {
		want = append(want, fmt.Sprintf("%s: %s", r.Phase, r.Doc))
	}
	if !slices.Equal(got, want) {
		t.Errorf("Attribute's doc lists the rules as\n\t%s\nRules say\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// Context decides where a rule applies: a row whose context rules a rule out never gets its
// phase, whatever its timeline says.
func TestRulesApplyByContext(t *testing.T) {
	// A pod deleted at 0 whose listener closed at 1 and that exited at 3, with kept-alive and
	// proxied requests around it.
	b := (&tl{}).del("web-1", 0, 2).add(
		ev(1, timeline.AppEvent, "web-1", "listener_closed"),
		ev(3, timeline.AppEvent, "web-1", "exiting code=0"))
	q := failed(1, 2.5, 0.01, loadgen.ClassReset)
	with := b.attr(t, Input{Requests: []loadgen.Request{q}, Context: Context{KeepAlive: true}})
	without := b.attr(t, Input{Requests: []loadgen.Request{q}})
	if with.Phase != timeline.PhasePinnedConnection || without.Phase == timeline.PhasePinnedConnection {
		t.Errorf("keep-alive: %s; without: %s", with.Phase, without.Phase)
	}
	p := failed(2, 20, 0.01, loadgen.ProxyClass(503))
	p.Code = 503
	if a := b.attr(t, Input{Requests: []loadgen.Request{p}, Context: Context{Proxy: true, UpstreamNamed: true}}); a.Phase != timeline.PhaseProxyNoUpstream {
		t.Errorf("proxy naming its upstream: %s (%s)", a.Phase, a.Why)
	}
	if a := b.attr(t, Input{Requests: []loadgen.Request{p}, Context: Context{Proxy: true}}); a.Phase == timeline.PhaseProxyNoUpstream {
		t.Errorf("proxy naming no upstream: %s (%s)", a.Phase, a.Why)
	}
}
