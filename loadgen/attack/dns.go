package attack

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/rollcheck/rollcheck/loadgen"
)

// dnsWatch asks the server of resolv.conf for name every ResolveEvery until ctx ends, calling
// record with each change. It is bounded by ctx (the attack's end) and stops by itself.
func dnsWatch(ctx context.Context, name string, record func(loadgen.DNSAnswer)) {
	server, search, err := resolvConf("/etc/resolv.conf")
	if err != nil {
		record(loadgen.DNSAnswer{Time: time.Now(), Name: name, Err: err.Error()})
		return
	}
	fqdn := name
	if !strings.Contains(strings.TrimSuffix(name, "."), ".") && len(search) > 0 {
		fqdn = name + "." + search[0]
	}
	if !strings.HasSuffix(fqdn, ".") {
		fqdn += "."
	}
	var last *loadgen.DNSAnswer
	t := time.NewTicker(loadgen.ResolveEvery)
	defer t.Stop()
	for {
		a := queryA(ctx, server, fqdn)
		if last == nil || !slices.Equal(last.Addrs, a.Addrs) || last.Err != a.Err {
			record(a)
			last = &a
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// resolvConf reads the first nameserver and the search domains of a resolv.conf.
func resolvConf(path string) (server string, search []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, fmt.Errorf("resolv.conf: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 {
			continue
		}
		switch fs[0] {
		case "nameserver":
			if server == "" {
				server = fs[1]
			}
		case "search":
			search = fs[1:]
		}
	}
	if server == "" {
		return "", nil, errors.New("resolv.conf: no nameserver")
	}
	return net.JoinHostPort(server, "53"), search, sc.Err()
}

// queryA sends one A query for fqdn to server over UDP (1 s timeout) and reads the answer.
func queryA(ctx context.Context, server, fqdn string) loadgen.DNSAnswer {
	out := loadgen.DNSAnswer{Time: time.Now(), Name: strings.TrimSuffix(fqdn, ".")}
	fail := func(err error) loadgen.DNSAnswer { out.Err = err.Error(); return out }
	n, err := dnsmessage.NewName(fqdn)
	if err != nil {
		return fail(err)
	}
	id := uint16(rand.N(1 << 16))
	q, err := (&dnsmessage.Message{Header: dnsmessage.Header{ID: id, RecursionDesired: true},
		Questions: []dnsmessage.Question{{Name: n, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}}}).Pack()
	if err != nil {
		return fail(err)
	}
	qctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(qctx, "udp", server)
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	if dl, ok := qctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := c.Write(q); err != nil {
		return fail(err)
	}
	buf := make([]byte, 4096)
	for {
		k, err := c.Read(buf)
		if err != nil {
			return fail(err)
		}
		var m dnsmessage.Message
		if err := m.Unpack(buf[:k]); err != nil || m.Header.ID != id {
			continue // not our answer
		}
		if m.Header.RCode != dnsmessage.RCodeSuccess {
			return fail(errors.New(m.Header.RCode.String()))
		}
		for _, rr := range m.Answers {
			if a, ok := rr.Body.(*dnsmessage.AResource); ok {
				out.Addrs = append(out.Addrs, net.IP(a.A[:]).String())
				if out.TTL == 0 || rr.Header.TTL < out.TTL {
					out.TTL = rr.Header.TTL
				}
			}
		}
		slices.Sort(out.Addrs)
		return out
	}
}

// dnsLog keeps an attack's DNS answers.
type dnsLog struct {
	mu      sync.Mutex
	answers []loadgen.DNSAnswer
}

func (l *dnsLog) add(a loadgen.DNSAnswer) {
	l.mu.Lock()
	l.answers = append(l.answers, a)
	l.mu.Unlock()
}

func (l *dnsLog) all() []loadgen.DNSAnswer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.answers)
}
