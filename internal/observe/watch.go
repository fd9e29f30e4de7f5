package observe

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// The watch loop below is a small reflector: list, then watch from the list's
// resourceVersion; when the server closes the watch (its request timeout), watch again from
// the last resourceVersion seen; when that version has expired or the watch reports an
// error, list again and reconcile against what was known. It is used instead of client-go's
// informers to keep the timestamps at the moment of receipt and to open every watch before
// Start returns.

const (
	retryMin = 500 * time.Millisecond
	retryMax = 10 * time.Second
	// A watch that ends sooner than this after it opened is retried with back-off; one that
	// lived longer (a normal server timeout) is re-opened at once.
	healthyWatch = 2 * time.Second
)

// source is one watched kind. Its fields below the functions belong to its run goroutine
// once Start has returned.
type source struct {
	what  string
	opts  metav1.ListOptions // selectors
	list  func(ctx context.Context, opts metav1.ListOptions) ([]runtime.Object, string, error)
	watch func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	// match filters on the client side too (fake clients ignore selectors on watches).
	match func(obj runtime.Object) bool
	// upsert is called for an object added or changed (old is nil when it is new to us);
	// initial is true for the list made by Start.
	upsert func(now time.Time, old, obj runtime.Object, initial bool)
	// remove is called for an object that left; missed is true when the deletion was found by
	// a relist rather than seen on the watch.
	remove func(now time.Time, obj runtime.Object, missed bool)

	known map[string]runtime.Object // by name (one namespace)
	rv    string
	// closed is when the last watch ended (zero before the first).
	closed time.Time
}

// closedAt is when s's last watch ended, or now when none ran yet.
func closedAt(s *source) time.Time {
	if s.closed.IsZero() {
		return time.Now()
	}
	return s.closed
}

func (s *source) watchOptions() metav1.ListOptions {
	opts := s.opts
	opts.ResourceVersion = s.rv
	opts.AllowWatchBookmarks = true
	return opts
}

func nameOf(obj runtime.Object) (name, rv string, ok bool) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return "", "", false
	}
	return m.GetName(), m.GetResourceVersion(), true
}

// relist lists s and reconciles the result with what was known: new objects are upserted
// with old nil, changed ones with their previous version, vanished ones removed as missed.
func (o *Observer) relist(ctx context.Context, s *source, initial bool) error {
	objs, rv, err := s.list(ctx, s.opts)
	if err != nil {
		return fmt.Errorf("list %s: %w", s.what, err)
	}
	now := time.Now()
	if s.known == nil {
		s.known = map[string]runtime.Object{}
	}
	seen := make(map[string]bool, len(objs))
	for _, obj := range objs {
		name, objRV, ok := nameOf(obj)
		if !ok || !s.match(obj) {
			continue
		}
		seen[name] = true
		old := s.known[name]
		s.known[name] = obj
		if old != nil {
			if _, oldRV, _ := nameOf(old); oldRV == objRV && objRV != "" {
				continue // unchanged
			}
		}
		s.upsert(now, old, obj, initial)
	}
	for name, old := range s.known {
		if !seen[name] {
			delete(s.known, name)
			s.remove(now, old, true)
		}
	}
	s.rv = rv
	return nil
}

// run consumes w, then keeps s watched until ctx is done.
func (o *Observer) run(ctx context.Context, s *source, w watch.Interface) {
	defer o.wg.Done()
	delay := retryMin
	needRelist := false
	// A gap opens when a watch ends with an error, or its next one cannot be opened, and
	// closes when a watch runs again: the changes meanwhile are seen late, or only by a relist.
	var gapFrom time.Time
	var gapErr error
	openGap := func(at time.Time, err error) {
		if gapFrom.IsZero() {
			gapFrom, gapErr = at, err
		}
	}
	for {
		if w == nil {
			var err error
			if needRelist {
				err = o.relist(ctx, s, false)
			}
			if err == nil {
				w, err = s.watch(ctx, s.watchOptions())
				if err != nil {
					err = fmt.Errorf("watch %s: %w", s.what, err)
				}
			}
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				openGap(closedAt(s), err)
				if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					needRelist = true
				}
				o.logf("observe %s: %v (retrying in %s)", o.ns, err, delay)
				if !sleep(ctx, delay) {
					return
				}
				delay = min(2*delay, retryMax)
				continue
			}
			needRelist = false
			if !gapFrom.IsZero() {
				o.gap(s.what, gapFrom, gapErr)
				gapFrom, gapErr = time.Time{}, nil
			}
		}
		opened := time.Now()
		relist, err := o.consume(ctx, s, w)
		w = nil
		s.closed = time.Now()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			openGap(s.closed, err)
		}
		needRelist = relist
		lived := time.Since(opened)
		if err != nil {
			o.logf("observe %s: watch %s: %v; listing again", o.ns, s.what, err)
		} else {
			o.logf("observe %s: watch %s closed by the server after %s; watching again", o.ns, s.what, lived.Round(time.Millisecond))
		}
		if lived >= healthyWatch {
			delay = retryMin
			continue
		}
		if !sleep(ctx, delay) {
			return
		}
		delay = min(2*delay, retryMax)
	}
}

// consume handles the events of w until it closes or ctx is done. relist is true when the
// watch reported an error (such as an expired resourceVersion) after which s must be listed
// again.
func (o *Observer) consume(ctx context.Context, s *source, w watch.Interface) (relist bool, err error) {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return false, nil
			}
			now := time.Now()
			if ev.Type == watch.Error {
				return true, apierrors.FromObject(ev.Object)
			}
			name, rv, ok := nameOf(ev.Object)
			if !ok {
				continue
			}
			if rv != "" {
				s.rv = rv
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				old := s.known[name]
				if !s.match(ev.Object) {
					// No longer selected: for us it is gone.
					if old != nil {
						delete(s.known, name)
						s.remove(now, ev.Object, false)
					}
					continue
				}
				s.known[name] = ev.Object
				s.upsert(now, old, ev.Object, false)
			case watch.Deleted:
				if _, had := s.known[name]; had || s.match(ev.Object) {
					delete(s.known, name)
					s.remove(now, ev.Object, false)
				}
			}
		}
	}
}

// sleep waits for d or until ctx is done; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
