package loadgen

import (
	"slices"
	"time"
)

// ResolveEvery is how often an attack with Config.Resolve asks the DNS server for the name.
const ResolveEvery = 250 * time.Millisecond

// DNSAnswer is one change of what the DNS server answered for Config.Resolve: the first answer,
// then each answer whose addresses (or error) differ from the one before.
type DNSAnswer struct {
	// Time is when the query that got this answer was sent.
	Time time.Time `json:"time"`
	// Name is the name asked (Config.Resolve with the first search domain of resolv.conf when it
	// has no dot).
	Name string `json:"name"`
	// Addrs are the A records answered, sorted.
	Addrs []string `json:"addrs,omitempty"`
	// TTL is the smallest TTL of the answer's records, in seconds: how long a client that
	// honours it may keep using this answer.
	TTL uint32 `json:"ttl,omitempty"`
	// Err is why there was no answer: an RCode such as "RCodeNameError", or a transport error.
	Err string `json:"err,omitempty"`
}

// Has reports whether the answer lists addr.
func (a DNSAnswer) Has(addr string) bool { return slices.Contains(a.Addrs, addr) }
