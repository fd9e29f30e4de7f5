package observe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/rollcheck/rollcheck/timeline"
)

// The app's lifecycle lines are gone with its pod, so they are streamed while it lives: one
// follow stream of the app container's logs per pod UID and restart, opened once the pod
// status shows the container running.

const (
	// maxAppEvents is how many app lines are recorded per pod; the rest are counted.
	maxAppEvents = 256
	// maxAppLine is the longest line parsed, in bytes; longer ones are skipped.
	maxAppLine = 64 << 10
)

// Option configures an Observer; pass them to Start.
type Option func(*options)

type options struct {
	appContainers []string
	// openLogs opens a follow stream of a container's logs (tests replace it).
	openLogs func(ctx context.Context, pod, container string) (io.ReadCloser, error)
}

// WithAppLogs makes the Observer follow the logs of the named containers of every watched pod
// (those that exist at Start too), one stream per run of the container, and record the app's
// lifecycle lines: each line that is a JSON object with string fields "ts" (RFC 3339) and
// "event", stamped at or after Start, becomes an AppEvent at ts (at most 256 per pod; lines
// over 64 KiB are skipped), and the end of the stream an AppLogEnded, each with its container.
// A native sidecar (an init container with restartPolicy Always) is followed too. Empty names
// are ignored.
func WithAppLogs(containers ...string) Option {
	return func(o *options) {
		for _, c := range containers {
			if c != "" && !slices.Contains(o.appContainers, c) {
				o.appContainers = append(o.appContainers, c)
			}
		}
	}
}

// podLogs opens follow streams with the client's GetLogs.
func podLogs(client kubernetes.Interface, ns string) func(context.Context, string, string) (io.ReadCloser, error) {
	pods := client.CoreV1().Pods(ns)
	return func(ctx context.Context, pod, container string) (io.ReadCloser, error) {
		return pods.GetLogs(pod, &corev1.PodLogOptions{Container: container, Follow: true}).Stream(ctx)
	}
}

// streamKey identifies one run of a followed container: one log stream each.
type streamKey struct {
	uid       types.UID
	container string
	restarts  int32
}

// followAppLogsLocked starts following each followed container of pod that is running and
// whose current run has no stream yet; o.mu must be held and o not stopped.
func (o *Observer) followAppLogsLocked(pod *corev1.Pod) {
	if len(o.apps) == 0 {
		return
	}
	for _, cs := range statuses(pod) {
		if !slices.Contains(o.apps, cs.Name) || cs.State.Running == nil {
			continue
		}
		key := streamKey{uid: pod.UID, container: cs.Name, restarts: cs.RestartCount}
		if o.following[key] {
			continue
		}
		o.following[key] = true
		o.streams.Add(1)
		go o.followAppLog(key, pod.Name)
	}
}

// statuses are the pod's container statuses: its init containers' (where native sidecars
// report), then its containers'.
func statuses(pod *corev1.Pod) []corev1.ContainerStatus {
	return slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses)
}

// appStream is what one stream has seen.
type appStream struct {
	lines            int // app lifecycle lines
	dropped          int // of those, beyond maxAppEvents for the pod
	sigterm, exiting bool
}

// A stream can end while its container still runs: the kubelet that serves it restarted. It is
// reopened then (every reopenEvery, for reopenFor at most), and the lines it already gave are
// skipped; only the end of the process's own stream is recorded.
const (
	reopenEvery = 250 * time.Millisecond
	reopenFor   = time.Minute
	// quickEnd: a reopened stream that ends this soon with no new line is the log of a process
	// that is gone (its status not updated yet), not a cut stream.
	quickEnd = time.Second
)

// followAppLog streams a container's logs of one run of a pod until the process's stream ends
// (recorded as AppLogEnded at its end) or the Observer stops. A stream that cannot be opened is
// forgotten, so that the pod's next update tries again. A stream cut while the container still
// runs (a kubelet restart) is reopened, its lines already recorded skipped.
func (o *Observer) followAppLog(key streamKey, pod string) {
	defer o.streams.Done()
	ctx := o.runCtx
	var st appStream
	var last, endAt, cut time.Time // cut: when the stream was first cut while the container ran
	for attempt := 0; ; attempt++ {
		rc, err := o.openLogs(ctx, pod, key.container)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return
			case attempt == 0:
				o.mu.Lock()
				delete(o.following, key)
				o.mu.Unlock()
				o.logf("observe %s: logs of %s/%s: %v (trying again on its next update)", o.ns, pod, key.container, err)
				return
			case !o.containerRunning(pod, key) || time.Since(cut) > reopenFor:
				o.logf("observe %s: logs of %s/%s: cut at %s and not reopened (%v): the end of its stream is not recorded", o.ns, pod, key.container, clock(cut), err)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(reopenEvery):
			}
			continue
		}
		opened, before := time.Now(), st.lines
		long, err := o.readAppLog(ctx, rc, key, pod, &st, &last)
		now := time.Now()
		if ctx.Err() != nil {
			return // stopped: not an end of the app's stream
		}
		if st.dropped > 0 || long > 0 {
			o.logf("observe %s: logs of %s/%s: %d app events beyond %d per pod not recorded, %d lines longer than %d bytes skipped",
				o.ns, pod, key.container, st.dropped, maxAppEvents, long, maxAppLine)
		}
		if err != nil {
			o.logf("observe %s: logs of %s/%s: %v (no longer followed)", o.ns, pod, key.container, err)
			return
		}
		real := attempt == 0 || st.lines > before || now.Sub(opened) >= quickEnd
		if real {
			endAt = now
		}
		if real && o.containerRunning(pod, key) && (cut.IsZero() || time.Since(cut) <= reopenFor) {
			if cut.IsZero() {
				o.logf("observe %s: logs of %s/%s: the stream ended while the container runs (a kubelet restart?): reopening it", o.ns, pod, key.container)
				cut = now
			}
			continue
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.stopped {
			return
		}
		o.recordLocked(Event{Time: endAt, Kind: AppLogEnded, Pod: pod, Container: key.container,
			Detail: fmt.Sprintf("exiting=%t sigterm=%t lines=%d", st.exiting, st.sigterm, st.lines)})
		return
	}
}

// readAppLog records the lifecycle lines of one stream, skipping those at or before last (a
// reopened stream starts from the beginning), and moves last on.
func (o *Observer) readAppLog(ctx context.Context, rc io.ReadCloser, key streamKey, pod string, st *appStream, last *time.Time) (int, error) {
	stopClose := context.AfterFunc(ctx, func() { rc.Close() }) // ends a blocked read on Stop
	defer func() {
		if stopClose() {
			rc.Close()
		}
	}()
	return eachLine(rc, maxAppLine, func(line []byte) {
		ts, app, detail, ok := parseAppLine(line)
		if !ok || ts.Before(o.since) || !ts.After(*last) {
			return // not a lifecycle line, written before Start (a baseline pod's history), or recorded already
		}
		*last = ts
		st.lines++
		st.sigterm = st.sigterm || app.Is(timeline.LineSIGTERM)
		st.exiting = st.exiting || app.Is(timeline.LineExiting)
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.stopped {
			return
		}
		if o.appEvents[key.uid] >= maxAppEvents {
			st.dropped++
			return
		}
		o.appEvents[key.uid]++
		o.recordLocked(Event{Time: ts, Kind: AppEvent, Pod: pod, Container: key.container, App: &app, Detail: detail})
	})
}

// containerRunning tells whether the pod's status, as last seen, shows this run of the
// container running.
func (o *Observer) containerRunning(pod string, key streamKey) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	ps, ok := o.pods[pod]
	c := ps.containers[key.container]
	return ok && ps.uid == key.uid && c.running && c.restarts == key.restarts
}

func clock(t time.Time) string { return t.UTC().Format("15:04:05.000") }

// eachLine calls f with each line of r, without its newline, until r ends; a line longer than
// limit bytes is skipped and counted in long. err is r's error other than io.EOF.
func eachLine(r io.Reader, limit int, f func([]byte)) (long int, err error) {
	br := bufio.NewReaderSize(r, limit+1) // room for the newline (the size may be larger)
	skipping := false
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			skipping = true
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return long, err
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		switch {
		case skipping || len(line) > limit:
			long++
			skipping = false
		case len(line) > 0 || err == nil:
			f(line)
		}
		if err != nil {
			return long, nil
		}
	}
}

// parseAppLine reads a lifecycle line: a JSON object with string fields "ts" (RFC 3339) and
// "event". app is the event and the other fields (strings as they are, other values as compact
// JSON); detail is the event followed by the other fields as k=v in key order (strings bare
// unless they need quoting, other values as compact JSON). ok is false for any other line.
func parseAppLine(line []byte) (ts time.Time, app AppLine, detail string, ok bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return time.Time{}, AppLine{}, "", false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(line, &fields) != nil {
		return time.Time{}, AppLine{}, "", false
	}
	tsText, okTS := jsonString(fields["ts"])
	event, okEvent := jsonString(fields["event"])
	if !okTS || !okEvent || event == "" {
		return time.Time{}, AppLine{}, "", false
	}
	ts, err := time.Parse(time.RFC3339Nano, tsText)
	if err != nil {
		return time.Time{}, AppLine{}, "", false
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if k != "ts" && k != "event" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	app = AppLine{Event: event}
	var b strings.Builder
	b.WriteString(event)
	for _, k := range keys {
		if app.Fields == nil {
			app.Fields = make(map[string]string, len(keys))
		}
		app.Fields[k] = fieldText(fields[k])
		b.WriteString(" " + k + "=" + fieldValue(fields[k]))
	}
	return ts, app, b.String(), true
}

// jsonString decodes raw if it is a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// fieldValue is a field's value in a Detail: fieldText, a string quoted when it needs to be.
func fieldValue(raw json.RawMessage) string {
	if s, ok := jsonString(raw); ok {
		if s == "" || strings.IndexFunc(s, func(r rune) bool { return r == '=' || r == '"' || !unicode.IsGraphic(r) || unicode.IsSpace(r) }) >= 0 {
			return strconv.Quote(s)
		}
		return s
	}
	return fieldText(raw)
}

// fieldText is a field's value in AppLine.Fields: a string as it is, any other value as
// compact JSON.
func fieldText(raw json.RawMessage) string {
	if s, ok := jsonString(raw); ok {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
