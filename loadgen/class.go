package loadgen

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/net/http2"
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

// classifyStatus returns the class of an answer with the given HTTP status
// code: ClassOK for 200-399, ClassHTTP4xx, an HTTP5xxClass, or ClassOther.
func classifyStatus(code int) Class {
	switch {
	case code >= 200 && code < 400:
		return ClassOK
	case code >= 400 && code < 500:
		return ClassHTTP4xx
	case code >= 500 && code < 600:
		return HTTP5xxClass(code)
	default:
		return ClassOther
	}
}

// classify returns the failure class of a transport error. It walks the
// error chain with errors.Is and errors.As (syscall errnos, io.EOF,
// deadlines, net.Error timeouts) and falls back to classifyText on the error
// message. A nil error is ClassOK.
func classify(err error) Class {
	if err == nil {
		return ClassOK
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return ClassTimeout
	case errors.As(err, new(http2.GoAwayError)):
		return ClassGoAway
	case errors.As(err, new(http2.StreamError)):
		return ClassStreamReset
	case errors.Is(err, syscall.ECONNREFUSED):
		return ClassRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return ClassReset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ClassEOF
	}
	return classifyText(err.Error())
}

// classifyText returns the failure class of a flattened transport error
// message, as vegeta stores it in Result.Error. An empty message is ClassOK.
// Timeouts are checked first, since a timed-out request's message may also
// mention the operation that was cut short; then HTTP/2's GOAWAY and RST_STREAM,
// whose texts may quote the error that came with them.
func classifyText(msg string) Class {
	switch {
	case msg == "":
		return ClassOK
	case strings.Contains(msg, "Client.Timeout"),
		strings.Contains(msg, "deadline exceeded"),
		strings.Contains(msg, "i/o timeout"),
		strings.Contains(msg, "timeout awaiting response headers"),
		strings.Contains(msg, "TLS handshake timeout"):
		return ClassTimeout
	case strings.Contains(msg, "server sent GOAWAY"),
		strings.Contains(msg, "graceful shutdown GOAWAY"):
		return ClassGoAway
	case strings.Contains(msg, "stream error: stream ID"):
		return ClassStreamReset
	case strings.Contains(msg, "connection refused"):
		return ClassRefused
	case strings.Contains(msg, "connection reset"),
		strings.Contains(msg, "broken pipe"),
		strings.Contains(msg, "connection aborted"),
		// HTTP/2: Go's transport closed the connection the stream rode (its read loop failed,
		// the peer vanished) and failed the streams still on it.
		strings.Contains(msg, "http2: client connection force closed"),
		strings.Contains(msg, "http2: client connection lost"):
		return ClassReset
	case strings.Contains(msg, "EOF"),
		strings.Contains(msg, "server closed idle connection"):
		return ClassEOF
	}
	return ClassOther
}

// classifyResult returns the class of one vegeta result given its status code
// and error text. Vegeta sets the error text for a status outside 200-399 and
// leaves the code 0 for transport errors.
func classifyResult(code uint16, errText string) Class {
	if code != 0 {
		if c := classifyStatus(int(code)); c != ClassOK || errText == "" {
			return c
		}
	}
	if errText == "" {
		return ClassOther // code 0 without an error: nothing was answered
	}
	return classifyText(errText)
}
