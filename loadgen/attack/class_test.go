package attack

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
)

func TestClassifyStatus(t *testing.T) {
	for code, want := range map[int]loadgen.Class{200: loadgen.ClassOK, 204: loadgen.ClassOK, 302: loadgen.ClassOK, 399: loadgen.ClassOK, 400: loadgen.ClassHTTP4xx,
		404: loadgen.ClassHTTP4xx, 499: loadgen.ClassHTTP4xx, 502: "http_502", 101: loadgen.ClassOther, 0: loadgen.ClassOther, 700: loadgen.ClassOther} {
		if got := classifyStatus(code); got != want {
			t.Errorf("classifyStatus(%d) = %q, want %q", code, got, want)
		}
	}
}

func TestClassifyChain(t *testing.T) {
	op := func(opName string, err error) error {
		return &url.Error{Op: "Get", URL: "http://127.0.0.1:1/", Err: &net.OpError{Op: opName, Net: "tcp", Err: err}}
	}
	cases := []struct {
		err  error
		want loadgen.Class
	}{
		{nil, loadgen.ClassOK},
		{op("dial", os.NewSyscallError("connect", syscall.ECONNREFUSED)), loadgen.ClassRefused},
		{op("read", os.NewSyscallError("read", syscall.ECONNRESET)), loadgen.ClassReset},
		{op("write", os.NewSyscallError("write", syscall.EPIPE)), loadgen.ClassReset},
		{&url.Error{Op: "Post", URL: "u", Err: io.EOF}, loadgen.ClassEOF},
		{fmt.Errorf("reading body: %w", io.ErrUnexpectedEOF), loadgen.ClassEOF},
		{&url.Error{Op: "Get", URL: "u", Err: context.DeadlineExceeded}, loadgen.ClassTimeout},
		{op("read", os.ErrDeadlineExceeded), loadgen.ClassTimeout},
		{errors.New("http: server closed idle connection"), loadgen.ClassEOF}, // unexported in net/http: by text
		{errors.New("tls: bad certificate"), loadgen.ClassOther},
	}
	for _, tc := range cases {
		if got := classify(tc.err); got != tc.want {
			t.Errorf("classify(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestClassifyRealErrors gets real errors from net/http on 127.0.0.1 and
// checks that the error chain and its flattened text (all that vegeta keeps)
// give the same class.
func TestClassifyRealErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + ln.Addr().String() + "/"
	ln.Close()

	reset := newRawServer(t, func(s *rawServer, c net.Conn, br *bufio.Reader) {
		if s.readRequest(c, br, time.Second) {
			resetConn(c)
		}
	})
	hangUp := newRawServer(t, func(s *rawServer, c net.Conn, br *bufio.Reader) {
		s.readRequest(c, br, time.Second) // then close without answering
	})
	hang := newRawServer(t, func(s *rawServer, c net.Conn, br *bufio.Reader) {
		s.readRequest(c, br, time.Second)
		_, _ = br.ReadByte() // until the client gives up and closes
	})

	client := &http.Client{Timeout: 200 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
	for _, tc := range []struct {
		url  string
		want loadgen.Class
	}{
		{closedURL, loadgen.ClassRefused},
		{reset.url, loadgen.ClassReset},
		{hangUp.url, loadgen.ClassEOF},
		{hang.url, loadgen.ClassTimeout},
	} {
		resp, err := client.Get(tc.url)
		if err == nil {
			resp.Body.Close()
			t.Errorf("GET %s: no error, want %s", tc.url, tc.want)
			continue
		}
		if got := classify(err); got != tc.want {
			t.Errorf("classify(%v) = %q, want %q", err, got, tc.want)
		}
		if got := classifyText(err.Error()); got != tc.want {
			t.Errorf("classifyText(%q) = %q, want %q", err, got, tc.want)
		}
	}
}

func TestClassifyText(t *testing.T) {
	cases := map[string]loadgen.Class{
		"": loadgen.ClassOK,
		`Get "http://127.0.0.1:30080/": dial tcp 127.0.0.1:30080: connect: connection refused`:                                  loadgen.ClassRefused,
		`Get "http://127.0.0.1:30080/": read tcp 127.0.0.1:40000->127.0.0.1:30080: read: connection reset by peer`:              loadgen.ClassReset,
		`Post "http://127.0.0.1:30080/": write tcp 127.0.0.1:40000->127.0.0.1:30080: write: broken pipe`:                        loadgen.ClassReset,
		`Get "http://10.96.150.76:80/": http2: client connection force closed via ClientConn.Close`:                             loadgen.ClassReset,
		`Get "http://10.96.150.76:80/": http2: client connection lost`:                                                          loadgen.ClassReset,
		`Post "http://127.0.0.1:30080/": EOF`:                                                                                   loadgen.ClassEOF,
		`unexpected EOF`:                                                                                                        loadgen.ClassEOF,
		`Post "http://127.0.0.1:30080/": http: server closed idle connection`:                                                   loadgen.ClassEOF,
		`Get "http://127.0.0.1:30080/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`:             loadgen.ClassTimeout,
		`Get "http://127.0.0.1:30080/": net/http: request canceled (Client.Timeout exceeded while awaiting headers)`:            loadgen.ClassTimeout,
		`context deadline exceeded (Client.Timeout or context cancellation while reading body)`:                                 loadgen.ClassTimeout,
		`Get "http://127.0.0.1:30080/": dial tcp 127.0.0.1:30080: i/o timeout`:                                                  loadgen.ClassTimeout,
		`Get "http://127.0.0.1:30080/": net/http: HTTP/1.x transport connection broken: malformed HTTP response "\x00\x00\x00"`: loadgen.ClassOther,
		`Get "http://nope.invalid/": dial tcp: lookup nope.invalid: no such host`:                                               loadgen.ClassOther,
	}
	for msg, want := range cases {
		if got := classifyText(msg); got != want {
			t.Errorf("classifyText(%q) = %q, want %q", msg, got, want)
		}
	}
}

func TestClassifyResult(t *testing.T) {
	cases := []struct {
		code uint16
		err  string
		want loadgen.Class
	}{
		{200, "", loadgen.ClassOK},
		{301, "", loadgen.ClassOK},
		{503, "503 Service Unavailable", "http_503"},
		{500, "500 Internal Server Error", "http_500"},
		{404, "404 Not Found", loadgen.ClassHTTP4xx},
		{101, "101 Switching Protocols", loadgen.ClassOther},
		{0, "dial tcp 127.0.0.1:1: connect: connection refused", loadgen.ClassRefused},
		{0, "", loadgen.ClassOther},
		{200, "read: connection reset by peer", loadgen.ClassReset}, // not produced by vegeta; the text wins
	}
	for _, tc := range cases {
		if got := classifyResult(tc.code, tc.err); got != tc.want {
			t.Errorf("classifyResult(%d, %q) = %q, want %q", tc.code, tc.err, got, tc.want)
		}
	}
}
