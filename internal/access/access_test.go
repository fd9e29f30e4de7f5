package access

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/access/accesstest"
	"github.com/rollcheck/rollcheck/internal/checktest"
)

// The manifests in examples/rbac are what Rights generates: `make rbac` writes them again.
func TestManifestsMatchTheList(t *testing.T) {
	want, err := Manifests()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", ManifestsDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := want[e.Name()]; !ok {
			t.Errorf("%s/%s is not generated from internal/access.Rights: remove it, or run make rbac", ManifestsDir, e.Name())
		}
	}
	for name, body := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != body {
			t.Errorf("%s/%s differs from what internal/access.Rights generates (err %v): run make rbac", ManifestsDir, name, err)
		}
	}
}

// Every rule of the generated manifests is a right of the list, and every right is in a rule:
// read back from the YAML, not from the code that wrote it.
func TestManifestsGrantEveryRightAndNoMore(t *testing.T) {
	files, err := Manifests()
	if err != nil {
		t.Fatal(err)
	}
	type rule struct {
		APIGroups, Resources, Verbs []string
	}
	type doc struct {
		Kind     string
		Metadata struct{ Name, Namespace string }
		Rules    []rule
		Subjects []struct{ Kind, Name, Namespace string }
	}
	granted := map[string]bool{}
	for name, body := range files {
		for _, part := range strings.Split(body, "\n---\n") {
			var d doc
			if err := yaml.Unmarshal([]byte(part), &d); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, s := range d.Subjects {
				if s.Kind != "ServiceAccount" || s.Name != ServiceAccount || s.Namespace != ServiceAccountNamespace {
					t.Errorf("%s: %s %s binds %+v, want the ServiceAccount %s/%s", name, d.Kind, d.Metadata.Name, s, ServiceAccountNamespace, ServiceAccount)
				}
			}
			for _, r := range d.Rules {
				for _, g := range r.APIGroups {
					for _, res := range r.Resources {
						for _, v := range r.Verbs {
							granted[strings.Join([]string{name, d.Kind, d.Metadata.Namespace, g, res, v}, " ")] = true
						}
					}
				}
			}
		}
	}
	want := map[string]bool{}
	// The Roles of a check in place have no namespace of their own: kubectl apply -n places them.
	for _, c := range Checks(Rights) {
		kind, ns := "ClusterRole", c.Namespace
		if ns != "" {
			kind = "Role"
		}
		if ns == AppNamespace || ns == LoadNamespace || ns == RowNamespace {
			ns = ""
		}
		want[strings.Join([]string{manifestFile(c.Feature), kind, ns, c.Group, c.Name(), c.Verb}, " ")] = true
	}
	for k := range want {
		if !granted[k] {
			t.Errorf("not granted by the manifests: %s", k)
		}
	}
	for k := range granted {
		if !want[k] {
			t.Errorf("granted by the manifests but not in Rights: %s", k)
		}
	}
}

func TestCheckNamesVerbResourceAndNamespace(t *testing.T) {
	cases := map[string]Check{
		"create pods/eviction in every namespace (the run's namespaces are made per row)":                 {Right: Of(Drain)[1], Verb: "create"},
		"get pods/proxy in namespace kube-system":                                                         {Right: Of(KubeProxyMetrics)[1], Verb: "get"},
		"patch nodes (cluster-scoped)":                                                                    {Right: Of(Drain)[0], Verb: "patch"},
		"list endpointslices.discovery.k8s.io in every namespace (the run's namespaces are made per row)": {Right: Of(Core)[7], Verb: "list"},
		"get nodes (cluster-scoped)":                                                                      {Right: Of(NodeInfo)[0], Verb: "get"},
	}
	for want, c := range cases {
		if got := c.String(); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

// mapper knows the kinds the test plans hold.
func mapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for _, k := range []struct {
		gvk   schema.GroupVersionKind
		scope meta.RESTScope
	}{
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace},
		{schema.GroupVersionKind{Version: "v1", Kind: "Service"}, meta.RESTScopeNamespace},
		{schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, meta.RESTScopeNamespace},
		{schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}, meta.RESTScopeNamespace},
	} {
		m.Add(k.gvk, k.scope)
	}
	return m
}

func TestPlansNeed(t *testing.T) {
	p := checktest.WebPlan()
	n, err := PlansNeed(checktest.Resolve(t, p), mapper())
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Features) != 1 || n.Features[0] != Core || len(n.Objects) != 0 {
		t.Errorf("a rollout restart of a Deployment needs the core rights only, got %+v", n)
	}
	drain := checktest.WebPlan()
	drain.Disruption.Kind = check.DrainNode
	n, err = PlansNeed(checktest.Resolve(t, p, drain), mapper())
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Features) != 2 || n.Features[1] != Drain || len(n.Objects) != 0 {
		t.Errorf("a plan that drains needs the drain rights, got %+v", n)
	}
	// A budget without a drain: create on PDBs, which drain.yaml grants; a Secret of the app's
	// manifests: create on Secrets, which no file of rollcheck's grants.
	pdb := checktest.WebPlan()
	pdb.Variant.PDB = &check.PDB{MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	secret := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: metav1.ObjectMeta{Name: "web-token"}}
	pdb.App.Objects = append(pdb.App.Objects, secret)
	n, err = PlansNeed(checktest.Resolve(t, pdb), mapper())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range n.Objects {
		got = append(got, Check{Right: r, Verb: "create"}.String()+" · "+Hint(r.Feature))
	}
	want := []string{
		"create secrets in every namespace (the run's namespaces are made per row) · a rule of your own for the kinds your manifests hold (examples/rbac covers rollcheck's own)",
		"create poddisruptionbudgets.policy in every namespace (the run's namespaces are made per row) · examples/rbac/drain.yaml",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("objects' rights\n got %q\nwant %q", got, want)
	}
}

// Every disruption kind's rights (check.DisruptionInfo.Rights) are a feature of this list, with
// its in-place counterpart, so that PlansNeed and InPlaceNeed ask for them.
func TestDisruptionRights(t *testing.T) {
	for _, d := range check.Disruptions {
		if d.Rights == "" {
			continue
		}
		f := Feature(d.Rights)
		if !slices.Contains(Features, f) || len(Of(f)) == 0 {
			t.Errorf("%s needs rights %q, which no feature of Features grants: add the feature and its rules to Rights", d.Kind, d.Rights)
		}
		if in, ok := InPlaceOf[f]; !ok || !slices.Contains(Features, in) || len(Of(in)) == 0 {
			t.Errorf("%s needs rights %q: InPlaceOf names no feature that grants them to a check in place (%q)", d.Kind, d.Rights, in)
		}
		p := checktest.WebPlan()
		p.Disruption.Kind = d.Kind
		n, err := PlansNeed(checktest.Resolve(t, p), mapper())
		if err != nil || !slices.Contains(n.Features, f) {
			t.Errorf("%s: PlansNeed %v, %v: want %s among them", d.Kind, n.Features, err, f)
		}
	}
}

func TestReviewNamesWhatIsDenied(t *testing.T) {
	cs := accesstest.Reviews(func(a *authorizationv1.ResourceAttributes) bool {
		return a.Resource == "pods" && a.Subresource == "" && a.Verb == "create" && a.Namespace == ""
	})
	denied, err := Review(context.Background(), cs, Of(Core))
	if err != nil {
		t.Fatal(err)
	}
	if len(denied) != 1 {
		t.Fatalf("denied %v, want create pods only", denied)
	}
	line := Refusal(denied)
	want := `this user may not create pods in every namespace (the run's namespaces are made per row): rollcheck needs it before any work; examples/rbac/core.yaml grant(s) it (README, "Least privilege")`
	if line != want || strings.Contains(line, "\n") {
		t.Errorf("refusal\n got %q\nwant %q", line, want)
	}
	denied, err = Review(context.Background(), accesstest.Reviews(func(a *authorizationv1.ResourceAttributes) bool {
		return a.Namespace == ProxyNamespace
	}), Of(KubeProxyMetrics))
	if err != nil {
		t.Fatal(err)
	}
	want = "kube-proxy's network-programming lag and mode: not measured: this user may not list pods in namespace kube-system; get pods/proxy in namespace kube-system (examples/rbac/kube-proxy-metrics.yaml grants it)"
	if got := Unmeasured(KubeProxyMetrics, denied); got != want {
		t.Errorf("unmeasured\n got %q\nwant %q", got, want)
	}
}

// A check in place needs rights in the app's namespace (and its load namespace) only, named in
// the refusal; a budget and a drain add theirs; without a load namespace the rows' own
// namespaces need core.yaml's.
func TestInPlaceNeed(t *testing.T) {
	p := checktest.WebPlan()
	p.App = check.App{Namespace: "shop", Deployment: "web", Port: 8080}
	p.Load.From = check.LoadFromCluster
	drain := p
	drain.Disruption.Kind = check.DrainNode
	drain.Variant.PDB = &check.PDB{MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	var got []string
	for _, c := range Checks(InPlaceNeed(checktest.Resolve(t, p, drain), "rc-load")) {
		got = append(got, c.String())
	}
	for _, want := range []string{"update deployments.apps in namespace shop", "delete pods in namespace shop", "create pods in namespace rc-load",
		"delete poddisruptionbudgets.policy in namespace shop", "create pods/eviction in namespace shop", "patch nodes (cluster-scoped)", "get pods/proxy in namespace rc-load"} {
		if !slices.Contains(got, want) {
			t.Errorf("in-place rights %q lack %q", got, want)
		}
	}
	for _, c := range got {
		if strings.Contains(c, "every namespace") {
			t.Errorf("with a load namespace, %q is asked in every namespace", c)
		}
	}
	cs := accesstest.Reviews(func(a *authorizationv1.ResourceAttributes) bool {
		return a.Verb == "update" && a.Resource == "deployments"
	})
	denied, err := Review(context.Background(), cs, InPlaceNeed(checktest.Resolve(t, p), ""))
	if err != nil {
		t.Fatal(err)
	}
	want := `this user may not update deployments.apps in namespace shop: rollcheck needs it before any work; examples/rbac/in-place.yaml (kubectl apply -n in the app's namespace) grant(s) it (README, "Least privilege")`
	if line := Refusal(denied); line != want {
		t.Errorf("refusal\n got %q\nwant %q", line, want)
	}
	got = nil
	for _, c := range Checks(InPlaceNeed(checktest.Resolve(t, p), "")) {
		got = append(got, c.String())
	}
	if !slices.Contains(got, "create namespaces (cluster-scoped)") || !slices.Contains(got, "create pods in every namespace (the run's namespaces are made per row)") ||
		slices.Contains(got, "create services in every namespace (the run's namespaces are made per row)") {
		t.Errorf("without a load namespace: %q, want core's namespace and pod rights, no Service creation", got)
	}
}

// docs/reference.md's table of the manifests is Table, as make rbac wrote it: it says exactly
// what each file grants (the README said core.yaml lets rollcheck "create and read" Deployments
// and pods, while it also grants update and patch on Deployments and delete on pods).
func TestReferenceTableIsGenerated(t *testing.T) {
	b, err := os.ReadFile("../../docs/reference.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), TableBegin+"\n"+Table()+TableEnd) {
		t.Error("docs/reference.md's rbac table is not access.Table(): run make rbac")
	}
	for _, want := range []string{"create, get, update, patch `deployments`", "create, get, list, watch, delete `pods`"} {
		if !strings.Contains(Table(), want) {
			t.Errorf("Table lacks %q", want)
		}
	}
}

// Rows in namespaces of the user's need rights in each of them and none cluster-wide (a drain's
// node rights aside): no namespace is created, and no right in every namespace is asked.
func TestNamespacedNeed(t *testing.T) {
	p := checktest.WebPlan()
	secret := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: metav1.ObjectMeta{Name: "web-token"}}
	p.App.Objects = append(p.App.Objects, secret)
	rights, err := NamespacedNeed(checktest.Resolve(t, p), []string{"team-a", "team-b"}, mapper())
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	var secrets []string
	for _, c := range Checks(rights) {
		if c.Namespace == "" || c.ClusterScoped {
			t.Errorf("%s: a right outside the rows namespaces", c)
		}
		per[c.Namespace]++
		if c.Resource == "secrets" {
			secrets = append(secrets, c.String())
		}
	}
	if len(per) != 2 || per["team-a"] != per["team-b"] || per["team-a"] != len(Checks(Of(Namespaced)))+4 {
		t.Errorf("checks per namespace %v, want namespaced.yaml's %d and the Secret's 4 in each of team-a and team-b", per, len(Checks(Of(Namespaced))))
	}
	want := []string{"create secrets in namespace team-a", "get secrets in namespace team-a", "update secrets in namespace team-a", "delete secrets in namespace team-a",
		"create secrets in namespace team-b", "get secrets in namespace team-b", "update secrets in namespace team-b", "delete secrets in namespace team-b"}
	if !slices.Equal(secrets, want) {
		t.Errorf("the Secret's rights\n got %q\nwant %q", secrets, want)
	}
	for _, r := range Of(Namespaced) {
		if r.ClusterScoped || r.Namespace != RowNamespace {
			t.Errorf("namespaced.yaml grants %s %s: want a Role's right in each rows namespace", r.Name(), r.Where())
		}
		if r.Resource == "namespaces" {
			t.Errorf("namespaced.yaml grants %s", r.Name())
		}
	}

	// A drain adds the node's rights, asked once, and evictions in each namespace.
	drain := checktest.WebPlan()
	drain.Disruption.Kind = check.DrainNode
	rights, err = NamespacedNeed(checktest.Resolve(t, drain), []string{"team-a", "team-b"}, mapper())
	if err != nil {
		t.Fatal(err)
	}
	var nodes, evictions int
	for _, c := range Checks(rights) {
		switch c.Name() {
		case "nodes":
			nodes++
		case "pods/eviction":
			evictions++
		}
	}
	if nodes != 2 || evictions != 2 {
		t.Errorf("a drain: %d node checks (want get and patch, once), %d eviction checks (want one per namespace)", nodes, evictions)
	}

}
