package timeline

import (
	"strconv"
	"strings"
	"time"
)

// Upgraded returns t with the typed fields of its events (GraceSeconds, Node, Address,
// PodPhase, Endpoint, App) filled from their Detail where a row recorded before those fields
// existed has only the text; an event that has its typed field already is left as it is. The
// events are copied: t's are not changed.
func (t Timeline) Upgraded() Timeline {
	events := make([]Event, len(t.Events))
	for i, e := range t.Events {
		events[i] = e.Upgraded()
	}
	t.Events = events
	return t
}

// Upgraded is e with its typed field read from Detail where it is not set, as the observer
// wrote the text before the typed fields: "grace=30s", a node name, an address, "phase=Succeeded",
// "serving=true terminating=false", "sigterm mode=drain ready=false".
func (e Event) Upgraded() Event {
	d := e.Detail
	switch e.Kind {
	case PodDeleting:
		if e.GraceSeconds == nil {
			if v, ok := strings.CutPrefix(d, "grace="); ok {
				if g, err := time.ParseDuration(v); err == nil {
					s := int64(g / time.Second)
					e.GraceSeconds = &s
				}
			}
		}
	case PodScheduled:
		if e.Node == "" {
			e.Node = d
		}
	case PodAddress:
		if e.Address == "" {
			e.Address = d
		}
	case PodGone:
		if e.PodPhase == "" {
			e.PodPhase = detailFields(d)["phase"]
		}
	case EndpointReady, EndpointUnready:
		if e.Endpoint == nil && d != "" {
			f := detailFields(d)
			e.Endpoint = &EndpointConditions{Ready: e.Kind == EndpointReady, Serving: f["serving"] == "true", Terminating: f["terminating"] == "true"}
		}
	case AppEvent:
		if e.App == nil && d != "" {
			name, rest, _ := strings.Cut(d, " ")
			e.App = &AppLine{Event: name}
			if f := detailFields(rest); len(f) > 0 {
				e.App.Fields = f
			}
		}
	}
	return e
}

// detailFields reads the key=value fields of a Detail, separated by spaces, a value quoted
// (Go syntax) when it holds a space, '=' or '"'. Words that are not key=value are skipped. An
// app line's value that was a JSON object or list with a space inside one of its strings is cut
// at that space: the observer wrote such values unquoted. The rules read only the line's event
// and the prestop line's phase.
func detailFields(d string) map[string]string {
	out := map[string]string{}
	for d = strings.TrimSpace(d); d != ""; d = strings.TrimSpace(d) {
		key, rest, ok := strings.Cut(d, "=")
		if !ok || strings.Contains(key, " ") {
			_, d, _ = strings.Cut(d, " ")
			continue
		}
		if strings.HasPrefix(rest, `"`) {
			if q, err := strconv.QuotedPrefix(rest); err == nil {
				v, _ := strconv.Unquote(q)
				out[key], d = v, rest[len(q):]
				continue
			}
		}
		v, after, _ := strings.Cut(rest, " ")
		out[key], d = v, after
	}
	return out
}
