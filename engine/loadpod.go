package engine

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/loadgen/attack"
)

// load is a running load, from the host (*attack.Attack) or from a load pod (*podLoad).
type load interface {
	Progress() loadgen.Progress
	Done() <-chan struct{}
	Stop()
	Wait() (*loadgen.Result, error)
}

// loadPodName is the load pod's name in the row's namespace (suffixed -1, -2, … when several
// share the rate).
const loadPodName = "rollcheck-load"

// loadPodLabels label every load pod (the topology spread counts them).
var loadPodLabels = map[string]string{check.PartOfLabel: check.PartOfValue, "app.kubernetes.io/component": "load"}

// podLoad is the load sent by a pod in the row's namespace (rollcheck agent load,
// internal/loadagent, which runs attack.Serve) to the load Service's cluster address, its
// ledger followed through the API server's pod log stream. Stop deletes the pod: its SIGTERM
// stops the attack, the requests in flight complete and the end of the stream is written before
// it exits.
type podLoad struct {
	cs     kubernetes.Interface
	ns     string
	name   string
	grace  int64
	remote *attack.Remote
	cancel context.CancelFunc
	// unwatch releases the caller's context from stopping the pod once the stream is read.
	unwatch func() bool
	// clock is the pod's clock against this process's; Wait moves the requests' times by
	// −clock.Offset when apply is set (Target.SharedClock unset).
	clock check.LoadClock
	// node is the node the pod ran on.
	node string
	// stopping is set once Stop was called: the row ends the load, nobody else did.
	stopping atomic.Bool
}

// loadPlacement says where load pods go: away from the app's pods where the scheduler can
// (a preferred anti-affinity to the app's labels, so that requests cross nodes), and on one
// named node when the front end names one (kind with workers: the control plane, which runs no
// pod of the rows, its NoSchedule taint tolerated).
type loadPlacement struct {
	node  string
	avoid map[string]string
	// avoidIn is the namespace of the pods to avoid when it is not the load pods' own (an app
	// checked in place); empty: the load pods' namespace, where a term looks by default.
	avoidIn string
}

func (p loadPlacement) affinity() *corev1.Affinity {
	if len(p.avoid) == 0 {
		return nil
	}
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100,
			PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname,
				LabelSelector: &metav1.LabelSelector{MatchLabels: p.avoid}, Namespaces: namespaces(p.avoidIn)}}}}}
}

// namespaces is the list of one namespace ns, nil for none.
func namespaces(ns string) []string {
	if ns == "" {
		return nil
	}
	return []string{ns}
}

func (p loadPlacement) nodeSelector() map[string]string {
	if p.node == "" {
		return nil
	}
	return map[string]string{corev1.LabelHostname: p.node}
}

func (p loadPlacement) tolerations() []corev1.Toleration {
	if p.node == "" {
		return nil
	}
	return []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
}

// startPodLoad creates the load pod running image against the load Service's cluster address
// and follows its stream; the pod first waits until the Service answers from replicas pods on
// its own path (no wait from the host), and startPodLoad returns once the attack has started
// (its start line arrived).
func startPodLoad(ctx context.Context, cs kubernetes.Interface, ns, name, image string, cfg loadgen.Config, replicas int, sharedClock bool, place loadPlacement, logf func(string, ...any)) (*podLoad, error) {
	// The pod gets the request timeout and some to finish after its SIGTERM, and the attack's
	// bound and a minute more before the kubelet ends it anyway.
	grace := int64((cfg.Timeout + 10*time.Second) / time.Second)
	deadline := int64((cfg.Duration + time.Minute) / time.Second)
	args := []string{"--target=" + cfg.Target, "--rate=" + strconv.Itoa(cfg.Rate), "--duration=" + cfg.Duration.String(),
		"--timeout=" + cfg.Timeout.String(), "--method=" + cfg.Method, "--keepalive=" + strconv.FormatBool(cfg.KeepAlive),
		"--pod-header=" + cfg.PodHeader, "--name=" + cfg.Name, "--serving-replicas=" + strconv.Itoa(replicas),
		"--clock-port=" + strconv.Itoa(loadClockPort)}
	if cfg.Proxy {
		args = append(args, "--proxy", "--upstream-header="+cfg.UpstreamHeader)
	}
	if cfg.Resolve != "" {
		args = append(args, "--resolve="+cfg.Resolve)
	}
	if cfg.Protocol != "" {
		args = append(args, "--protocol="+string(cfg.Protocol))
	}
	if cfg.Protocol == loadgen.ProtocolGRPC {
		args = append(args, "--grpc-method="+cfg.GRPCMethod, "--balancing="+string(cfg.Balancing),
			"--wait-for-ready="+strconv.FormatBool(cfg.WaitForReady), "--retry="+strconv.FormatBool(cfg.Retry))
		if len(cfg.GRPCMessage) > 0 {
			args = append(args, "--grpc-message="+base64.StdEncoding.EncodeToString(cfg.GRPCMessage))
		}
	}
	if h := cfg.Headers["Host"]; h != "" {
		args = append(args, "--host="+h)
	}
	pod := loadPod(ns, name, image, args, grace, deadline, place)
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create the load pod: %w", err)
	}
	node, err := waitContainerStarted(ctx, cs, ns, name, 2*time.Minute)
	if err != nil {
		return nil, fmt.Errorf("load pod %s: %w", name, err)
	}
	// The stream outlives the caller's cancellation only as long as the pod does: Stop and a
	// cancelled ctx delete the pod, which ends the stream.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stream, err := cs.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{Container: "load", Follow: true}).Stream(sctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("follow the load pod's stream: %w", err)
	}
	pl := &podLoad{cs: cs, ns: ns, name: name, grace: grace, remote: attack.Follow(stream), cancel: cancel, node: node}
	go func() {
		<-pl.remote.Done()
		_ = stream.Close()
	}()
	pl.unwatch = context.AfterFunc(ctx, pl.Stop)
	select {
	case <-pl.remote.Started():
	case <-time.After(2 * time.Minute):
		pl.Stop()
		return nil, errors.New("the load pod wrote no start line within 2 minutes")
	}
	select {
	case <-pl.remote.Done(): // no start line: the stream's error says why (the serving wait's line)
		if _, err := pl.remote.Wait(); err != nil {
			return nil, fmt.Errorf("load pod %s: %w", name, err)
		}
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pl.clock = measureClock(ctx, cs, ns, name)
	pl.clock.Applied = !sharedClock && pl.clock.Samples > 0
	logf("load pod %s/%s sends %d req/s to %s; its clock: %s", ns, name, cfg.Rate, cfg.Target, clockString(pl.clock))
	return pl, nil
}

// waitContainerStarted waits until the pod's container runs (or already ended: its stream is
// still there to read), and fails at once when it cannot start. It returns the pod's node.
func waitContainerStarted(ctx context.Context, cs kubernetes.Interface, ns, name string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			for _, st := range p.Status.ContainerStatuses {
				switch {
				case st.State.Running != nil, st.State.Terminated != nil:
					return p.Spec.NodeName, nil
				case st.State.Waiting != nil && st.State.Waiting.Reason != "" && st.State.Waiting.Reason != "ContainerCreating":
					return "", fmt.Errorf("container %s waits: %s: %s", st.Name, st.State.Waiting.Reason, st.State.Waiting.Message)
				}
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("not running after %s (last error: %v)", timeout, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (pl *podLoad) Progress() loadgen.Progress { return pl.remote.Progress() }
func (pl *podLoad) Done() <-chan struct{}      { return pl.remote.Done() }

// Stop deletes the load pod gracefully: the pod stops its attack on SIGTERM and writes the end
// of its stream. It returns at once and may be called more than once.
func (pl *podLoad) Stop() {
	pl.stopping.Store(true)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = pl.cs.CoreV1().Pods(pl.ns).Delete(ctx, pl.name, metav1.DeleteOptions{GracePeriodSeconds: &pl.grace})
	}()
}

// Wait returns the Result rebuilt from the pod's stream, once the stream has ended; a stream
// that ended without its end line (the pod was killed, the log stream was cut) is an error.
func (pl *podLoad) Wait() (*loadgen.Result, error) {
	res, err := pl.remote.Wait()
	pl.cancel()
	pl.unwatch()
	if res != nil && pl.clock.Applied {
		res.ShiftClock(-pl.clock.Offset)
	}
	return res, err
}

// Lost says why the pod's stream ended before the row stopped it, when it did: the pod deleted,
// evicted or killed, or its log stream cut (an API server or kubelet restart). It is nil while
// the stream runs and when it ended whole. A lost stream is a harness fault, never a load with
// fewer failures.
func (pl *podLoad) Lost() error {
	select {
	case <-pl.remote.Done():
	default:
		return nil
	}
	res, err := pl.remote.Wait()
	switch {
	case err != nil:
		return fmt.Errorf("the stream of load pod %s/%s (node %s) ended mid-row, %s: %w", pl.ns, pl.name, pl.node, pl.podState(), err)
	case res != nil && res.EndReason != loadgen.EndDuration && !pl.stopping.Load():
		// A whole stream ended early that the row did not stop: the pod got its SIGTERM from
		// someone else (a deletion, an eviction, a node drain) and wrote its end line.
		return fmt.Errorf("load pod %s/%s (node %s) was stopped mid-row by someone else (its attack ended %s after %s), %s",
			pl.ns, pl.name, pl.node, res.EndReason, res.Window.Round(time.Millisecond), pl.podState())
	}
	return nil
}

// podState is what the API server says of the load pod now, in words.
func (pl *podLoad) podState() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := pl.cs.CoreV1().Pods(pl.ns).Get(ctx, pl.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "the pod is gone (deleted or evicted)"
	case err != nil:
		return fmt.Sprintf("the pod's state is unknown (%v)", err)
	case p.DeletionTimestamp != nil:
		return "the pod is being deleted (deleted or evicted)"
	}
	for _, st := range p.Status.ContainerStatuses {
		if t := st.State.Terminated; t != nil {
			return fmt.Sprintf("its container ended (%s, exit code %d)", t.Reason, t.ExitCode)
		}
	}
	return "the pod still runs (its log stream was cut)"
}

// Clocks is the pod's clock against this process's.
func (pl *podLoad) Clocks() []check.LoadClock { return []check.LoadClock{pl.clock} }

// Nodes is the pod's node, as "pod@node".
func (pl *podLoad) Nodes() []string { return []string{pl.name + "@" + pl.node} }

// clockString is "+1.2ms ±0.4ms (5 samples, applied)" or why the clock was not read.
func clockString(c check.LoadClock) string {
	if c.Samples == 0 {
		return "not read: " + c.Error
	}
	how := "shared with this process: recorded, not applied"
	if c.Applied {
		how = "applied to the requests' times"
	}
	return fmt.Sprintf("%+v ±%v (%d samples; %s)", c.Offset.Round(10*time.Microsecond), c.Uncertainty.Round(10*time.Microsecond), c.Samples, how)
}

// startPodLoads starts n load pods, each with its share of cfg.Rate (the first ones one request
// per second more when it does not divide), and returns them as one load: its progress is
// theirs summed, it is done when any stream ended (a pod that stops early is a fault of the
// whole load), and its Result is theirs merged and judged against the whole rate.
func startPodLoads(ctx context.Context, cs kubernetes.Interface, ns, image string, cfg loadgen.Config, n, replicas int, sharedClock bool, place loadPlacement, logf func(string, ...any)) (load, error) {
	if n <= 1 {
		pl, err := startPodLoad(ctx, cs, ns, loadPodName, image, cfg, replicas, sharedClock, place, logf)
		if err != nil {
			return nil, err // not a nil *podLoad in a non-nil load
		}
		return pl, nil
	}
	m := &podLoads{cfg: cfg, done: make(chan struct{})}
	for i := range n {
		share := cfg
		share.Rate = cfg.Rate / n
		if i < cfg.Rate%n {
			share.Rate++
		}
		share.Name = fmt.Sprintf("%s-%d", cfg.Name, i+1)
		pl, err := startPodLoad(ctx, cs, ns, fmt.Sprintf("%s-%d", loadPodName, i+1), image, share, replicas, sharedClock, place, logf)
		if err != nil {
			m.Stop()
			return nil, err
		}
		m.pods = append(m.pods, pl)
	}
	var once sync.Once
	for _, pl := range m.pods {
		go func() {
			<-pl.Done()
			once.Do(func() { close(m.done) })
		}()
	}
	return m, nil
}

// podLoads is several load pods sharing one row's rate.
type podLoads struct {
	cfg  loadgen.Config
	pods []*podLoad
	done chan struct{}
}

func (m *podLoads) Progress() loadgen.Progress {
	var p loadgen.Progress
	for _, pl := range m.pods {
		q := pl.Progress()
		p.Sent, p.OK, p.Failed = p.Sent+q.Sent, p.OK+q.OK, p.Failed+q.Failed
	}
	return p
}

func (m *podLoads) Done() <-chan struct{} { return m.done }

func (m *podLoads) Stop() {
	for _, pl := range m.pods {
		pl.Stop()
	}
}

// Wait waits for every pod's stream and merges them; any pod's error is the load's.
func (m *podLoads) Wait() (*loadgen.Result, error) {
	results := make([]*loadgen.Result, 0, len(m.pods))
	var errs []error
	for _, pl := range m.pods {
		res, err := pl.Wait()
		if err != nil {
			errs = append(errs, fmt.Errorf("load pod %s: %w", pl.name, err))
		}
		if res == nil {
			continue
		}
		results = append(results, res)
	}
	if len(results) < len(m.pods) {
		return nil, errors.Join(errs...)
	}
	res, err := loadgen.Merge(m.cfg, results...)
	if err != nil {
		return nil, err
	}
	return res, errors.Join(errs...)
}

// Lost is the first pod's lost stream (podLoad.Lost), if any.
func (m *podLoads) Lost() error {
	for _, pl := range m.pods {
		if err := pl.Lost(); err != nil {
			return err
		}
	}
	return nil
}

// Nodes are the pods' nodes, as "pod@node".
func (m *podLoads) Nodes() []string {
	var out []string
	for _, pl := range m.pods {
		out = append(out, pl.Nodes()...)
	}
	return out
}

// Clocks are the pods' clocks against this process's, pod by pod.
func (m *podLoads) Clocks() []check.LoadClock {
	var cs []check.LoadClock
	for _, pl := range m.pods {
		cs = append(cs, pl.clock)
	}
	return cs
}

// loadPodRequests is what a load pod asks of its node: enough CPU for a pacer and its
// connections at a few hundred requests a second, the ledger's memory besides.
var loadPodRequests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}

// loadPod is the load pod startPodLoad creates: it meets the restricted Pod Security Standard, so
// that a namespace enforcing it admits it.
func loadPod(ns, name, image string, args []string, grace, deadline int64, place loadPlacement) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: loadPodLabels},
		Spec: corev1.PodSpec{
			// Several load pods go to different nodes where there are several, and away from
			// the app's pods where they can (place.avoid), so that the load crosses nodes.
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname,
				WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: loadPodLabels}}},
			Affinity:                      place.affinity(),
			NodeSelector:                  place.nodeSelector(),
			Tolerations:                   place.tolerations(),
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			ActiveDeadlineSeconds:         &deadline,
			AutomountServiceAccountToken:  ptr.To(false),
			EnableServiceLinks:            ptr.To(false),
			Containers: []corev1.Container{{
				// The image's tag is unique to its build: a node that has it (kind: loaded by the
				// front end) never pulls it.
				Name: "load", Image: image, ImagePullPolicy: corev1.PullIfNotPresent, Args: args,
				Ports: []corev1.ContainerPort{{Name: "clock", ContainerPort: loadClockPort}},
				// A request and no limit: without a request the pod is BestEffort, whose CPU
				// weight is the lowest there is, and on a busy node its pacer and its reads of
				// the answers wait behind every Burstable pod (the app's, the control plane's),
				// which shows as the app's latency. No limit, so it is never throttled.
				Resources: corev1.ResourceRequirements{Requests: loadPodRequests},
				// What the restricted Pod Security Standard asks, and a read-only root.
				SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65534),
					AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
					Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			}},
		},
	}
}
