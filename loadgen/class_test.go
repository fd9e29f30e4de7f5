package loadgen

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
)

func TestHTTP5xxClass(t *testing.T) {
	for code, want := range map[int]Class{500: "http_500", 503: "http_503", 599: "http_599", 499: ClassOther, 600: ClassOther} {
		if got := HTTP5xxClass(code); got != want {
			t.Errorf("HTTP5xxClass(%d) = %q, want %q", code, got, want)
		}
	}
	for code, want := range map[int]Class{200: ClassOK, 204: ClassOK, 302: ClassOK, 399: ClassOK, 400: ClassHTTP4xx,
		404: ClassHTTP4xx, 499: ClassHTTP4xx, 502: "http_502", 101: ClassOther, 0: ClassOther, 700: ClassOther} {
		if got := classifyStatus(code); got != want {
			t.Errorf("classifyStatus(%d) = %q, want %q", code, got, want)
		}
	}
	if ClassOK.IsFailure() || !ClassEOF.IsFailure() {
		t.Error("IsFailure wrong")
	}
}

func TestClassifyChain(t *testing.T) {
	op := func(opName string, err error) error {
		return &url.Error{Op: "Get", URL: "http://127.0.0.1:1/", Err: &net.OpError{Op: opName, Net: "tcp", Err: err}}
	}
	cases := []struct {
		err  error
		want Class
	}{
		{nil, ClassOK},
		{op("dial", os.NewSyscallError("connect", syscall.ECONNREFUSED)), ClassRefused},
		{op("read", os.NewSyscallError("read", syscall.ECONNRESET)), ClassReset},
		{op("write", os.NewSyscallError("write", syscall.EPIPE)), ClassReset},
		{&url.Error{Op: "Post", URL: "u", Err: io.EOF}, ClassEOF},
		{fmt.Errorf("reading body: %w", io.ErrUnexpectedEOF), ClassEOF},
		{&url.Error{Op: "Get", URL: "u", Err: context.DeadlineExceeded}, ClassTimeout},
		{op("read", os.ErrDeadlineExceeded), ClassTimeout},
		{errors.New("http: server closed idle connection"), ClassEOF}, // unexported in net/http: by text
		{errors.New("tls: bad certificate"), ClassOther},
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
		want Class
	}{
		{closedURL, ClassRefused},
		{reset.url, ClassReset},
		{hangUp.url, ClassEOF},
		{hang.url, ClassTimeout},
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
	cases := map[string]Class{
		"": ClassOK,
		`Get "http://127.0.0.1:30080/": dial tcp 127.0.0.1:30080: connect: connection refused`:                                  ClassRefused,
		`Get "http://127.0.0.1:30080/": read tcp 127.0.0.1:40000->127.0.0.1:30080: read: connection reset by peer`:              ClassReset,
		`Post "http://127.0.0.1:30080/": write tcp 127.0.0.1:40000->127.0.0.1:30080: write: broken pipe`:                        ClassReset,
		`Get "http://10.96.150.76:80/": http2: client connection force closed via ClientConn.Close`:                             ClassReset,
		`Get "http://10.96.150.76:80/": http2: client connection lost`:                                                          ClassReset,
		`Post "http://127.0.0.1:30080/": EOF`:                                                                                   ClassEOF,
		`unexpected EOF`:                                                                                                        ClassEOF,
		`Post "http://127.0.0.1:30080/": http: server closed idle connection`:                                                   ClassEOF,
		`Get "http://127.0.0.1:30080/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`:             ClassTimeout,
		`Get "http://127.0.0.1:30080/": net/http: request canceled (Client.Timeout exceeded while awaiting headers)`:            ClassTimeout,
		`context deadline exceeded (Client.Timeout or context cancellation while reading body)`:                                 ClassTimeout,
		`Get "http://127.0.0.1:30080/": dial tcp 127.0.0.1:30080: i/o timeout`:                                                  ClassTimeout,
		`Get "http://127.0.0.1:30080/": net/http: HTTP/1.x transport connection broken: malformed HTTP response "\x00\x00\x00"`: ClassOther,
		`Get "http://nope.invalid/": dial tcp: lookup nope.invalid: no such host`:                                               ClassOther,
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
		want Class
	}{
		{200, "", ClassOK},
		{301, "", ClassOK},
		{503, "503 Service Unavailable", "http_503"},
		{500, "500 Internal Server Error", "http_500"},
		{404, "404 Not Found", ClassHTTP4xx},
		{101, "101 Switching Protocols", ClassOther},
		{0, "dial tcp 127.0.0.1:1: connect: connection refused", ClassRefused},
		{0, "", ClassOther},
		{200, "read: connection reset by peer", ClassReset}, // not produced by vegeta; the text wins
	}
	for _, tc := range cases {
		if got := classifyResult(tc.code, tc.err); got != tc.want {
			t.Errorf("classifyResult(%d, %q) = %q, want %q", tc.code, tc.err, got, tc.want)
		}
	}
}
