package inplace

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/rollcheck/rollcheck/check"
)

// WorkloadOf chooses once: a Deployment is recorded, changed and put back; a Rollout's
// ReplicaSet is read as it runs, nothing is recorded on it, and a variant that would change it
// is refused in one line that names it, while one that changes nothing writes nothing.
func TestWorkloadOf(t *testing.T) {
	ctx := context.Background()
	rs := rolloutRS("Rollout/web")
	cs := fake.NewClientset(live(), rs)
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

	d := WorkloadOf(cs, nil, check.App{Namespace: "shop", Deployment: "web"})
	if got := d.Pods().String(); got != "Deployment shop/web" {
		t.Errorf("Pods %q", got)
	}
	orig, err := d.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Hold(ctx, Record{Run: "run1", Row: "rc-a", Time: at}); err != nil {
		t.Fatal(err)
	}
	if err := d.Change(ctx, orig, orig.Spec); err != nil { // as-is: nothing to write
		t.Fatal(err)
	}
	if err := d.Hold(ctx, Record{Run: "run2", Row: "rc-b", Time: at}); err == nil || !strings.Contains(err.Error(), "run1") {
		t.Errorf("a second hold: %v, want the first run named", err)
	}
	line, err := d.Restore(ctx, orig, "run1")
	if err != nil || line != "Deployment shop/web restored (spec unchanged)" {
		t.Errorf("Restore: %q, %v", line, err)
	}
	if _, ok := get(t, cs).Annotations[Annotation]; ok {
		t.Error("the record is still on the Deployment")
	}

	w := WorkloadOf(cs, nil, check.App{Namespace: "shop", Deployment: "web-5d9f", ReplicaSetOf: "Rollout/web"})
	if got := w.Pods().String(); got != "ReplicaSet shop/web-5d9f" {
		t.Errorf("Pods %q", got)
	}
	view, err := w.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Hold(ctx, Record{Run: "run1", Row: "rc-a", Time: at}); err != nil {
		t.Fatal(err)
	}
	if err := w.Change(ctx, view, view.Spec); err != nil {
		t.Errorf("an unchanged spec: %v", err)
	}
	err = w.Change(ctx, view, changed(view.Spec))
	if want := "would change ReplicaSet shop/web-5d9f of Rollout/web, which is checked as it runs"; err == nil || err.Error() != want {
		t.Errorf("a variant's change: %v, want %q", err, want)
	}
	if line, err := w.Restore(ctx, view, "run1"); line != "" || err != nil {
		t.Errorf("Restore of a ReplicaSet: %q, %v", line, err)
	}
	got, err := cs.AppsV1().ReplicaSets("shop").Get(ctx, "web-5d9f", metav1.GetOptions{})
	if err != nil || !equality.Semantic.DeepEqual(got, rs) {
		t.Errorf("the ReplicaSet was written: %+v (%v)", got, err)
	}
}
