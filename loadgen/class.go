package loadgen

import (
	"strconv"
	"strings"
)

// Class names the kind of outcome of one request: ClassOK or a failure class.
type Class string

// Failure classes. 5xx answers get one class per status code, see
// HTTP5xxClass.
const (
	// ClassOK is a request answered with a status in 200-399.
	ClassOK Class = "ok"
	// ClassRefused is a connection refused (ECONNREFUSED): nothing listened.
	ClassRefused Class = "refused"
	// ClassReset is a connection reset by the peer (ECONNRESET), a broken
	// pipe (EPIPE) or an aborted connection (over HTTP/2: the client's connection
	// closed or lost under the stream).
	ClassReset Class = "reset"
	// ClassEOF is a connection closed by the server before a complete
	// answer: EOF, unexpected EOF, or a reused keep-alive connection that the
	// server had closed.
	ClassEOF Class = "eof"
	// ClassTimeout is a request that hit the client timeout, a deadline, or
	// an i/o timeout.
	ClassTimeout Class = "timeout"
	// ClassGoAway is an HTTP/2 request that ended because the server sent GOAWAY: the server
	// closed the connection after its GOAWAY with the stream unfinished ("http2: server sent
	// GOAWAY and closed the connection; LastStreamID=…"), or refused the stream with GOAWAY and
	// the client could not send it again ("http2: Transport received Server's graceful shutdown
	// GOAWAY"; Go's transport retries such a stream itself when it can, see TransparentRetry).
	ClassGoAway Class = "goaway"
	// ClassStreamReset is an HTTP/2 stream ended by RST_STREAM, mostly the server's: "stream
	// error: stream ID 3; INTERNAL_ERROR; received from peer" (a handler that panicked or
	// aborted, a proxy that gave up on the stream). A stream error the client found itself (a
	// protocol error in what the server sent, answered by the client's own RST_STREAM) has the
	// same text without "received from peer", and the same class.
	ClassStreamReset Class = "rst_stream"
	// ClassHTTP4xx is an answer with a 4xx status.
	ClassHTTP4xx Class = "http_4xx"
	// ClassOther is any other failure: DNS, TLS, 1xx or unknown status,
	// cancellation, an unrecognised error text.
	ClassOther Class = "other"
)

// classes5xx are the classes of the 500-599 codes under one prefix ("http_", "proxy_"),
// built once so that classifying allocates nothing.
func classes5xx(prefix string) (cs [100]Class) {
	for i := range cs {
		cs[i] = Class(prefix + strconv.Itoa(500+i))
	}
	return cs
}

var http5xxClasses, proxyClasses = classes5xx("http_"), classes5xx("proxy_")

// HTTP5xxClass returns the class of an answer with the given 5xx status code,
// e.g. "http_503". For a code outside 500-599 it returns ClassOther.
func HTTP5xxClass(code int) Class {
	if code < 500 || code > 599 {
		return ClassOther
	}
	return http5xxClasses[code-500]
}

// ProxyClass returns the class of a 5xx answer that the proxy in front of the app gave itself,
// e.g. "proxy_502": through a proxy (Config.Proxy), an answer without the app's pod header when
// the app's own answers carry it. For a code outside 500-599 it returns ClassOther.
func ProxyClass(code int) Class {
	if code < 500 || code > 599 {
		return ClassOther
	}
	return proxyClasses[code-500]
}

// IsProxy reports whether c is a ProxyClass: the proxy in front answered, not the app.
func (c Class) IsProxy() bool { return strings.HasPrefix(string(c), "proxy_5") }

// IsFailure reports whether c is a failure class, i.e. not ClassOK.
func (c Class) IsFailure() bool { return c != ClassOK }
