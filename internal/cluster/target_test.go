package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	kindexec "sigs.k8s.io/kind/pkg/exec"
)

// fakeNode is a kind node that answers the commands of an image load: crictl inspecti (the image
// is there once imported), containerd config dump, and ctr images import, which takes 50 ms and
// is counted.
type fakeNode struct {
	name string
	// noCrictl: crictl answers no inspecti, as the offline node's shim does; ctr images ls does.
	noCrictl bool

	mu              sync.Mutex
	imports, active int
	overlapped      bool
}

func (n *fakeNode) String() string              { return n.name }
func (n *fakeNode) Role() (string, error)       { return "worker", nil }
func (n *fakeNode) IP() (string, string, error) { return "", "", nil }
func (n *fakeNode) SerialLogs(io.Writer) error  { return nil }
func (n *fakeNode) Command(c string, a ...string) kindexec.Cmd {
	return &fakeNodeCmd{n: n, args: append([]string{c}, a...)}
}
func (n *fakeNode) CommandContext(_ context.Context, c string, a ...string) kindexec.Cmd {
	return n.Command(c, a...)
}

// fakeNodeCmd is one command on a fakeNode.
type fakeNodeCmd struct {
	n      *fakeNode
	args   []string
	stdin  io.Reader
	stdout io.Writer
}

func (c *fakeNodeCmd) SetEnv(...string) kindexec.Cmd      { return c }
func (c *fakeNodeCmd) SetStdin(r io.Reader) kindexec.Cmd  { c.stdin = r; return c }
func (c *fakeNodeCmd) SetStdout(w io.Writer) kindexec.Cmd { c.stdout = w; return c }
func (c *fakeNodeCmd) SetStderr(io.Writer) kindexec.Cmd   { return c }

func (c *fakeNodeCmd) Run() error {
	n := c.n
	switch c.args[0] {
	case "crictl": // inspecti REF
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.imports == 0 || n.noCrictl {
			return errors.New("no such image")
		}
		_, err := io.WriteString(c.stdout, `{"status": {"id": "sha256:app"}}`)
		return err
	case "containerd": // config dump
		_, err := io.WriteString(c.stdout, "version = 3\n[plugins.'io.containerd.cri.v1.images']\nsnapshotter = 'overlayfs'\n")
		return err
	case "ctr": // images import ... -, or images ls -q name==NAME
		if c.args[2] == "images" && c.args[3] == "ls" {
			n.mu.Lock()
			defer n.mu.Unlock()
			if n.imports > 0 && strings.HasPrefix(c.args[len(c.args)-1], "name==docker.io/") {
				_, err := io.WriteString(c.stdout, strings.TrimPrefix(c.args[len(c.args)-1], "name==")+"\n")
				return err
			}
			return nil
		}
		if _, err := io.Copy(io.Discard, c.stdin); err != nil {
			return err
		}
		n.mu.Lock()
		n.active++
		n.overlapped = n.overlapped || n.active > 1
		n.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
		n.mu.Lock()
		n.active--
		n.imports++
		n.mu.Unlock()
		return nil
	}
	return fmt.Errorf("fake node: unexpected command %q", c.args)
}

// Rows started together load the same image once: every call waits for the load in progress,
// and then finds the image loaded. Each node imports it once, and never twice at a time.
func TestLoadImagesOnce(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	fakeTool(t, dir, "docker", `echo "$@" >> `+calls+`
case "$1" in
  image) echo sha256:app ;;
  save) : > "$3" ;;
  *) exit 1 ;;
esac
`)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	workers := []*fakeNode{{name: "rc-worker"}, {name: "rc-worker2"}}
	c := &Cluster{Options: Options{Name: "rc", Logf: t.Logf}, kind: &fakeKind{nodes: []nodes.Node{workers[0], workers[1]}}}

	const rows = 3
	var wg sync.WaitGroup
	errs := make([]error, rows)
	for i := range rows {
		wg.Go(func() { errs[i] = c.LoadImages(context.Background(), []string{"example/app:dev"}) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, n := range workers {
		if n.imports != 1 || n.overlapped {
			t.Errorf("node %s: %d imports (overlapping: %v), want 1", n, n.imports, n.overlapped)
		}
	}
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	if saves := strings.Count(string(b), "save -o"); saves != 1 {
		t.Errorf("docker was called:\n%s\nwant one docker save, not %d", b, saves)
	}
}
