// Package runlease holds a coordination.k8s.io/v1 Lease for a rollcheck run, in client-go's
// leader-election shape (holderIdentity, leaseDurationSeconds, acquireTime, renewTime,
// leaseTransitions): the run's id is the holder, a goroutine renews it every third of its
// duration while the run lives, and Release deletes it. A run killed with kill -9 renews it no
// more: it expires Duration after its last renewal, and another run may take it over then. A
// Lease another run renewed within its duration is live: Acquire refuses it (HeldError).
//
// rollcheck holds one per Deployment it checks in place (in the Deployment's namespace: one run
// per Deployment) and one per run on a kind cluster (what a sweep of other runs' namespaces
// skips while it is live). Expiry is judged against this machine's clock and the holder's
// renewTime, so the two machines' clocks must agree within seconds (NTP), as they must for a
// kubeconfig's certificates.
package runlease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/kube"
)

// Duration is how long a Lease lives after its last renewal (client-go's leader election's
// default): a killed run's Deployment can be checked again that long after it died.
const Duration = 15 * time.Second

// ReleaseWait bounds Release, which runs on every path, after Ctrl-C too (a context of its own).
var ReleaseWait = 30 * time.Second

// ErrHeld is what a HeldError is (errors.Is): another run holds the Lease.
var ErrHeld = errors.New("held by another rollcheck run")

// State is what a Lease says.
type State struct {
	Namespace, Name string
	// Holder is the holding run's id; "" for none.
	Holder            string
	Acquired, Renewed time.Time
	Duration          time.Duration
	// Transitions counts the holders that took it over from another.
	Transitions int32
}

// Expires is when the Lease expires unless it is renewed.
func (s State) Expires() time.Time { return s.Renewed.Add(s.Duration) }

// Live tells whether a run holds the Lease at now: it names a holder that renewed it within its
// duration.
func (s State) Live(now time.Time) bool { return s.Holder != "" && now.Before(s.Expires()) }

// stateOf reads a Lease.
func stateOf(l *coordinationv1.Lease) State {
	s := State{Namespace: l.Namespace, Name: l.Name, Holder: ptr.Deref(l.Spec.HolderIdentity, ""),
		Duration: time.Duration(ptr.Deref(l.Spec.LeaseDurationSeconds, 0)) * time.Second, Transitions: ptr.Deref(l.Spec.LeaseTransitions, 0)}
	if t := l.Spec.AcquireTime; t != nil {
		s.Acquired = t.Time
	}
	if t := l.Spec.RenewTime; t != nil {
		s.Renewed = t.Time
	}
	return s
}

// Get reads the Lease ns/name: nil, nil when there is none.
func Get(ctx context.Context, cs kubernetes.Interface, ns, name string) (*State, error) {
	var l *coordinationv1.Lease
	err := kube.Retry(ctx, func(ctx context.Context) (err error) {
		l, err = cs.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
		return err
	})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read Lease %s/%s: %w", ns, name, err)
	}
	s := stateOf(l)
	return &s, nil
}

// HeldError is Acquire's refusal: another run holds the Lease and renewed it within its duration.
type HeldError struct {
	// What is held: "deployment shop/web".
	What string
	State
	// Now is when it was seen live.
	Now time.Time
}

func (e *HeldError) Error() string {
	ago := max(e.Now.Sub(e.Renewed), 0).Round(time.Second)
	left := max(e.Expires().Sub(e.Now), 0).Round(time.Second)
	return fmt.Sprintf("%s is held by rollcheck run %s (renewed %s ago, lease expires in %s; Lease %s/%s): wait for it or let its lease expire",
		e.What, e.Holder, ago, left, e.Namespace, e.Name)
}

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Option sets what Acquire holds the Lease with.
type Option func(*options)

type options struct {
	clock    clock.WithTicker
	duration time.Duration
}

// WithClock makes the Lease read time from c (tests: k8s.io/utils/clock/testing's FakeClock).
func WithClock(c clock.WithTicker) Option { return func(o *options) { o.clock = c } }

// WithDuration holds the Lease for d instead of Duration (whole seconds; at least one).
func WithDuration(d time.Duration) Option { return func(o *options) { o.duration = d } }

// Lease is a Lease this process holds for a run. Several holds of the same Lease by the same run
// in one process (the CLI for the whole run, the engine for each row) share one Lease and one
// renewal: it is deleted when the last of them is released.
type Lease struct {
	cs       kubernetes.Interface
	ns, name string
	id       string
	what     string
	clock    clock.WithTicker
	duration time.Duration
	// took is what the Lease said when this run took it over from another (Holder "" when it
	// was made, held by this run already, or released).
	took State

	refs int // under registry.Lock
	stop chan struct{}
	done chan struct{}
	lost chan struct{}
	// lostTo is the run that took the Lease over, set before lost is closed.
	lostTo string
}

// registry is the Leases this process holds, by namespace, name and run.
var registry struct {
	sync.Mutex
	held map[[3]string]*Lease
}

// Acquire holds the Lease ns/name for the run id and renews it in the background until Release.
// what names the held thing in messages ("deployment shop/web"). A Lease that does not exist is
// made; one the run holds already (this process or another of the run) is renewed; one that names
// no holder or expired is taken over (Took says from whom); a live one of another run is a
// *HeldError, and nothing is written.
func Acquire(ctx context.Context, cs kubernetes.Interface, ns, name, id, what string, opts ...Option) (*Lease, error) {
	if id == "" {
		return nil, fmt.Errorf("lease %s/%s: no run id", ns, name)
	}
	o := options{clock: clock.RealClock{}, duration: Duration}
	for _, opt := range opts {
		opt(&o)
	}
	o.duration = max(o.duration.Round(time.Second), time.Second)
	key := [3]string{ns, name, id}
	registry.Lock()
	defer registry.Unlock()
	if l := registry.held[key]; l != nil {
		select {
		case <-l.lost:
			// Lost to another run: a fresh hold asks the API server again.
		default:
			l.refs++
			return l, nil
		}
	}
	l := &Lease{cs: cs, ns: ns, name: name, id: id, what: what, clock: o.clock, duration: o.duration, refs: 1,
		stop: make(chan struct{}), done: make(chan struct{}), lost: make(chan struct{})}
	if err := l.acquire(ctx); err != nil {
		return nil, err
	}
	if registry.held == nil {
		registry.held = map[[3]string]*Lease{}
	}
	registry.held[key] = l
	go l.renewLoop()
	return l, nil
}

// spec is the Lease's spec held by l's run, acquired at acquired and renewed now.
func (l *Lease) spec(acquired, now time.Time, transitions int32) coordinationv1.LeaseSpec {
	return coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(l.id),
		LeaseDurationSeconds: ptr.To(int32(l.duration / time.Second)),
		AcquireTime:          &metav1.MicroTime{Time: acquired},
		RenewTime:            &metav1.MicroTime{Time: now},
		LeaseTransitions:     ptr.To(transitions),
	}
}

// acquire makes, renews or takes over the Lease, or refuses a live one of another run.
func (l *Lease) acquire(ctx context.Context) error {
	leases := l.cs.CoordinationV1().Leases(l.ns)
	for range 5 { // a conflict is another run acquiring at the same moment: read it again
		var cur *coordinationv1.Lease
		err := kube.Retry(ctx, func(ctx context.Context) (err error) {
			cur, err = leases.Get(ctx, l.name, metav1.GetOptions{})
			return err
		})
		now := l.clock.Now()
		if apierrors.IsNotFound(err) {
			nl := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: l.name, Namespace: l.ns,
				Labels: map[string]string{check.PartOfLabel: check.PartOfValue}}, Spec: l.spec(now, now, 0)}
			err = kube.Retry(ctx, func(ctx context.Context) error {
				_, err := leases.Create(ctx, nl, metav1.CreateOptions{})
				return err
			})
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("create Lease %s/%s: %w", l.ns, l.name, err)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("read Lease %s/%s: %w", l.ns, l.name, err)
		}
		s := stateOf(cur)
		next := cur.DeepCopy()
		switch {
		case s.Holder == l.id:
			next.Spec = l.spec(s.Acquired, now, s.Transitions)
		case s.Live(now):
			return &HeldError{What: l.what, State: s, Now: now}
		default: // expired, or released by clearing its holder
			if s.Holder != "" {
				l.took = s
			}
			next.Spec = l.spec(now, now, s.Transitions+1)
		}
		err = kube.Retry(ctx, func(ctx context.Context) error {
			_, err := leases.Update(ctx, next, metav1.UpdateOptions{})
			return err
		})
		if apierrors.IsConflict(err) {
			l.took = State{}
			continue
		}
		if err != nil {
			return fmt.Errorf("hold Lease %s/%s: %w", l.ns, l.name, err)
		}
		return nil
	}
	return fmt.Errorf("hold Lease %s/%s: it changed under every attempt to take it", l.ns, l.name)
}

// ID is the holding run's id.
func (l *Lease) ID() string { return l.id }

// Name is the Lease's namespace/name.
func (l *Lease) Name() string { return l.ns + "/" + l.name }

// Duration is how long the Lease lives after a renewal.
func (l *Lease) Duration() time.Duration { return l.duration }

// Now is the Lease's clock's time.
func (l *Lease) Now() time.Time { return l.clock.Now() }

// Took is what the Lease said when this run took it over from another run whose Lease had
// expired; its Holder is "" when the run made it or held it already.
func (l *Lease) Took() State { return l.took }

// Lost is closed when another run took the Lease over (this run could not renew it within its
// duration: an API server it could not reach while the other could). Err says who.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Context is ctx, cancelled with Err as its cause once the Lease is lost, so that what a run
// does under it stops when another run took its hold over; stop ends the watch (call it when the
// work is done).
func (l *Lease) Context(ctx context.Context) (_ context.Context, stop func()) {
	lctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-l.lost:
			cancel(l.Err())
		case <-lctx.Done():
		}
	}()
	return lctx, func() { cancel(nil) }
}

// A LostError is Err's: another run took the Lease over.
type LostError struct{ msg string }

func (e *LostError) Error() string { return e.msg }

// Err is nil while the run holds the Lease, and says who took it once Lost is closed (a
// *LostError).
func (l *Lease) Err() error {
	select {
	case <-l.lost:
		return &LostError{fmt.Sprintf("%s: rollcheck run %s took Lease %s/%s over (this run did not renew it within %s)", l.what, l.lostTo, l.ns, l.name, l.duration)}
	default:
		return nil
	}
}

// renewEvery is how often the Lease is renewed: a third of its duration, so that two renewals
// may fail before it expires.
func (l *Lease) renewEvery() time.Duration { return l.duration / 3 }

// renewLoop renews the Lease until Release stops it or another run takes it over.
func (l *Lease) renewLoop() {
	defer close(l.done)
	t := l.clock.NewTicker(l.renewEvery())
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C():
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.renewEvery())
		lost := l.renew(ctx)
		cancel()
		if lost {
			return
		}
	}
}

// renew writes a renewal once; a failed one is tried at the next tick. It reports whether
// another run holds the Lease now (Lost is closed then). A Lease deleted by hand is made again.
func (l *Lease) renew(ctx context.Context) (lost bool) {
	leases := l.cs.CoordinationV1().Leases(l.ns)
	cur, err := leases.Get(ctx, l.name, metav1.GetOptions{})
	now := l.clock.Now()
	if apierrors.IsNotFound(err) {
		_, _ = leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: l.name, Namespace: l.ns,
			Labels: map[string]string{check.PartOfLabel: check.PartOfValue}}, Spec: l.spec(now, now, 0)}, metav1.CreateOptions{})
		return false
	}
	if err != nil {
		return false
	}
	s := stateOf(cur)
	if s.Holder != "" && s.Holder != l.id {
		l.lostTo = s.Holder
		close(l.lost)
		return true
	}
	acquired := s.Acquired
	if s.Holder == "" {
		acquired = now
	}
	next := cur.DeepCopy()
	next.Spec = l.spec(acquired, now, s.Transitions)
	_, _ = leases.Update(ctx, next, metav1.UpdateOptions{})
	return false
}

// Release ends this hold; the last hold of the process stops the renewal and deletes the Lease
// (unless another run took it over meanwhile), with a context of its own bounded by
// ReleaseWait: it runs after Ctrl-C too. Releasing a nil Lease does nothing.
func (l *Lease) Release(ctx context.Context) error {
	if l == nil {
		return nil
	}
	registry.Lock()
	l.refs--
	if l.refs > 0 {
		registry.Unlock()
		return nil
	}
	key := [3]string{l.ns, l.name, l.id}
	if registry.held[key] == l {
		delete(registry.held, key)
	}
	registry.Unlock()
	l.stopRenewing()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ReleaseWait)
	defer cancel()
	leases := l.cs.CoordinationV1().Leases(l.ns)
	for range 5 {
		var cur *coordinationv1.Lease
		err := kube.Retry(rctx, func(ctx context.Context) (err error) {
			cur, err = leases.Get(ctx, l.name, metav1.GetOptions{})
			return err
		})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return fmt.Errorf("release Lease %s/%s: %w", l.ns, l.name, err)
		case ptr.Deref(cur.Spec.HolderIdentity, "") != l.id:
			return nil // another run's now: not this run's to delete
		}
		// The preconditions keep a Lease another run took over since it was read.
		pre := metav1.Preconditions{UID: &cur.UID, ResourceVersion: &cur.ResourceVersion}
		err = kube.Retry(rctx, func(ctx context.Context) error {
			return leases.Delete(ctx, l.name, metav1.DeleteOptions{Preconditions: &pre})
		})
		switch {
		case err == nil || apierrors.IsNotFound(err):
			return nil
		case apierrors.IsConflict(err):
			continue
		default:
			return fmt.Errorf("release Lease %s/%s: %w", l.ns, l.name, err)
		}
	}
	return fmt.Errorf("release Lease %s/%s: it changed under every attempt to delete it", l.ns, l.name)
}

// stopRenewing stops the renewal and waits for it.
func (l *Lease) stopRenewing() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
}
