package observe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// Observer watches one namespace and records a Timeline. Its methods are safe for concurrent
// use. Create it with Start.
type Observer struct {
	ns     string
	logf   func(string, ...any)
	cancel context.CancelFunc
	runCtx context.Context // ends on Stop
	wg     sync.WaitGroup  // the watch loops

	// The app's log streams (WithAppLogs): app is the container followed ("" for none);
	// lines stamped before since (when Start began) are the history of a baseline pod.
	apps     []string
	since    time.Time
	openLogs func(ctx context.Context, pod, container string) (io.ReadCloser, error)
	streams  sync.WaitGroup

	stopOnce sync.Once

	mu      sync.Mutex
	stopped bool
	started time.Time
	ended   time.Time
	events  []Event
	gaps    []Gap

	// Pods by name, as last seen.
	pods map[string]podState
	// Endpoints: per EndpointSlice name, the pods it holds; and per pod, the union over all
	// slices of the Service, as last reported.
	slices    map[string]map[string]endpointState
	endpoints map[string]endpointState
	// inSlice holds the pods that have been seen in a slice at least once.
	inSlice map[string]bool
	// atDeletion holds a pod's endpoint state at the moment its PodDeleting was recorded.
	atDeletion map[string]deletionBaseline
	// following holds the app container runs whose log stream is open (or being opened);
	// appEvents counts the app lines recorded per pod.
	following map[streamKey]bool
	appEvents map[types.UID]int
}

// Start begins watching, in namespace ns, the Pods matching podSelector (a label selector;
// empty means every pod), the EndpointSlices of Service service (label
// kubernetes.io/service-name=<service>) and the core/v1 Events about Pods (any pod of the
// namespace). It lists each kind and opens its watch before returning: objects that exist
// then are the baseline (their current state is known, but they are not reported as created,
// scheduled or ready), and only changes after that are recorded.
//
// Observation ends on Stop or when ctx is cancelled. A watch that the API server closes is
// re-opened from the last resourceVersion seen, and relisted if that version has expired;
// changes made while it was down are then recorded, late, at the time of the relist.
// logf receives the timeline as it grows and watch errors; it may be nil. Start fails if ctx
// is already done, an argument is invalid, or an initial list or watch fails.
//
// The pod status gives each container's starts (ContainerStarted) and exits
// (ContainerExited, with its exit code). With WithAppLogs, the app container's logs of every
// watched pod are followed while it runs, for the app's own lifecycle lines (AppEvent) and the
// end of its stream (AppLogEnded): the exit evidence when a forced deletion removes the pod
// before its status shows the exit.
func Start(ctx context.Context, client kubernetes.Interface, ns, podSelector, service string, logf func(string, ...any), opts ...Option) (*Observer, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("observe %s: %w", ns, err)
	}
	if client == nil {
		return nil, fmt.Errorf("observe %s: nil client", ns)
	}
	if ns == "" {
		return nil, errors.New("observe: empty namespace")
	}
	if service == "" {
		return nil, fmt.Errorf("observe %s: empty service name", ns)
	}
	podSel, err := labels.Parse(podSelector)
	if err != nil {
		return nil, fmt.Errorf("observe %s: pod selector %q: %w", ns, podSelector, err)
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	since := time.Now()
	opt := options{openLogs: podLogs(client, ns)}
	for _, f := range opts {
		f(&opt)
	}

	runCtx, cancel := context.WithCancel(ctx)
	o := &Observer{
		ns:         ns,
		logf:       logf,
		cancel:     cancel,
		runCtx:     runCtx,
		apps:       opt.appContainers,
		since:      since,
		openLogs:   opt.openLogs,
		following:  map[streamKey]bool{},
		appEvents:  map[types.UID]int{},
		pods:       map[string]podState{},
		slices:     map[string]map[string]endpointState{},
		endpoints:  map[string]endpointState{},
		inSlice:    map[string]bool{},
		atDeletion: map[string]deletionBaseline{},
	}

	sources := []*source{
		o.podSource(client, ns, podSel),
		o.sliceSource(client, ns, service),
		o.eventSource(client, ns),
	}
	var opened []watch.Interface
	fail := func(err error) (*Observer, error) {
		o.mu.Lock()
		o.stopped = true // no new app log streams
		o.mu.Unlock()
		cancel()
		for _, w := range opened {
			w.Stop()
		}
		o.streams.Wait()
		return nil, fmt.Errorf("observe %s: %w", ns, err)
	}
	for _, s := range sources {
		if err := o.relist(runCtx, s, true); err != nil {
			return fail(err)
		}
		w, err := s.watch(runCtx, s.watchOptions())
		if err != nil {
			return fail(fmt.Errorf("watch %s: %w", s.what, err))
		}
		opened = append(opened, w)
	}

	o.mu.Lock()
	o.started = time.Now()
	pods, slices := len(o.pods), len(o.slices)
	o.mu.Unlock()
	for i, s := range sources {
		o.wg.Add(1)
		go o.run(runCtx, s, opened[i])
	}
	logs := ""
	if len(o.apps) > 0 {
		logs = fmt.Sprintf(", logs of containers %q", o.apps)
	}
	logf("observe %s: watching pods (%q), endpointslices of service %q and pod events%s; baseline: %d pods, %d slices",
		ns, podSelector, service, logs, pods, slices)
	return o, nil
}

func (o *Observer) podSource(client kubernetes.Interface, ns string, sel labels.Selector) *source {
	pods := client.CoreV1().Pods(ns)
	return &source{
		what: "pods",
		opts: metav1.ListOptions{LabelSelector: sel.String()},
		list: func(ctx context.Context, opts metav1.ListOptions) ([]runtime.Object, string, error) {
			l, err := pods.List(ctx, opts)
			if err != nil {
				return nil, "", err
			}
			return listItems(l, l.ResourceVersion)
		},
		watch: pods.Watch,
		match: func(obj runtime.Object) bool {
			p, ok := obj.(*corev1.Pod)
			return ok && sel.Matches(labels.Set(p.Labels))
		},
		upsert: func(now time.Time, _, obj runtime.Object, initial bool) { o.onPod(now, obj.(*corev1.Pod), initial) },
		remove: func(now time.Time, obj runtime.Object, missed bool) { o.onPodDelete(now, obj.(*corev1.Pod), missed) },
	}
}

func (o *Observer) sliceSource(client kubernetes.Interface, ns, service string) *source {
	slices := client.DiscoveryV1().EndpointSlices(ns)
	return &source{
		what: "endpointslices",
		opts: metav1.ListOptions{LabelSelector: labels.Set{discoveryv1.LabelServiceName: service}.String()},
		list: func(ctx context.Context, opts metav1.ListOptions) ([]runtime.Object, string, error) {
			l, err := slices.List(ctx, opts)
			if err != nil {
				return nil, "", err
			}
			return listItems(l, l.ResourceVersion)
		},
		watch: slices.Watch,
		match: func(obj runtime.Object) bool {
			s, ok := obj.(*discoveryv1.EndpointSlice)
			return ok && s.Labels[discoveryv1.LabelServiceName] == service
		},
		upsert: func(now time.Time, _, obj runtime.Object, initial bool) {
			o.onSlice(now, obj.(*discoveryv1.EndpointSlice), initial)
		},
		remove: func(now time.Time, obj runtime.Object, _ bool) {
			o.onSliceDelete(now, obj.(*discoveryv1.EndpointSlice))
		},
	}
}

func (o *Observer) eventSource(client kubernetes.Interface, ns string) *source {
	events := client.CoreV1().Events(ns)
	return &source{
		what: "events",
		opts: metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("involvedObject.kind", "Pod").String()},
		list: func(ctx context.Context, opts metav1.ListOptions) ([]runtime.Object, string, error) {
			l, err := events.List(ctx, opts)
			if err != nil {
				return nil, "", err
			}
			return listItems(l, l.ResourceVersion)
		},
		watch: events.Watch,
		match: func(obj runtime.Object) bool {
			e, ok := obj.(*corev1.Event)
			return ok && e.InvolvedObject.Kind == "Pod"
		},
		upsert: func(_ time.Time, old, obj runtime.Object, initial bool) {
			prev, _ := old.(*corev1.Event)
			o.onEvent(prev, obj.(*corev1.Event), initial)
		},
		remove: func(time.Time, runtime.Object, bool) {}, // an Event expiring is not a moment
	}
}

// Mark records a moment of the harness's own, such as Disruption or DisruptionDone, at the
// current time. Marks after Stop are dropped.
func (o *Observer) Mark(kind Kind, detail string) {
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		o.logf("observe %s: mark %s after Stop dropped", o.ns, kind)
		return
	}
	o.recordLocked(Event{Time: now, Kind: kind, Detail: detail})
}

// Stop ends the watches and the app log streams, waits for their goroutines and returns the
// Timeline; app lines received after Stop are dropped. It is idempotent: later calls return
// the same Timeline.
func (o *Observer) Stop() Timeline {
	o.stopOnce.Do(func() {
		o.mu.Lock()
		o.stopped = true
		o.ended = time.Now()
		o.mu.Unlock()
		o.cancel()
		o.wg.Wait()
		o.streams.Wait()
		o.logf("observe %s: stopped", o.ns)
	})
	return o.Snapshot()
}

// Snapshot returns a copy of the Timeline so far, sorted by time, with Propagation computed
// from what has been seen; it does not stop the Observer. Ended is the time of the snapshot,
// or of Stop once stopped.
func (o *Observer) Snapshot() Timeline {
	now := time.Now()
	o.mu.Lock()
	tl := Timeline{
		Namespace: o.ns,
		Started:   o.started,
		Ended:     o.ended,
		Events:    append([]Event(nil), o.events...),
		Gaps:      append([]Gap(nil), o.gaps...),
	}
	baselines := make(map[string]deletionBaseline, len(o.atDeletion))
	for k, v := range o.atDeletion {
		baselines[k] = v
	}
	o.mu.Unlock()
	if tl.Ended.IsZero() {
		tl.Ended = now
	}
	sort.SliceStable(tl.Events, func(i, j int) bool { return tl.Events[i].Time.Before(tl.Events[j].Time) })
	tl.Propagation = propagation(tl.Events, baselines)
	return tl
}

// gap records that s could not be watched from from until now, after err.
func (o *Observer) gap(what string, from time.Time, err error) {
	g := Gap{What: what, From: from, To: time.Now()}
	if err != nil {
		g.Error = err.Error()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		return
	}
	o.gaps = append(o.gaps, g)
	o.logf("observe %s: %s", o.ns, g)
}

// recordLocked appends e to the timeline; o.mu must be held.
func (o *Observer) recordLocked(e Event) {
	o.events = append(o.events, e)
	if e.Pod != "" {
		o.logf("observe %s: %s %s %s", o.ns, e.Kind, e.Pod, e.Detail)
	} else {
		o.logf("observe %s: %s %s", o.ns, e.Kind, e.Detail)
	}
}

// listItems returns the items of a typed list as objects, with the list's resourceVersion.
func listItems(l runtime.Object, rv string) ([]runtime.Object, string, error) {
	items, err := meta.ExtractList(l)
	if err != nil {
		return nil, "", err
	}
	return items, rv, nil
}
