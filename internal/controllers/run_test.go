package controllers

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lines collects what a step logs.
type lines struct {
	sync.Mutex
	got []string
}

func (l *lines) logf(f string, a ...any) {
	l.Lock()
	defer l.Unlock()
	l.got = append(l.got, fmt.Sprintf(f, a...))
}

func (l *lines) String() string {
	l.Lock()
	defer l.Unlock()
	return strings.Join(l.got, "\n")
}

func shortPauses(t *testing.T) {
	r, s := retryPause, stillEvery
	retryPause, stillEvery = time.Millisecond, 50*time.Millisecond
	t.Cleanup(func() { retryPause, stillEvery = r, s })
}

func TestStepRetriesUntilATrySucceeds(t *testing.T) {
	shortPauses(t)
	count := filepath.Join(t.TempDir(), "count")
	// Fails on its first two tries, answers on the third.
	script := `echo x >> "$0"; n=$(wc -l < "$0"); [ "$n" -ge 3 ] || { echo "try $n failed" >&2; exit 1; }; echo done`
	var l lines
	out, err := step{what: "the flaky thing", limit: 10 * time.Second, tries: 3, argv: []string{"sh", "-c", script, count}}.do(context.Background(), l.logf)
	if err != nil || strings.TrimSpace(string(out)) != "done" {
		t.Fatalf("do = %q, %v; want done", out, err)
	}
	log := l.String()
	for _, want := range []string{"waiting up to 10s for: the flaky thing (try 1/3)", "try 1 failed", "(try 3/3)"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestStepGivesUpWithTheLastError(t *testing.T) {
	shortPauses(t)
	_, err := step{what: "the broken thing", limit: 10 * time.Second, tries: 2, argv: []string{"sh", "-c", "echo no such module >&2; exit 1"}}.do(context.Background(), func(string, ...any) {})
	if err == nil || !strings.Contains(err.Error(), "gave up after 2 tries") || !strings.Contains(err.Error(), "no such module") {
		t.Fatalf("err = %v, want one that gives up after 2 tries and says why", err)
	}
}

// A step that stalls is stopped at its limit, and says meanwhile that it still waits.
func TestStepStallsAreBoundedAndLogged(t *testing.T) {
	shortPauses(t)
	var l lines
	start := time.Now()
	_, err := step{what: "a stalled download", limit: 300 * time.Millisecond, tries: 1, argv: []string{"sleep", "30"}}.do(context.Background(), l.logf)
	if err == nil || !strings.Contains(err.Error(), "no result within 300ms") {
		t.Fatalf("err = %v, want no result within the limit", err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("took %s, want about the limit", took)
	}
	if !strings.Contains(l.String(), "still waiting for: a stalled download") {
		t.Errorf("log says nothing while it waits:\n%s", l.String())
	}
}

func TestStepStopsWithItsContext(t *testing.T) {
	shortPauses(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := step{what: "a long build", limit: time.Minute, tries: 3, argv: []string{"sleep", "30"}}.do(ctx, func(string, ...any) {})
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Fatalf("err = %v, want the context's", err)
	}
}

func TestTail(t *testing.T) {
	if got := tail("a\nb\nc\n", 2); got != "b | c" {
		t.Errorf("tail = %q", got)
	}
	if got := tail("", 2); got != "" {
		t.Errorf("tail of nothing = %q", got)
	}
}
