package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/e2e-framework/klient"
	"sigs.k8s.io/e2e-framework/klient/k8s"
	"sigs.k8s.io/e2e-framework/klient/wait"
	"sigs.k8s.io/e2e-framework/klient/wait/conditions"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/yaml"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/disrupt"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/kube"
)

// Cluster is a kind cluster rollcheck created or reused.
type Cluster struct {
	Options
	Config *KindConfig
	Client klient.Client
	// Created is true when Up created the cluster (false when it reused one).
	Created bool
	// RunID is the id of the run that holds the cluster (HoldRun; Join's from Share): it labels
	// the namespaces of the run's rows (Target), and names the run's Lease.
	RunID string
	kind  kindAPI
	loadedImages
}

// Up creates the cluster described by o, or reuses a running one of the same name, and waits
// until its nodes are Ready and its system pods run. kind runs in-process (its Go API): no kind
// binary is needed, only a Docker engine. Bad options or a missing Docker engine or node image
// give an error before anything is created. A Cluster is returned whenever one may exist (also
// with an error), so that the caller can release it.
func Up(ctx context.Context, o Options) (*Cluster, error) {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("cluster options: %w", err)
	}
	// A bad kind config is bad input: said before Docker is asked anything.
	kc, err := o.kindConfig()
	if err != nil {
		return nil, err
	}
	if err := dockerAnswers(ctx); err != nil {
		return nil, err
	}
	ref, err := ResolveNodeImage(ctx, o.NodeImage)
	if err != nil {
		return nil, err
	}
	o.NodeImage, o.ImageSource = ref, knobs.ImageSource(ref)
	// kind would pull a missing image; rollcheck never lets it (no registry traffic by surprise).
	if _, err := run(ctx, "docker", "image", "inspect", o.NodeImage); err != nil {
		return nil, fmt.Errorf("node image %s is not in the Docker engine, and rollcheck never pulls one by surprise: `docker pull %s` (or `rollcheck cluster node-image`, which pulls kind's image) gets it; with no registry, a checkout's `make node-image` builds the offline one (%s=offline)", o.NodeImage, o.NodeImage, knobs.EnvNodeImage)
	}
	rendered, err := kc.Render(o)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Options: o, Config: kc, kind: newKind(o.Logf)}
	exists, err := c.exists()
	if err != nil {
		return nil, err
	}
	if exists {
		// A Docker engine restart leaves kind's node containers stopped, and kind cannot
		// restart a cluster: a stopped one is rebuilt.
		if state, err := run(ctx, "docker", "inspect", "-f", "{{.State.Status}}", o.Name+"-control-plane"); err == nil && strings.TrimSpace(state) != "running" {
			o.Logf("kind cluster %q exists but its node is %s: deleting it to create it anew", o.Name, strings.TrimSpace(state))
			if err := c.Delete(ctx); err != nil {
				return nil, err
			}
			exists = false
		}
	}
	start := time.Now()
	if exists {
		if err := c.checkReusable(ctx); err != nil {
			return nil, err
		}
		o.Logf("reusing kind cluster %q", o.Name)
	} else {
		if err := portFree(kc.HostPort); err != nil {
			return nil, err
		}
		if o.Workers > 0 {
			if err := portFree(kc.EntryHostPort()); err != nil {
				return nil, err
			}
		}
		o.Logf("creating kind cluster %q (node image %s, %s)", o.Name, o.NodeImage, o.ImageSource)
		// kind's Create takes no context: a cancelled ctx is seen when it returns, and the
		// caller's release deletes what it made. On failure kind deletes its nodes itself.
		c.Created = true
		if err := c.create(rendered); err != nil {
			return nil, fmt.Errorf("create kind cluster %q: %w", o.Name, err)
		}
		o.Logf("kind cluster %q created in %s", o.Name, time.Since(start).Round(time.Second))
		if err := ctx.Err(); err != nil {
			return c, fmt.Errorf("create kind cluster %q: %w", o.Name, err)
		}
	}
	if err := c.connect(); err != nil {
		return c, err
	}
	if err := c.checkProxyMode(ctx); err != nil {
		return c, err
	}
	if err := c.routePodCIDRs(ctx); err != nil {
		return c, err
	}
	if err := c.waitSystemReady(ctx); err != nil {
		return c, err
	}
	if c.Created {
		if err := c.requestKubeProxyCPU(ctx); err != nil {
			return c, err
		}
	}
	if err := c.applyDNSChoice(ctx); err != nil {
		return c, err
	}
	if err := c.fenceEgress(ctx); err != nil {
		return c, err
	}
	o.Logf("cluster %q ready after %s", o.Name, time.Since(start).Round(100*time.Millisecond))
	return c, nil
}

// create runs kind's create with the rendered config. kind always writes a kubeconfig file:
// it goes to a temporary directory removed at once, so the user's ~/.kube/config is left alone
// (connect reads the kubeconfig from kind in memory).
func (c *Cluster) create(rendered []byte) error {
	return withScratchKubeconfig(func(path string) error {
		return c.kind.Create(c.Name,
			kindcluster.CreateWithRawConfig(rendered),
			kindcluster.CreateWithNodeImage(c.NodeImage),
			kindcluster.CreateWithWaitForReady(3*time.Minute),
			kindcluster.CreateWithKubeconfigPath(path),
			kindcluster.CreateWithDisplayUsage(false),
			kindcluster.CreateWithDisplaySalutation(false),
		)
	})
}

// connect makes the cluster's client from the kubeconfig kind gives (no file is written).
func (c *Cluster) connect() error {
	kubeconfig, err := c.kind.KubeConfig(c.Name, false)
	if err != nil {
		return fmt.Errorf("kubeconfig of cluster %q: %w", c.Name, err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(kubeconfig))
	if err == nil {
		c.Client, err = klient.New(cfg)
	}
	if err != nil {
		return fmt.Errorf("client for cluster %q: %w", c.Name, err)
	}
	return nil
}

// withScratchKubeconfig calls f with the path of a kubeconfig file in a new temporary directory,
// removed when f returns.
func withScratchKubeconfig(f func(path string) error) error {
	dir, err := os.MkdirTemp("", "rollcheck-kubeconfig-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	return f(filepath.Join(dir, "kubeconfig"))
}

// PartOfSelector selects the namespaces rollcheck's runs create (check.PartOfLabel).
const PartOfSelector = check.PartOfLabel + "=" + check.PartOfValue

// SweepNamespaces deletes the namespaces labelled PartOfSelector that runs left which no longer
// run (their Lease, RunLeaseName, is gone or expired; or they name no run), and with own this
// run's (c.RunID) too, and waits, at most 3 minutes, until they are gone; it returns how many
// there were and the runs whose Lease is live, whose namespaces it left alone (another run on
// the same cluster). At the start of a run such namespaces are what a killed run left behind,
// and they would still hold the NodePort the next run's Service needs.
func (c *Cluster) SweepNamespaces(ctx context.Context, own bool) (int, []string, error) {
	n, live, err := c.sweepRuns(ctx, own)
	if err != nil {
		return n, live, fmt.Errorf("sweep the namespaces of earlier runs: %w", err)
	}
	if err := c.uncordonOrphans(ctx); err != nil {
		return n, live, err
	}
	return n, live, nil
}

// uncordonOrphans makes schedulable again the nodes that a drain left cordoned when its run was
// killed mid-drain: their disrupt.CordonedBy annotation names a namespace that is gone. A node
// whose namespace still exists belongs to a drain still running, and is left alone.
func (c *Cluster) uncordonOrphans(ctx context.Context) error {
	var nodes corev1.NodeList
	if err := c.Client.Resources().List(ctx, &nodes); err != nil {
		return fmt.Errorf("list nodes for cordons left behind: %w", err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		ns := n.Annotations[disrupt.CordonedBy]
		if ns == "" {
			continue
		}
		var owner corev1.Namespace
		err := c.Client.Resources().Get(ctx, ns, "", &owner)
		if err == nil || !apierrors.IsNotFound(err) {
			continue
		}
		if err := disrupt.Uncordon(ctx, c.Client.Resources().GetControllerRuntimeClient(), n.Name, ns); err != nil {
			return fmt.Errorf("a drain of namespace %s, which is gone, left it cordoned: %w", ns, err)
		}
		c.Logf("node %s uncordoned: a drain of namespace %s, which is gone, left it cordoned", n.Name, ns)
	}
	return nil
}

// ErrNoCluster is the error Existing wraps when the named kind cluster does not exist.
var ErrNoCluster = errors.New("no kind cluster")

// Existing returns a handle on the named cluster, which must exist already: it never creates
// one. Its Client works; its Config is not loaded.
func Existing(ctx context.Context, o Options) (*Cluster, error) {
	c := existing(o)
	exists, err := c.exists()
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, fmt.Errorf("%w %q: rollcheck cluster up creates one", ErrNoCluster, o.Name)
	}
	if err := c.connect(); err != nil {
		return nil, err
	}
	return c, nil
}

// Release deletes the cluster if Up created it and it is not to be kept; a reused or kept
// cluster is left running.
func (c *Cluster) Release(ctx context.Context) error {
	switch {
	case !c.Created:
		c.Logf("leaving kind cluster %q running: this run did not create it", c.Name)
		return nil
	case c.Keep:
		c.Logf("keeping kind cluster %q (%s is set; rollcheck cluster down deletes it)", c.Name, knobs.EnvKeep)
		return nil
	}
	return c.Delete(ctx)
}

// Delete deletes the cluster, whoever created it.
func (c *Cluster) Delete(ctx context.Context) error {
	c.Logf("deleting kind cluster %q", c.Name)
	err := withScratchKubeconfig(func(path string) error { return c.kind.Delete(c.Name, path) })
	if err != nil {
		return fmt.Errorf("delete kind cluster %q: %w", c.Name, err)
	}
	return nil
}

// ExportLogs writes the cluster's logs (what kind export logs writes) into dir.
func (c *Cluster) ExportLogs(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("export logs: %w", err)
	}
	if err := c.kind.CollectLogs(c.Name, dir); err != nil {
		return fmt.Errorf("export logs of cluster %q to %s: %w", c.Name, dir, err)
	}
	return nil
}

// AppURL is the URL under which the app's NodePort answers on this machine.
func (c *Cluster) AppURL(path string) string {
	return fmt.Sprintf("http://127.0.0.1:%d%s", c.Config.HostPort, path)
}

// EntryURL is the URL under which the first worker's NodePort answers on this machine (its
// own loopback port, EntryHostPort); empty without workers.
func (c *Cluster) EntryURL(path string) string {
	if c.Workers == 0 {
		return ""
	}
	return fmt.Sprintf("http://127.0.0.1:%d%s", c.Config.EntryHostPort(), path)
}

// Versions records what a result was measured on.
type Versions struct {
	Kubernetes  string `json:"kubernetes"`
	Kind        string `json:"kind"`
	NodeImage   string `json:"nodeImage"`
	ImageSource string `json:"nodeImageSource"`
}

// Versions reads the server's Kubernetes version, kind's version and the node image in use.
func (c *Cluster) Versions(ctx context.Context) (Versions, error) {
	var v Versions
	dc, err := discovery.NewDiscoveryClientForConfig(c.Client.RESTConfig())
	if err != nil {
		return v, fmt.Errorf("versions: %w", err)
	}
	sv, err := dc.ServerVersion()
	if err != nil {
		return v, fmt.Errorf("versions: server version: %w", err)
	}
	v.Kubernetes = sv.GitVersion
	v.Kind = KindVersion()
	img, err := run(ctx, "docker", "inspect", "-f", "{{.Config.Image}}", c.Name+"-control-plane")
	if err != nil {
		return v, fmt.Errorf("versions: node image: %w", err)
	}
	v.NodeImage = strings.TrimSpace(img)
	v.ImageSource = knobs.ImageSource(v.NodeImage)
	return v, nil
}

func (c *Cluster) exists() (bool, error) {
	names, err := c.kind.List()
	if err != nil {
		return false, fmt.Errorf("list kind clusters: %w", err)
	}
	return slices.Contains(names, c.Name), nil
}

// checkReusable refuses to reuse a cluster that runs another node image or lacks the port mapping.
func (c *Cluster) checkReusable(ctx context.Context) error {
	node := c.Name + "-control-plane"
	img, err := run(ctx, "docker", "inspect", "-f", "{{.Config.Image}}", node)
	if err != nil {
		return fmt.Errorf("inspect node %s of the existing cluster: %w", node, err)
	}
	if got := strings.TrimSpace(img); got != c.NodeImage {
		return fmt.Errorf("existing cluster %q runs node image %s, want %s: delete it (rollcheck cluster down) or pick another %s", c.Name, got, c.NodeImage, knobs.EnvName)
	}
	state, err := run(ctx, "docker", "inspect", "-f", "{{.State.Status}}", node)
	if err != nil {
		return fmt.Errorf("inspect node %s of the existing cluster: %w", node, err)
	}
	if s := strings.TrimSpace(state); s != "running" {
		return fmt.Errorf("existing cluster %q: node %s is %s, not running: delete it (rollcheck cluster down)", c.Name, node, s)
	}
	all, err := c.kind.ListNodes(c.Name)
	if err != nil {
		return fmt.Errorf("list the nodes of the existing cluster %q: %w", c.Name, err)
	}
	if len(all) != 1+c.Workers {
		return fmt.Errorf("existing cluster %q has %d node(s), want %d (%d worker(s)): delete it (rollcheck cluster down) or set %s to match", c.Name, len(all), 1+c.Workers, c.Workers, knobs.EnvWorkers)
	}
	port, err := run(ctx, "docker", "port", node, fmt.Sprintf("%d/tcp", c.Config.NodePort))
	if err != nil || !strings.Contains(port, fmt.Sprintf("127.0.0.1:%d", c.Config.HostPort)) {
		return fmt.Errorf("existing cluster %q does not map NodePort %d to 127.0.0.1:%d (kind config changed?): delete it (rollcheck cluster down)", c.Name, c.Config.NodePort, c.Config.HostPort)
	}
	if c.Workers > 0 {
		entry := EntryNodeName(c.Name)
		port, err := run(ctx, "docker", "port", entry, fmt.Sprintf("%d/tcp", c.Config.NodePort))
		if err != nil || !strings.Contains(port, fmt.Sprintf("127.0.0.1:%d", c.Config.EntryHostPort())) {
			return fmt.Errorf("existing cluster %q does not map the NodePort %d of its first worker %s to 127.0.0.1:%d (created before rollcheck mapped it): delete it (rollcheck cluster down)", c.Name, c.Config.NodePort, entry, c.Config.EntryHostPort())
		}
	}
	return nil
}

func (c *Cluster) waitSystemReady(ctx context.Context) error {
	r := c.Client.Resources()
	cond := conditions.New(r)
	var nodes corev1.NodeList
	err := wait.For(cond.ResourceListMatchN(&nodes, 1+c.Workers, func(o k8s.Object) bool {
		for _, cd := range o.(*corev1.Node).Status.Conditions {
			if cd.Type == corev1.NodeReady {
				return cd.Status == corev1.ConditionTrue
			}
		}
		return false
	}), wait.WithContext(ctx), wait.WithTimeout(3*time.Minute), wait.WithInterval(time.Second))
	if err != nil {
		return fmt.Errorf("wait for %d Ready node(s) of cluster %q: %w", 1+c.Workers, c.Name, err)
	}
	for _, d := range []string{"coredns"} {
		dep := &appsv1.Deployment{}
		dep.Name, dep.Namespace = d, "kube-system"
		if err := wait.For(cond.DeploymentAvailable(d, "kube-system"), wait.WithContext(ctx), wait.WithTimeout(3*time.Minute), wait.WithInterval(time.Second)); err != nil {
			return fmt.Errorf("wait for kube-system/%s to be available: %w", d, err)
		}
	}
	// Pods can only be created once the default ServiceAccount exists.
	err = wait.For(func(ctx context.Context) (bool, error) {
		var sa corev1.ServiceAccount
		err := r.Get(ctx, "default", "default", &sa)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}, wait.WithContext(ctx), wait.WithTimeout(time.Minute), wait.WithInterval(time.Second))
	if err != nil {
		return fmt.Errorf("wait for the default ServiceAccount: %w", err)
	}
	return nil
}

// dnsIsolation decides whether Up removes CoreDNS's forwarding of names outside the cluster,
// and says why, for the one line Up logs. It is a choice of the kind front end, made only for a
// cluster this run created: a reused cluster is left as it is (rollcheck cannot tell who
// created it; one it created earlier got the same choice then). setting is
// ROLLCHECK_ISOLATE_DNS: true or false force the choice; auto (or empty) isolates the offline
// node image's clusters, which must send no query outside the machine, and leaves the upstream
// image's as kind makes them, since there an app may resolve outside names (a user's CI).
func dnsIsolation(setting, source string, created bool) (isolate bool, why string, err error) {
	auto, on, err := knobs.IsolateDNS(setting)
	if err != nil {
		return false, "", fmt.Errorf("%s=%q: %w", knobs.EnvIsolateDNS, setting, err)
	}
	switch {
	case !created:
		return false, "the cluster was reused, not created by this run: rollcheck changes CoreDNS only in a cluster it creates", nil
	case !auto:
		return on, fmt.Sprintf("%s=%s", knobs.EnvIsolateDNS, setting), nil
	case source == SourceOffline:
		return true, fmt.Sprintf("%s=auto: the offline node image, nothing leaves the machine", knobs.EnvIsolateDNS), nil
	}
	return false, fmt.Sprintf("%s=auto: the %s node image, outside names resolve as kind set up", knobs.EnvIsolateDNS, source), nil
}

// applyDNSChoice makes and logs the choice of dnsIsolation, in one line.
func (c *Cluster) applyDNSChoice(ctx context.Context) error {
	isolate, why, err := dnsIsolation(c.IsolateDNS, c.ImageSource, c.Created)
	if err != nil {
		return err
	}
	if !isolate {
		c.Logf("CoreDNS: forwarding outside the cluster left as it is (%s)", why)
		return nil
	}
	changed, err := c.isolateDNS(ctx)
	if err != nil {
		return err
	}
	if changed {
		c.Logf("CoreDNS: forwarding outside the cluster removed (%s)", why)
	} else {
		c.Logf("CoreDNS: no forwarding outside the cluster to remove (%s)", why)
	}
	return nil
}

// isolatedAnnotation marks the CoreDNS ConfigMap of a cluster rollcheck isolated. A later run
// that reuses the cluster fences its nodes again: a node container that Docker restarted (an
// engine restart, a host reboot) has lost its iptables rules, not its CoreDNS config.
const isolatedAnnotation = "rollcheck.io/isolated"

// isolatedBefore reports whether a run that created this cluster isolated it
// (isolatedAnnotation on CoreDNS's ConfigMap).
func (c *Cluster) isolatedBefore(ctx context.Context) (bool, error) {
	var cm corev1.ConfigMap
	if err := c.Client.Resources("kube-system").Get(ctx, "coredns", "kube-system", &cm); err != nil {
		return false, fmt.Errorf("get CoreDNS config: %w", err)
	}
	return cm.Annotations[isolatedAnnotation] == "true", nil
}

// isolateDNS drops CoreDNS's forwarding of names outside the cluster, so that no DNS query
// leaves the machine; cluster names (Services) still resolve. It restarts CoreDNS when it
// changed its config, and says whether it did. Idempotent.
func (c *Cluster) isolateDNS(ctx context.Context) (bool, error) {
	r := c.Client.Resources("kube-system")
	var cm corev1.ConfigMap
	if err := r.Get(ctx, "coredns", "kube-system", &cm); err != nil {
		return false, fmt.Errorf("get CoreDNS config: %w", err)
	}
	corefile, changed := withoutForward(cm.Data["Corefile"])
	marked := cm.Annotations[isolatedAnnotation] == "true"
	if !changed && marked {
		return false, nil
	}
	cm.Data["Corefile"] = corefile
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[isolatedAnnotation] = "true"
	if err := r.Update(ctx, &cm); err != nil {
		return false, fmt.Errorf("update CoreDNS config: %w", err)
	}
	if !changed {
		return false, nil // marked only: CoreDNS serves the same Corefile
	}
	if err := kube.RestartDeployment(ctx, c.Client, "kube-system", "coredns"); err != nil {
		return true, fmt.Errorf("restart CoreDNS: %w", err)
	}
	if err := kube.WaitRollout(ctx, c.Client, "kube-system", "coredns", 2*time.Minute); err != nil {
		return true, fmt.Errorf("restart CoreDNS: %w", err)
	}
	return true, nil
}

// withoutForward returns the Corefile without its forward directives (with their blocks), and
// whether there was one.
func withoutForward(corefile string) (string, bool) {
	lines := strings.Split(corefile, "\n")
	var kept []string
	skipping := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case skipping:
			if t == "}" {
				skipping = false
			}
			continue
		case strings.HasPrefix(t, "forward "):
			skipping = strings.HasSuffix(t, "{")
			continue
		}
		kept = append(kept, l)
	}
	return strings.Join(kept, "\n"), len(kept) != len(lines)
}

func dockerAnswers(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := exec.LookPath("docker"); err != nil {
		return errors.New("docker CLI not found: install Docker (make docker does it on Debian as root)")
	}
	if out, err := run(ctx, "docker", "info", "-f", "{{.ServerVersion}}"); err != nil || strings.TrimSpace(out) == "" {
		return fmt.Errorf("no Docker engine answers (docker info failed): start one (in a checkout, make docker installs and starts one on Debian as root): %v", err)
	}
	return nil
}

// run runs a command and returns its stdout; the error carries stderr.
func run(ctx context.Context, name string, args ...string) (string, error) {
	return runIn(ctx, "", nil, name, args...)
}

// runIn runs a command in dir (empty: the current one) with env added to the environment.
func runIn(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Down deletes the named cluster if it exists; a missing cluster is not an error.
func Down(ctx context.Context, o Options) error {
	c := existing(o)
	exists, err := c.exists()
	if err != nil {
		return err
	}
	if !exists {
		c.Logf("no kind cluster %q: nothing to delete", o.Name)
		return nil
	}
	return c.Delete(ctx)
}

// ExportLogs exports the logs of the named cluster into dir, if the cluster exists.
func ExportLogs(ctx context.Context, o Options, dir string) error {
	c := existing(o)
	if exists, err := c.exists(); err != nil || !exists {
		return fmt.Errorf("export logs: no kind cluster %q (%v)", o.Name, err)
	}
	return c.ExportLogs(ctx, dir)
}

// existing is a handle on the named cluster for Down, ExportLogs and Existing, without creating it.
func existing(o Options) *Cluster {
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return &Cluster{Options: o, kind: newKind(o.Logf)}
}

// FlushConntrack deletes the nodes' conntrack entries for connections to the app's NodePort and
// returns how many it deleted.
//
// Why: all load reaches the node from one address (docker-proxy's end of the kind network), and
// the host reuses source ports within a minute. An entry left by a connection to a pod that is
// gone — above all an unanswered SYN, which conntrack keeps for 120 s in SYN_SENT — catches a
// new connection with the same ports and sends it to that dead pod, where it hangs until the
// client times out. A scenario that kills pods abruptly would leave such entries behind and
// fail the next, well-behaved scenario; the suites flush between specs.
func (c *Cluster) FlushConntrack(ctx context.Context) (int, error) {
	nodes, err := c.kind.ListNodes(c.Name)
	if err != nil {
		return 0, fmt.Errorf("flush conntrack: list nodes: %w", err)
	}
	total := 0
	for _, node := range nodes {
		var buf bytes.Buffer
		err := node.CommandContext(ctx, "conntrack", "-D", "-p", "tcp",
			"--orig-port-dst", fmt.Sprint(c.Config.NodePort)).SetStdout(&buf).SetStderr(&buf).Run()
		msg := buf.Bytes()
		// conntrack exits 1 when no entry matched; its summary line says how many it deleted.
		var n int
		if i := strings.Index(string(msg), "): "); i >= 0 {
			fmt.Sscanf(string(msg)[i+3:], "%d flow entries", &n)
		}
		if err != nil && !strings.Contains(string(msg), "0 flow entries") {
			return total, fmt.Errorf("flush conntrack on %s: %w: %s", node, err, strings.TrimSpace(string(msg)))
		}
		total += n
	}
	return total, nil
}

// checkProxyMode refuses a reused cluster whose kube-proxy runs in another mode than the
// options ask (kind's kube-proxy ConfigMap says which; no mode there means iptables): rows
// measured in one mode must not be reported as the other's.
func (c *Cluster) checkProxyMode(ctx context.Context) error {
	if c.Created {
		return nil
	}
	want := c.ProxyMode
	if want == "" {
		want = ProxyIPTables
	}
	var cm corev1.ConfigMap
	if err := c.Client.Resources().Get(ctx, "kube-proxy", "kube-system", &cm); err != nil {
		return fmt.Errorf("existing cluster %q: read kube-proxy's configuration (kube-system/kube-proxy): %w", c.Name, err)
	}
	got, err := proxyModeOf(cm.Data["config.conf"])
	if err != nil {
		return fmt.Errorf("existing cluster %q: %w", c.Name, err)
	}
	if got != want {
		return fmt.Errorf("existing cluster %q runs kube-proxy in %s mode, want %s: delete it (rollcheck cluster down) or set %s=%s", c.Name, got, want, knobs.EnvProxyMode, got)
	}
	return nil
}

// proxyModeOf is the mode of a KubeProxyConfiguration document: iptables when it names none.
func proxyModeOf(conf string) (string, error) {
	var kp struct {
		Mode string `json:"mode"`
	}
	if err := yaml.Unmarshal([]byte(conf), &kp); err != nil {
		return "", fmt.Errorf("parse kube-proxy's configuration: %w", err)
	}
	if kp.Mode == "" {
		return ProxyIPTables, nil
	}
	return kp.Mode, nil
}

// portFree says, before kind is asked, whether the host port the kind config maps the app's
// NodePort to is free on 127.0.0.1: when another cluster (or anything else) holds it, kind's
// docker run fails with only "exit status 125".
func portFree(port int32) error {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
	if err != nil {
		return fmt.Errorf("127.0.0.1:%d, which the kind config maps the app's NodePort to, is in use (another kind cluster? docker ps --filter publish=%d): delete that cluster, or give this one another hostPort in %s", port, port, knobs.EnvKindConfig)
	}
	return l.Close()
}
