package observe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/rollcheck/rollcheck/timeline"
)

// withLogOpener replaces the GetLogs streams.
func withLogOpener(open func(ctx context.Context, pod, container string) (io.ReadCloser, error)) Option {
	return func(o *options) { o.openLogs = open }
}

// fakeLogs hands out an io.Pipe per stream opened; the test writes the app's lines into it.
type fakeLogs struct {
	mu     sync.Mutex
	fail   int // opens that fail first
	opened chan logStream
	// gone counts, per pod/container, the streams ended by end: the next open of each gives
	// the whole log of a process that is gone (an empty stream that ends at once), as the
	// kubelet does while the status still says running. Any other open is a new pipe (a
	// kubelet that restarted while the container runs, or the container's next run).
	gone map[string]int
}

// end closes s as the end of its process.
func (f *fakeLogs) end(s logStream) {
	f.mu.Lock()
	if f.gone == nil {
		f.gone = map[string]int{}
	}
	f.gone[s.pod+"/"+s.container]++
	f.mu.Unlock()
	s.w.Close()
}

type logStream struct {
	pod, container string
	w              *io.PipeWriter
}

func newFakeLogs(fail int) *fakeLogs {
	return &fakeLogs{fail: fail, opened: make(chan logStream, 16)}
}

func (f *fakeLogs) open(_ context.Context, pod, container string) (io.ReadCloser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail > 0 {
		f.fail--
		return nil, errors.New("container is waiting to start")
	}
	if k := pod + "/" + container; f.gone[k] > 0 {
		f.gone[k]--
		return io.NopCloser(strings.NewReader("")), nil
	}
	r, w := io.Pipe()
	f.opened <- logStream{pod: pod, container: container, w: w}
	return r, nil
}

// next returns the next stream opened.
func (f *fakeLogs) next(t *testing.T) logStream {
	t.Helper()
	select {
	case s := <-f.opened:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("no log stream opened")
		return logStream{}
	}
}

// none checks that no further stream is opened.
func (f *fakeLogs) none(t *testing.T) {
	t.Helper()
	select {
	case s := <-f.opened:
		t.Fatalf("unexpected log stream for %s/%s", s.pod, s.container)
	case <-time.After(50 * time.Millisecond):
	}
}

// logRecorder keeps the Observer's log lines.
type logRecorder struct {
	t     *testing.T
	mu    sync.Mutex
	lines []string
}

func (l *logRecorder) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.t.Logf(format, args...)
}

func (l *logRecorder) has(sub string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func (w *world) startLogs(logs *fakeLogs) (*Observer, *logRecorder) {
	w.t.Helper()
	rec := &logRecorder{t: w.t}
	o, err := Start(w.ctx, w.client, testNS, testSel, testSvc, rec.logf, WithAppLogs("app"), withLogOpener(logs.open))
	if err != nil {
		w.t.Fatalf("Start: %v", err)
	}
	w.t.Cleanup(func() { o.Stop() })
	return o, rec
}

func write(t *testing.T, s logStream, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(s.w, l+"\n"); err != nil {
			t.Fatalf("write to %s: %v", s.pod, err)
		}
	}
}

func appLine(ts time.Time, event, rest string) string {
	return fmt.Sprintf(`{"ts":%q,"event":%q%s}`, ts.UTC().Format(time.RFC3339Nano), event, rest)
}

func runningPod(name string, restarts int32) *corev1.Pod {
	p := pod(name)
	setContainers(p, running("app", restarts, at(int(restarts))), running("sidecar", 0, at(0)))
	return p
}

// followOne starts an Observer with app logs, creates pod app-1 with its app container
// running, and returns the stream opened for it.
func followOne(t *testing.T) (*Observer, *logRecorder, *fakeLogs, logStream) {
	t.Helper()
	logs := newFakeLogs(0)
	w := newWorld(t)
	o, rec := w.startLogs(logs)
	w.createPod(runningPod("app-1", 0))
	s := logs.next(t)
	if s.pod != "app-1" || s.container != "app" {
		t.Fatalf("stream opened for %s/%s", s.pod, s.container)
	}
	return o, rec, logs, s
}

// TestAppLogLines: lifecycle lines become AppEvents at their own time, everything else is
// ignored, and the end of the stream is recorded.
func TestAppLogLines(t *testing.T) {
	o, _, logs, s := followOne(t)
	created, _ := find(waitFor(t, o, PodCreated, "app-1", 1), PodCreated, "app-1")

	// Stamped before the pod moments already recorded: sorted into place.
	tStarted := o.since.Add(time.Microsecond)
	tSigterm := created.Time.Add(time.Microsecond)
	tExiting := tSigterm.Add(1500 * time.Nanosecond)
	write(t, s,
		appLine(tStarted, "started", `,"addr":":8080","pid":7,"unready_on_sigterm":true`),
		"app: plain text",
		"",
		`{"event":"ready"}`,
		`{"ts":12,"event":"ready"}`,
		`{"ts":"yesterday","event":"ready"}`,
		`{"ts":"2025-01-01T00:00:00Z","event":7}`,
		appLine(o.since.Add(-time.Second), "ready", ""), // history of a baseline pod
		`["ts","event"]`,
		`{"ts":"2025-01-01T00:00:00Z","event":"ready"`,
		appLine(tSigterm, "sigterm", `,"signal":"terminated","mode":"drain","ready":false,"inflight":3,"extra":{"a": [1, 2]},"why":"second signal","empty":"","n":null`),
		appLine(tSigterm, "huge", `,"pad":"`+strings.Repeat("x", maxAppLine)+`"`),
		appLine(tExiting, "exiting", `,"code":0,"reason":"drained"`),
	)
	logs.end(s)
	tl := waitFor(t, o, AppLogEnded, "app-1", 1)

	apps := events(tl, AppEvent, "app-1")
	want := []struct {
		at     time.Time
		detail string
	}{
		{tStarted, "started addr=:8080 pid=7 unready_on_sigterm=true"},
		{tSigterm, `sigterm empty="" extra={"a":[1,2]} inflight=3 mode=drain n=null ready=false signal=terminated why="second signal"`},
		{tExiting, "exiting code=0 reason=drained"},
	}
	if len(apps) != len(want) {
		t.Fatalf("%d app events, want %d:\n%s", len(apps), len(want), dump(tl))
	}
	for i, e := range apps {
		if !e.Time.Equal(want[i].at) || e.Detail != want[i].detail || e.Container != "app" || e.ExitCode != nil || !e.Reported.IsZero() {
			t.Errorf("app event %d: got %v %q (container %q), want %v %q", i, e.Time, e.Detail, e.Container, want[i].at, want[i].detail)
		}
	}
	if a := apps[1].App; !a.Is(timeline.LineSIGTERM) || a.Fields["why"] != "second signal" || a.Fields["extra"] != `{"a":[1,2]}` || a.Fields["empty"] != "" {
		t.Errorf("sigterm line: %+v", a)
	}
	typedAsDetail(t, tl)
	if got := kindsOf(tl, "app-1"); !equalKinds(got, []Kind{AppEvent, PodCreated, ContainerStarted, ContainerStarted, AppEvent, AppEvent, AppLogEnded}) {
		t.Errorf("kinds in time order: %v\n%s", got, dump(tl))
	}
	for i := 1; i < len(tl.Events); i++ {
		if tl.Events[i].Time.Before(tl.Events[i-1].Time) {
			t.Fatalf("timeline not sorted at %d:\n%s", i, dump(tl))
		}
	}
	if e := events(tl, AppLogEnded, "app-1")[0]; e.Detail != "exiting=true sigterm=true lines=3" || e.Container != "app" ||
		e.Time.Before(apps[1].Time) {
		t.Errorf("log end: %+v", e)
	}
	logs.none(t) // the sidecar is not followed
}

// TestAppLogStreams: baseline pods are followed too, one stream per pod and run of the
// container; a stream that cannot be opened is tried again on the pod's next update; a stream
// that ends without an "exiting" line says so.
func TestAppLogStreams(t *testing.T) {
	logs := newFakeLogs(0)
	base := runningPod("app-0", 0)
	w := newWorld(t, base)
	o, rec := w.startLogs(logs)
	s0 := logs.next(t)
	if s0.pod != "app-0" {
		t.Fatalf("stream for %s", s0.pod)
	}

	// Updates of the same run open nothing; a restart opens the new run's stream.
	base.Spec.NodeName = "kind-worker"
	w.updatePod(base)
	waitFor(t, o, PodScheduled, "app-0", 1)
	logs.none(t)
	write(t, s0, appLine(time.Now(), "sigterm", `,"mode":"ignore"`))
	logs.end(s0)
	tl := waitFor(t, o, AppLogEnded, "app-0", 1)
	if e := events(tl, AppLogEnded, "app-0")[0]; e.Detail != "exiting=false sigterm=true lines=1" {
		t.Errorf("end without exiting: %q", e.Detail)
	}
	restarted := runningPod("app-0", 1)
	restarted.Spec.NodeName = "kind-worker"
	w.updatePod(restarted)
	if s := logs.next(t); s.pod != "app-0" {
		t.Fatalf("restart stream for %s", s.pod)
	}

	// Not running yet: no stream. The first open fails, the next update tries again.
	logs.mu.Lock()
	logs.fail = 1
	logs.mu.Unlock()
	p := pod("app-1")
	setContainers(p, corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{
		Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}})
	w.createPod(p)
	waitFor(t, o, PodCreated, "app-1", 1)
	logs.none(t)
	setContainers(p, running("app", 0, at(0)))
	w.updatePod(p)
	deadline := time.Now().Add(5 * time.Second)
	for !rec.has("logs of app-1/app: container is waiting to start (trying again on its next update)") {
		if time.Now().After(deadline) {
			t.Fatal("failed open not logged")
		}
		time.Sleep(2 * time.Millisecond)
	}
	setReady(p, true)
	w.updatePod(p)
	if s := logs.next(t); s.pod != "app-1" {
		t.Fatalf("retried stream for %s", s.pod)
	}
}

// TestAppLogCap: at most maxAppEvents app lines per pod are recorded, and the rest counted in
// one log line.
func TestAppLogCap(t *testing.T) {
	o, rec, logs, s := followOne(t)
	t0 := time.Now()
	for i := range maxAppEvents + 44 {
		write(t, s, appLine(t0.Add(time.Duration(i)*time.Microsecond), "tick", fmt.Sprintf(`,"i":%d`, i)))
	}
	write(t, s, appLine(time.Now(), "exiting", ""))
	logs.end(s)
	tl := waitFor(t, o, AppLogEnded, "app-1", 1)
	if n := len(events(tl, AppEvent, "app-1")); n != maxAppEvents {
		t.Errorf("%d app events recorded, want %d", n, maxAppEvents)
	}
	if e := events(tl, AppLogEnded, "app-1")[0]; e.Detail != fmt.Sprintf("exiting=true sigterm=false lines=%d", maxAppEvents+45) {
		t.Errorf("log end: %q", e.Detail)
	}
	if !rec.has("logs of app-1/app: 45 app events beyond 256 per pod not recorded, 0 lines longer than 65536 bytes skipped") {
		t.Errorf("cap not logged")
	}
}

// TestAppLogsStop: Stop ends the streams while they wait for lines, waits for their
// goroutines, and records nothing of them afterwards.
func TestAppLogsStop(t *testing.T) {
	before := runtime.NumGoroutine()
	o, _, _, s := followOne(t)
	write(t, s, appLine(time.Now(), "ready", ""))
	waitFor(t, o, AppEvent, "app-1", 1)

	done := make(chan Timeline)
	go func() { done <- o.Stop() }()
	var tl Timeline
	select {
	case tl = <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Stop blocked on an open log stream")
	}
	if _, err := io.WriteString(s.w, appLine(time.Now(), "sigterm", "")+"\n"); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("write after Stop: %v, want the stream closed", err)
	}
	if got := kindsOf(o.Snapshot(), "app-1"); !equalKinds(got, kindsOf(tl, "app-1")) || len(events(tl, AppLogEnded, "app-1")) != 0 {
		t.Errorf("recorded after Stop: %v", got)
	}
	waitGoroutines(t, before+2)
}

// TestAppLogsStartFails: a Start that fails after a baseline pod's stream opened ends it.
func TestAppLogsStartFails(t *testing.T) {
	before := runtime.NumGoroutine()
	logs := newFakeLogs(0)
	w := newWorld(t, runningPod("app-0", 0))
	w.client.(*fake.Clientset).PrependReactor("list", "endpointslices", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		s := logs.next(t) // the pods were listed first
		write(t, s, appLine(time.Now(), "ready", ""))
		return true, nil, errors.New("forbidden")
	})
	if _, err := Start(w.ctx, w.client, testNS, testSel, testSvc, t.Logf, WithAppLogs("app"), withLogOpener(logs.open)); err == nil {
		t.Fatal("Start did not fail")
	}
	waitGoroutines(t, before+2)
}

// TestAppLogsGetLogs: the production path asks GetLogs for a follow stream of the container.
// The fake clientset's body ("fake logs") holds no lifecycle line.
func TestAppLogsGetLogs(t *testing.T) {
	w := newWorld(t, runningPod("app-0", 0))
	o, err := Start(w.ctx, w.client, testNS, testSel, testSvc, t.Logf, WithAppLogs("app"))
	if err != nil {
		t.Fatal(err)
	}
	tl := waitFor(t, o, AppLogEnded, "app-0", 1)
	o.Stop()
	if e := events(tl, AppLogEnded, "app-0")[0]; e.Detail != "exiting=false sigterm=false lines=0" {
		t.Errorf("log end: %q", e.Detail)
	}
	var got []*corev1.PodLogOptions
	for _, a := range w.client.(*fake.Clientset).Actions() {
		if a.GetSubresource() == "log" {
			got = append(got, a.(k8stesting.GenericAction).GetValue().(*corev1.PodLogOptions))
		}
	}
	// The stream ended while the status says running: it is opened once more, and that one,
	// ending at once with nothing new, is the process's end.
	if len(got) != 2 || got[0].Container != "app" || !got[0].Follow || *got[1] != *got[0] {
		t.Errorf("log requests: %+v", got)
	}
}

// TestAppLogsReopen: a stream cut while the container runs (a kubelet restart) is reopened; the
// lines the new stream repeats are skipped, the new ones recorded, and the end recorded is the
// process's, not the cut.
func TestAppLogsReopen(t *testing.T) {
	o, rec, logs, s := followOne(t)
	t1 := time.Now()
	write(t, s, appLine(t1, "sigterm", `,"mode":"ignore"`))
	s.w.Close() // the kubelet restarts: the container runs on
	s2 := logs.next(t)
	if s2.pod != "app-1" || s2.container != "app" {
		t.Fatalf("reopened %s/%s", s2.pod, s2.container)
	}
	t2 := t1.Add(3 * time.Second)
	write(t, s2, appLine(t1, "sigterm", `,"mode":"ignore"`), appLine(t2, "sigterm", `,"mode":"ignore"`))
	time.Sleep(quickEnd) // a stream that lived: its end is the process's
	logs.end(s2)
	tl := waitFor(t, o, AppLogEnded, "app-1", 1)
	sig := events(tl, AppEvent, "app-1")
	if len(sig) != 2 || !sig[0].Time.Equal(t1) || !sig[1].Time.Equal(t2) {
		t.Errorf("app events %v, want the two sigterm lines once each", sig)
	}
	end := events(tl, AppLogEnded, "app-1")
	if len(end) != 1 || end[0].Time.Before(t1.Add(quickEnd)) || end[0].Detail != "exiting=false sigterm=true lines=2" {
		t.Errorf("log end %+v, want one, at the second stream's end", end)
	}
	if !rec.has("the stream ended while the container runs") {
		t.Error("the reopening is not logged")
	}
}

func TestParseAppLine(t *testing.T) {
	ts := time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC)
	for _, c := range []struct {
		line, detail string
	}{
		{`{"ts":"2025-01-02T03:04:05.123456789Z","event":"ready"}`, "ready"},
		{` {"event":"drained","ts":"2025-01-02T04:04:05.123456789+01:00","took":"1.5s","completed":2}` + "\r", "drained completed=2 took=1.5s"},
		{`{"ts":"2025-01-02T03:04:05.123456789Z","event":"x","a":"tab\there","b":"k=v","c":"q\"","d":[ 1 ,true ]}`, `x a="tab\there" b="k=v" c="q\"" d=[1,true]`},
		{`{"ts":"2025-01-02T03:04:05.123456789Z"}`, ""},
		{`{"ts":"2025-01-02T03:04:05.123456789Z","event":""}`, ""},
		{`{"ts":null,"event":"ready"}`, ""},
		{`{"ts":"2025-01-02","event":"ready"}`, ""},
		{`"{}"`, ""},
		{`{"ts":"2025-01-02T03:04:05.123456789Z","event":"ready"} trailing`, ""},
	} {
		got, app, detail, ok := parseAppLine([]byte(c.line))
		if ok != (c.detail != "") || detail != c.detail || ok && (!got.Equal(ts) || !strings.HasPrefix(detail, app.Event)) {
			t.Errorf("%s: got %v %+v %q %t, want %q", c.line, got, app, detail, ok, c.detail)
		}
		if !ok {
			continue
		}
		// A row recorded before the typed fields has only the Detail: upgraded, it reads as the
		// line itself.
		old := Event{Kind: AppEvent, Detail: detail}.Upgraded()
		if !reflect.DeepEqual(*old.App, app) {
			t.Errorf("%s: upgraded from %q: %+v, want %+v", c.line, detail, *old.App, app)
		}
	}
}

func TestEachLine(t *testing.T) {
	var got []string
	long, err := eachLine(strings.NewReader("12345678\n123456789\nab\n\n"+strings.Repeat("x", 30)+"\nlast"), 8,
		func(b []byte) { got = append(got, string(b)) })
	if err != nil || long != 2 || strings.Join(got, "|") != "12345678|ab||last" {
		t.Errorf("got %q, %d long, %v", got, long, err)
	}
	_, err = eachLine(io.MultiReader(strings.NewReader("a\n"), errReader{}), 8, func([]byte) {})
	if err == nil || err.Error() != "broken" {
		t.Errorf("reader error: %v", err)
	}
	long, _ = eachLine(strings.NewReader(strings.Repeat("x", 20)), 8, func(b []byte) { t.Errorf("long tail passed: %q", b) })
	if long != 1 {
		t.Errorf("long tail counted %d", long)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("broken") }

// TestAppLogsSidecar: with two containers named, both are followed, a native sidecar (which
// reports among the init containers) too, and each line and log end carries its container; the
// sidecar's exit is recorded from its init container status.
func TestAppLogsSidecar(t *testing.T) {
	logs := newFakeLogs(0)
	w := newWorld(t)
	rec := &logRecorder{t: t}
	o, err := Start(w.ctx, w.client, testNS, testSel, testSvc, rec.logf, WithAppLogs("app", "proxy", ""), withLogOpener(logs.open))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Stop() })
	p := pod("app-1")
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{running("proxy", 0, at(0))}
	setContainers(p, running("app", 0, at(0)))
	w.createPod(p)
	streams := map[string]logStream{}
	for range 2 {
		s := logs.next(t)
		streams[s.container] = s
	}
	if streams["app"].pod != "app-1" || streams["proxy"].pod != "app-1" {
		t.Fatalf("streams opened: %v", streams)
	}
	ts := o.since.Add(time.Millisecond)
	write(t, streams["proxy"], appLine(ts, "sigterm", `,"mode":"exit"`))
	logs.end(streams["proxy"])
	tl := waitFor(t, o, AppLogEnded, "app-1", 1)
	var got []string
	for _, e := range tl.Events {
		if e.Kind == AppEvent || e.Kind == AppLogEnded {
			got = append(got, string(e.Kind)+"/"+e.Container)
		}
	}
	if strings.Join(got, " ") != "app/proxy app-log-ended/proxy" {
		t.Errorf("app events: %v\n%s", got, dump(tl))
	}

	p = p.DeepCopy()
	p.Status.InitContainerStatuses[0].State = corev1.ContainerState{Terminated: terminated(0, 0, "Completed", at(3))}
	w.updatePod(p)
	exits := events(waitFor(t, o, ContainerExited, "app-1", 1), ContainerExited, "app-1")
	checkExit(t, exits[0], "proxy", 0, at(3), "exitCode=0 reason=Completed")
	if !rec.has(`logs of containers ["app" "proxy"]`) {
		t.Error("the start line does not name both containers")
	}
}
