package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestTransient(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"EOF", fmt.Errorf("get: %w", io.EOF), true},
		{"refused", &net.OpError{Op: "dial", Err: &net.OpError{Err: syscall.ECONNREFUSED}}, true},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"503", apierrors.NewServiceUnavailable("restarting"), true},
		{"429", apierrors.NewTooManyRequests("slow down", 1), true},
		{"500", apierrors.NewInternalError(errors.New("etcd")), true},
		{"not found", apierrors.NewNotFound(pods, "web"), false},
		{"forbidden", apierrors.NewForbidden(pods, "web", errors.New("rbac")), false},
		{"cancelled", context.Canceled, false},
	} {
		if got := Transient(tc.err); got != tc.want {
			t.Errorf("%s: Transient(%v) = %t, want %t", tc.name, tc.err, got, tc.want)
		}
	}
}

// Retry asks again through transient errors, stops at once on any other, and gives up after
// RetryFor with the last error named.
func TestRetry(t *testing.T) {
	n := 0
	if err := Retry(context.Background(), func(context.Context) error {
		if n++; n < 3 {
			return io.EOF
		}
		return nil
	}); err != nil || n != 3 {
		t.Errorf("Retry = %v after %d calls, want nil after 3", err, n)
	}
	n = 0
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "web", errors.New("rbac"))
	if err := Retry(context.Background(), func(context.Context) error { n++; return forbidden }); !apierrors.IsForbidden(err) || n != 1 {
		t.Errorf("Retry = %v after %d calls, want forbidden after 1", err, n)
	}
	n = 0
	if err := Retry(context.Background(), func(context.Context) error {
		switch n++; n {
		case 1:
			return io.EOF
		case 2:
			return forbidden
		}
		return nil
	}); err != nil || n != 3 {
		t.Errorf("Retry = %v after %d calls, want nil after EOF, a warming 403 and success", err, n)
	}
	defer func(d time.Duration) { RetryFor = d }(RetryFor)
	RetryFor = 600 * time.Millisecond
	err := Retry(context.Background(), func(context.Context) error { return io.EOF })
	if !errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "asked again for 600ms after transient errors") {
		t.Errorf("Retry = %v, want EOF after 600ms of asking", err)
	}
}

// A tolerant condition reads a transient error as "not yet" and keeps it; any other ends the wait.
func TestTolerant(t *testing.T) {
	var last error
	ok, err := Tolerant(func(context.Context) (bool, error) { return false, io.EOF }, &last)(context.Background())
	if ok || err != nil || !errors.Is(last, io.EOF) {
		t.Errorf("transient: %t, %v, last %v", ok, err, last)
	}
	if _, err := Tolerant(func(context.Context) (bool, error) { return false, errors.New("bad") }, &last)(context.Background()); err == nil {
		t.Error("a lasting error did not end the wait")
	}
	// An API server back from a restart refuses until its authorizer is ready: after a transient
	// error, a 403 is "not yet" too; on its own it ends the wait.
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "web", errors.New("rbac"))
	last = nil
	if _, err := Tolerant(func(context.Context) (bool, error) { return false, forbidden }, &last)(context.Background()); !apierrors.IsForbidden(err) {
		t.Errorf("a 403 on its own: %v, want it to end the wait", err)
	}
	last = io.EOF
	if ok, err := Tolerant(func(context.Context) (bool, error) { return false, forbidden }, &last)(context.Background()); ok || err != nil {
		t.Errorf("a 403 after EOF: %t, %v, want not yet", ok, err)
	}
	if got := WithLastError(errors.New("timed out"), io.EOF); got.Error() != "timed out (last API error: EOF)" {
		t.Errorf("WithLastError = %q", got)
	}
}

// An API server that does not answer for longer than RetryFor, over every wait, is gone: the
// wait ends with that said, and an answer ends the streak.
func TestTolerantGivesUpOnAGoneServer(t *testing.T) {
	defer func(d time.Duration) { RetryFor = d }(RetryFor)
	RetryFor = 300 * time.Millisecond
	note(nil, false)
	var last error
	eof := Tolerant(func(context.Context) (bool, error) { return false, io.EOF }, &last)
	if _, err := eof(context.Background()); err != nil {
		t.Fatalf("first EOF: %v", err)
	}
	time.Sleep(400 * time.Millisecond)
	if _, err := eof(context.Background()); err == nil || !strings.Contains(err.Error(), "the API server has not answered for") {
		t.Fatalf("EOF after 400ms without an answer: %v, want gone", err)
	}
	if _, err := Tolerant(func(context.Context) (bool, error) { return true, nil }, &last)(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := eof(context.Background()); err != nil {
		t.Errorf("EOF after an answer: %v, want not yet", err)
	}
}
