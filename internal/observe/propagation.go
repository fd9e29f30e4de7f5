package observe

// propagation computes, for each PodDeleting in events (sorted by time), the delays from the
// deletion to the pod's endpoint becoming not ready and to its removal from every slice.
//
// The search covers the events after the PodDeleting up to the pod's next PodCreated (a new
// pod of the same name). When the endpoint was already not ready at the moment the deletion
// was seen, ToUnready is 0; when it had already left every slice, ToRemoved is 0: in both
// cases the Service was not routing new connections to the pod when the deletion began. This
// also covers the slice update being delivered a moment before the pod update it follows from
// (two independent watches). baselines holds the endpoint state at each pod's deletion.
func propagation(events []Event, baselines map[string]deletionBaseline) []Propagation {
	out := []Propagation{}
	for i, d := range events {
		if d.Kind != PodDeleting {
			continue
		}
		p := Propagation{Pod: d.Pod, DeletingAt: d.Time, ToUnready: -1, ToRemoved: -1}
		if b, ok := baselines[d.Pod]; ok {
			if b.present && !b.ready {
				p.ToUnready = 0
			}
			if !b.present && b.everInSlice {
				p.ToRemoved = 0
			}
		}
		for _, e := range events[i+1:] {
			if e.Pod != d.Pod {
				continue
			}
			if e.Kind == PodCreated {
				break
			}
			delay := max(e.Time.Sub(d.Time), 0)
			switch {
			case e.Kind == EndpointUnready && p.ToUnready < 0:
				p.ToUnready = delay
			case e.Kind == EndpointRemoved && p.ToRemoved < 0:
				p.ToRemoved = delay
			}
		}
		out = append(out, p)
	}
	return out
}
