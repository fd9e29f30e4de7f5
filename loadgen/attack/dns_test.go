package attack

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// fakeDNS answers A queries for one name on a loopback UDP port with the addresses addrs()
// gives at the time of the query (none: NXDOMAIN), TTL 30.
func fakeDNS(t *testing.T, name string, addrs func() []string) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var q dnsmessage.Message
			if q.Unpack(buf[:n]) != nil || len(q.Questions) != 1 {
				continue
			}
			r := dnsmessage.Message{Header: dnsmessage.Header{ID: q.Header.ID, Response: true}, Questions: q.Questions}
			as := addrs()
			if q.Questions[0].Name.String() != name || len(as) == 0 {
				r.Header.RCode = dnsmessage.RCodeNameError
			}
			for _, a := range as {
				ip := net.ParseIP(a).To4()
				r.Answers = append(r.Answers, dnsmessage.Resource{Header: dnsmessage.ResourceHeader{Name: q.Questions[0].Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 30},
					Body: &dnsmessage.AResource{A: [4]byte(ip)}})
			}
			b, _ := r.Pack()
			_, _ = pc.WriteTo(b, from)
		}
	}()
	return pc.LocalAddr().String()
}

func TestQueryA(t *testing.T) {
	t0 := time.Now()
	server := fakeDNS(t, "app-headless.ns.svc.cluster.local.", func() []string {
		if time.Since(t0) < 300*time.Millisecond {
			return []string{"10.244.0.6", "10.244.0.5"}
		}
		return []string{"10.244.0.6"}
	})
	a := queryA(t.Context(), server, "app-headless.ns.svc.cluster.local.")
	if a.Err != "" || len(a.Addrs) != 2 || a.Addrs[0] != "10.244.0.5" || a.TTL != 30 || !a.Has("10.244.0.6") {
		t.Fatalf("answer %+v: want both addresses sorted, TTL 30", a)
	}
	if a := queryA(t.Context(), server, "other.ns.svc.cluster.local."); a.Err != "RCodeNameError" {
		t.Fatalf("answer %+v: want NXDOMAIN", a)
	}
}

func TestResolvConf(t *testing.T) {
	p := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(p, []byte("search rc-x.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	server, search, err := resolvConf(p)
	if err != nil || server != "10.96.0.10:53" || len(search) != 3 || search[0] != "rc-x.svc.cluster.local" {
		t.Fatalf("resolvConf: %q %q %v", server, search, err)
	}
}
