package existingcluster

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Bad options are one line, every problem at once, before any file is read.
func TestOptionsRefusedAtOnce(t *testing.T) {
	_, err := Acquire(context.Background(), nil, InCluster(), WithContext("prod"), nil,
		WithLoadImage("Not An Image"), WithLoadNamespace("rc-load"), WithRowNamespaces("team-a"), WithPodSecurity("restricted"))
	if err == nil {
		t.Fatal("Acquire took bad options")
	}
	msg := err.Error()
	for _, want := range []string{"existing cluster options: ", "option 3 is nil", `load pod image "Not An Image"`, "InCluster and a kubeconfig or context",
		"WithLoadNamespace is for an app checked in place", "ROLLCHECK_POD_SECURITY=restricted labels the namespaces rollcheck creates"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q: no %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q: more than one line", msg)
	}
}

// A kubeconfig that is not there is one line naming it, and nothing is held.
func TestAcquireNoKubeconfig(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "kubeconfig")
	_, err := Acquire(context.Background(), nil, WithKubeconfig(missing), WithContext("staging"))
	want := "kubeconfig " + missing + ", context staging: stat " + missing + ": no such file or directory"
	if err == nil || err.Error() != want {
		t.Errorf("Acquire: %v, want %q", err, want)
	}
	_, err = Acquire(context.Background(), nil, WithKubeconfig(missing), WithDescription("--kubeconfig k"))
	if err == nil || !strings.HasPrefix(err.Error(), "--kubeconfig k: stat ") {
		t.Errorf("Acquire with a description: %v, want it at the head", err)
	}
}
