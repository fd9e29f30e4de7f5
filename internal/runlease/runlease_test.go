package runlease

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// setup is a cluster with no Lease yet and a clock at t0.
func setup() (*fake.Clientset, *clocktesting.FakeClock, context.Context) {
	return fake.NewClientset(), clocktesting.NewFakeClock(t0), context.Background()
}

// hold acquires shop/rollcheck-web for run id, failing the test if it cannot.
func hold(t *testing.T, cs *fake.Clientset, clk *clocktesting.FakeClock, id string) *Lease {
	t.Helper()
	l, err := Acquire(context.Background(), cs, "shop", "rollcheck-web", id, "deployment shop/web", WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// abandon is a kill -9: the renewal stops and nothing is deleted.
func (l *Lease) abandon() {
	registry.Lock()
	delete(registry.held, [3]string{l.ns, l.name, l.id})
	registry.Unlock()
	l.stopRenewing()
}

func TestSecondRunRefusedWhileLive(t *testing.T) {
	cs, clk, ctx := setup()
	first := hold(t, cs, clk, "aaaa")
	defer first.Release(ctx)
	clk.Step(3 * time.Second)
	_, err := Acquire(ctx, cs, "shop", "rollcheck-web", "bbbb", "deployment shop/web", WithClock(clk))
	var held *HeldError
	if !errors.As(err, &held) || !errors.Is(err, ErrHeld) {
		t.Fatalf("second run: got %v, want a HeldError", err)
	}
	want := "deployment shop/web is held by rollcheck run aaaa (renewed 3s ago, lease expires in 12s; Lease shop/rollcheck-web): wait for it or let its lease expire"
	if err.Error() != want {
		t.Errorf("refusal:\n got %s\nwant %s", err, want)
	}
	l, _ := cs.CoordinationV1().Leases("shop").Get(ctx, "rollcheck-web", metav1.GetOptions{})
	if h := ptr.Deref(l.Spec.HolderIdentity, ""); h != "aaaa" {
		t.Errorf("holder after the refusal = %q, want aaaa (nothing written)", h)
	}
	if d := ptr.Deref(l.Spec.LeaseDurationSeconds, 0); d != 15 {
		t.Errorf("leaseDurationSeconds = %d, want 15", d)
	}
}

func TestRenewalKeepsItLive(t *testing.T) {
	cs, clk, ctx := setup()
	first := hold(t, cs, clk, "aaaa")
	defer first.Release(ctx)
	// 30 s, renewed every 5 s by the Lease's own loop: never expired. The test waits for each
	// renewal to land before the next step (it used to renew beside the loop, and the fake
	// clientset, which takes a stale update, let the loop's late write win now and then).
	var s *State
	for start := time.Now(); !clk.HasWaiters(); time.Sleep(time.Millisecond) { // the loop's ticker exists: a step before it would pass unseen
		if time.Since(start) > 5*time.Second {
			t.Fatal("the Lease's renewal loop made no ticker in 5 s")
		}
	}
	for range 6 {
		clk.Step(5 * time.Second)
		deadline := time.Now().Add(5 * time.Second)
		for {
			var err error
			if s, err = Get(ctx, cs, "shop", "rollcheck-web"); err == nil && s != nil && s.Renewed.Equal(clk.Now()) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no renewal at %s: %+v, %v", clk.Now(), s, err)
			}
			time.Sleep(time.Millisecond)
		}
	}
	select {
	case <-first.lost:
		t.Fatal("lost")
	default:
	}
	if !s.Renewed.Equal(t0.Add(30*time.Second)) || !s.Acquired.Equal(t0) || !s.Live(clk.Now()) {
		t.Errorf("after renewals: %+v", s)
	}
	if _, err := Acquire(ctx, cs, "shop", "rollcheck-web", "bbbb", "x", WithClock(clk)); !errors.Is(err, ErrHeld) {
		t.Errorf("second run after 30 s of renewals: %v, want refused", err)
	}
}

func TestTakeOverAfterExpiry(t *testing.T) {
	cs, clk, ctx := setup()
	dead := hold(t, cs, clk, "aaaa")
	dead.abandon()
	clk.Step(14 * time.Second)
	if _, err := Acquire(ctx, cs, "shop", "rollcheck-web", "bbbb", "x", WithClock(clk)); !errors.Is(err, ErrHeld) {
		t.Fatalf("14 s after the last renewal: %v, want refused", err)
	}
	clk.Step(time.Second)
	next, err := Acquire(ctx, cs, "shop", "rollcheck-web", "bbbb", "x", WithClock(clk))
	if err != nil {
		t.Fatalf("15 s after the last renewal: %v", err)
	}
	defer next.Release(ctx)
	if got := next.Took(); got.Holder != "aaaa" || !got.Renewed.Equal(t0) {
		t.Errorf("Took = %+v, want the dead run's", got)
	}
	s, _ := Get(ctx, cs, "shop", "rollcheck-web")
	if s.Holder != "bbbb" || s.Transitions != 1 || !s.Acquired.Equal(clk.Now()) {
		t.Errorf("taken over: %+v", s)
	}
	// The dead run, were it to come back, finds it lost.
	if !dead.renew(ctx) || dead.Err() == nil || !strings.Contains(dead.Err().Error(), "run bbbb took") {
		t.Errorf("the first run's renewal after the take-over: lost=%v err=%v", dead.Err() != nil, dead.Err())
	}
}

func TestReleaseDeletesAndSharesHolds(t *testing.T) {
	cs := fake.NewClientset()
	clk := clocktesting.NewFakeClock(t0)
	ctx, cancel := context.WithCancel(context.Background())
	run, err := Acquire(ctx, cs, "shop", "rollcheck-web", "aaaa", "x", WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	row, err := Acquire(ctx, cs, "shop", "rollcheck-web", "aaaa", "x", WithClock(clk))
	if err != nil || row != run {
		t.Fatalf("a second hold of the same run in the process: %v, %v (want the same Lease)", row, err)
	}
	if err := row.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if s, _ := Get(ctx, cs, "shop", "rollcheck-web"); s == nil {
		t.Fatal("the row's release deleted the run's Lease")
	}
	cancel() // Ctrl-C: the release still runs
	if err := run.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if s, _ := Get(context.Background(), cs, "shop", "rollcheck-web"); s != nil {
		t.Errorf("after the last release: %+v, want no Lease", s)
	}
	select {
	case <-run.done:
	default:
		t.Error("the renewal still runs after the release")
	}
	var nilLease *Lease
	if err := nilLease.Release(ctx); err != nil {
		t.Error(err)
	}
}

func TestReleaseLeavesATakenOverLease(t *testing.T) {
	cs, clk, ctx := setup()
	first := hold(t, cs, clk, "aaaa")
	first.stopRenewing() // an API server it could not reach
	clk.Step(20 * time.Second)
	second, err := Acquire(ctx, cs, "shop", "rollcheck-web", "bbbb", "x", WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	defer second.Release(ctx)
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if s, _ := Get(ctx, cs, "shop", "rollcheck-web"); s == nil || s.Holder != "bbbb" {
		t.Errorf("the first run's release: %+v, want the second run's Lease kept", s)
	}
}

// Context is cancelled, with who took the Lease as its cause, once another run took it over;
// stop cancels it with no such cause.
func TestContextEndsWhenLost(t *testing.T) {
	cs, clk, ctx := setup()
	l := hold(t, cs, clk, "aaaa")
	defer l.Release(ctx)
	lctx, stop := l.Context(ctx)
	defer stop()
	for start := time.Now(); !clk.HasWaiters(); time.Sleep(time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("the Lease's renewal loop made no ticker in 5 s")
		}
	}
	cur, err := cs.CoordinationV1().Leases("shop").Get(ctx, "rollcheck-web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.HolderIdentity = ptr.To("bbbb") // another run took it over
	if _, err := cs.CoordinationV1().Leases("shop").Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lctx.Done():
		t.Fatal("cancelled before the renewal saw the other run")
	default:
	}
	clk.Step(l.renewEvery())
	select {
	case <-lctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the context was not cancelled once the Lease was lost")
	}
	if err := context.Cause(lctx); err == nil || !strings.Contains(err.Error(), "rollcheck run bbbb took Lease shop/rollcheck-web over") {
		t.Errorf("cause %v, want the run that took the Lease", err)
	}

	cs2, clk2, _ := setup()
	other := hold(t, cs2, clk2, "cccc")
	defer other.Release(ctx)
	octx, ostop := other.Context(ctx)
	ostop()
	if err := context.Cause(octx); !errors.Is(err, context.Canceled) {
		t.Errorf("stopped: cause %v, want context.Canceled", err)
	}
}
