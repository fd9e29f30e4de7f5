package attack

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
)

// runAttack runs cfg to its end and returns the Result, failing the test on
// error. Every attack in these tests is bounded by cfg.Duration and by a
// 30 s context.
func runAttack(t *testing.T, cfg loadgen.Config) *loadgen.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	a, err := Start(ctx, cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	res, err := a.Wait()
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	t.Logf("%s", res)
	return res
}

// rawServer is a TCP server on 127.0.0.1 whose connections are handled by a
// function speaking raw HTTP/1.1, so that tests control exactly when and how
// connections end.
type rawServer struct {
	ln    net.Listener
	url   string
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
	// requests counts requests read by the server, responded to or not.
	requests atomic.Int64
}

func newRawServer(t *testing.T, handle func(s *rawServer, c net.Conn, br *bufio.Reader)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	s := &rawServer{ln: ln, url: "http://" + ln.Addr().String() + "/", conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[c] = struct{}{}
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer func() {
					s.mu.Lock()
					delete(s.conns, c)
					s.mu.Unlock()
					c.Close()
				}()
				handle(s, c, bufio.NewReader(c))
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

// readRequest reads one request and discards its body. It gives up after
// wait without a request.
func (s *rawServer) readRequest(c net.Conn, br *bufio.Reader, wait time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	req, err := http.ReadRequest(br)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, req.Body)
	req.Body.Close()
	_ = c.SetReadDeadline(time.Time{})
	s.requests.Add(1)
	return true
}

const okResponse = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\nX-Pod-Name: raw-0\r\n\r\nok"

// resetConn closes c with SO_LINGER 0, so the peer gets a RST.
func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

// window records when a test server misbehaved.
type window struct {
	mu         sync.Mutex
	start, end time.Time
}

func (w *window) set(start, end time.Time) {
	w.mu.Lock()
	w.start, w.end = start, end
	w.mu.Unlock()
}

func (w *window) get() (time.Time, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.start, w.end
}

// checkWindow asserts that the failures of res fall inside [start, end]
// (widened by margin) and have the class want, that every request well
// inside the window failed with want, and every request well outside it
// succeeded.
func checkWindow(t *testing.T, res *loadgen.Result, start, end time.Time, margin time.Duration, want loadgen.Class) {
	t.Helper()
	if start.IsZero() || end.IsZero() {
		t.Fatalf("misbehaviour window not recorded: %v .. %v", start, end)
	}
	var inside, insideFailed int
	for _, q := range res.Requests {
		ts := q.Timestamp
		switch {
		case ts.After(start.Add(margin)) && ts.Before(end.Add(-margin)):
			inside++
			if q.Class != want {
				t.Errorf("request %d at +%s inside the window: class %q (%s), want %q",
					q.Seq, ts.Sub(res.Started), q.Class, q.Error, want)
			} else {
				insideFailed++
			}
		case ts.Before(start.Add(-margin)) || ts.After(end.Add(margin)):
			if q.Class != loadgen.ClassOK {
				t.Errorf("request %d at +%s outside the window [+%s, +%s]: class %q (%s), want ok",
					q.Seq, ts.Sub(res.Started), start.Sub(res.Started), end.Sub(res.Started), q.Class, q.Error)
			}
		}
	}
	if inside == 0 {
		t.Fatalf("no request inside the window [+%s, +%s]", start.Sub(res.Started), end.Sub(res.Started))
	}
	t.Logf("window [+%s, +%s]: %d/%d requests well inside failed with %q",
		start.Sub(res.Started).Round(time.Millisecond), end.Sub(res.Started).Round(time.Millisecond),
		insideFailed, inside, want)
}

// after sleeps until d after t0, or returns false if ctx ends first.
func after(ctx context.Context, t0 time.Time, d time.Duration) bool {
	timer := time.NewTimer(time.Until(t0.Add(d)))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
