package loadgen

// Progress is a live snapshot of a running attack.
type Progress struct {
	// Sent counts requests started, including those still in flight.
	Sent int64 `json:"sent"`
	// OK and Failed count completed requests.
	OK     int64 `json:"ok"`
	Failed int64 `json:"failed"`
}

// InFlight returns the number of requests sent but not yet completed.
func (p Progress) InFlight() int64 { return p.Sent - p.OK - p.Failed }
