package sampleapp

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// await-dns exits 0 once the name answers COUNT addresses, 1 when WITHIN passes first (naming
// the last answer or error), 2 on bad arguments.
func TestAwaitDNS(t *testing.T) {
	answers := [][]string{{"10.0.0.1"}, {"10.0.0.2", "10.0.0.1"}, {"10.0.0.3", "10.0.0.1", "10.0.0.2"}}
	n := 0
	growing := func(_ context.Context, name string) ([]string, error) {
		if name != "app-headless" {
			t.Errorf("asked %q", name)
		}
		a := answers[min(n, len(answers)-1)]
		n++
		return append([]string(nil), a...), nil
	}
	var out, errw bytes.Buffer
	if rc := awaitDNSCommand(context.Background(), []string{"app-headless", "3", "10s"}, growing, &out, &errw); rc != 0 ||
		!strings.Contains(out.String(), "3 address(es): 10.0.0.1 10.0.0.2 10.0.0.3") || n != 3 {
		t.Errorf("exit %d after %d lookups, stdout %q, stderr %q", rc, n, out.String(), errw.String())
	}

	out.Reset()
	errw.Reset()
	n = 0
	if rc := awaitDNSCommand(context.Background(), []string{"app-headless", "4", "600ms"}, growing, &out, &errw); rc != 1 ||
		!strings.Contains(errw.String(), "fewer than 4 addresses after 600ms: the last answer held 3") {
		t.Errorf("too few: exit %d, stderr %q", rc, errw.String())
	}

	errw.Reset()
	failing := func(context.Context, string) ([]string, error) { return nil, errors.New("no such host") }
	if rc := awaitDNSCommand(context.Background(), []string{"app-headless", "1", "300ms"}, failing, &out, &errw); rc != 1 ||
		!strings.Contains(errw.String(), "no such host") {
		t.Errorf("failing lookups: exit %d, stderr %q", rc, errw.String())
	}

	for _, args := range [][]string{{}, {"a", "0", "1s"}, {"a", "x", "1s"}, {"a", "1", "0s"}, {"a", "1", "1h"}, {"a", "1"}} {
		errw.Reset()
		if rc := awaitDNSCommand(context.Background(), args, failing, &out, &errw); rc != 2 || !strings.Contains(errw.String(), "usage: app await-dns") {
			t.Errorf("%q: exit %d, stderr %q", args, rc, errw.String())
		}
	}
}
