package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	apiwait "k8s.io/apimachinery/pkg/util/wait"
)

// RetryFor bounds how long Retry asks again after transient errors: an API server restarted by
// its kubelet (a static pod) or upgraded answers again well within it.
var RetryFor = 2 * time.Minute

// Transient tells whether err is one an API server gives while it restarts, is upgraded or is
// overloaded, and that the same request may get no more once it is back: the connection
// refused, reset or cut (EOF), a timeout, 429 Too Many Requests (API priority and fairness),
// 500, 503 and 504. A context's own end is never transient.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err) {
		return true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || utilnet.IsProbableEOF(err) ||
		utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// outage is the current streak of transient errors, over every wait and retry of the process:
// since when no request has succeeded. Once it is longer than RetryFor, the API server is taken
// for gone (a stopped node, a deleted cluster) and nothing waits for it any more.
var outage struct {
	sync.Mutex
	since time.Time
}

// note records the outcome of a request (transient: err is a transient error); it returns how
// long the API server has not answered (0 when it just did).
func note(err error, transient bool) time.Duration {
	outage.Lock()
	defer outage.Unlock()
	switch {
	case !transient: // an answer, even a refusal: the server is there
		outage.since = time.Time{}
	default:
		if outage.since.IsZero() {
			outage.since = time.Now()
		}
		return time.Since(outage.since)
	}
	return 0
}

// gone is the error for an API server that has not answered for longer than RetryFor.
func gone(for_ time.Duration, err error) error {
	return fmt.Errorf("the API server has not answered for %s: %w", for_.Round(time.Second), err)
}

// warmingUp tells whether err, after a transient error (after is true), may be an API server
// that is back but not ready: until its authorizer's caches are filled it refuses requests it
// would allow (403, 401). Only after a transient error: a lasting refusal is never asked again
// on its own.
func warmingUp(err error, after bool) bool {
	return after && (apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err))
}

// Retry calls f until it returns nil or an error that is not Transient (after a transient one,
// not a refusal of an API server warming up either), waiting a little longer each time, for at
// most RetryFor; it returns f's last error. f must be safe to repeat: a request
// whose answer was lost may have been done (a deletion then finds the object gone: f says
// whether that is success).
func Retry(ctx context.Context, f func(context.Context) error) error {
	var last error
	backoff := apiwait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Steps: 1 << 30, Cap: 5 * time.Second}
	ctx, cancel := context.WithTimeout(ctx, RetryFor)
	defer cancel()
	transient := false
	err := apiwait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		last = f(ctx)
		if Transient(last) || warmingUp(last, transient) {
			transient = true
			if d := note(last, true); d > RetryFor {
				return true, gone(d, last)
			}
			return false, nil
		}
		note(last, false)
		return true, last
	})
	if err != nil && last != nil && !errors.Is(err, last) {
		return fmt.Errorf("%w (asked again for %s after transient errors)", last, RetryFor)
	}
	return err
}

// Tolerant wraps a wait condition so that a transient error (Transient), and after one a
// refusal of an API server still warming up, counts as "not yet" rather than ending the wait; the last one is kept in *last, for the message of a wait that
// times out.
func Tolerant(cond apiwait.ConditionWithContextFunc, last *error) apiwait.ConditionWithContextFunc {
	return func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if (Transient(err) || warmingUp(err, *last != nil)) && ctx.Err() == nil {
			*last = err
			if d := note(err, true); d > RetryFor {
				return false, gone(d, err)
			}
			return false, nil
		}
		note(err, false)
		return ok, err
	}
}

// WithLastError appends the last transient error a wait tolerated to its error.
func WithLastError(err, last error) error {
	if err == nil || last == nil {
		return err
	}
	return fmt.Errorf("%w (last API error: %v)", err, last)
}
