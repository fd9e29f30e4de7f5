package attack

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"golang.org/x/net/http2"

	"github.com/rollcheck/rollcheck/loadgen"
)

// classifyStatus returns the class of an answer with the given HTTP status
// code: ClassOK for 200-399, ClassHTTP4xx, an HTTP5xxClass, or ClassOther.
func classifyStatus(code int) loadgen.Class {
	switch {
	case code >= 200 && code < 400:
		return loadgen.ClassOK
	case code >= 400 && code < 500:
		return loadgen.ClassHTTP4xx
	case code >= 500 && code < 600:
		return loadgen.HTTP5xxClass(code)
	default:
		return loadgen.ClassOther
	}
}

// classify returns the failure class of a transport error. It walks the
// error chain with errors.Is and errors.As (syscall errnos, io.EOF,
// deadlines, net.Error timeouts) and falls back to classifyText on the error
// message. A nil error is ClassOK.
func classify(err error) loadgen.Class {
	if err == nil {
		return loadgen.ClassOK
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return loadgen.ClassTimeout
	case errors.As(err, new(http2.GoAwayError)):
		return loadgen.ClassGoAway
	case errors.As(err, new(http2.StreamError)):
		return loadgen.ClassStreamReset
	case errors.Is(err, syscall.ECONNREFUSED):
		return loadgen.ClassRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return loadgen.ClassReset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return loadgen.ClassEOF
	}
	return classifyText(err.Error())
}

// classifyText returns the failure class of a flattened transport error
// message, as vegeta stores it in Result.Error. An empty message is ClassOK.
// Timeouts are checked first, since a timed-out request's message may also
// mention the operation that was cut short; then HTTP/2's GOAWAY and RST_STREAM,
// whose texts may quote the error that came with them.
func classifyText(msg string) loadgen.Class {
	switch {
	case msg == "":
		return loadgen.ClassOK
	case strings.Contains(msg, "Client.Timeout"),
		strings.Contains(msg, "deadline exceeded"),
		strings.Contains(msg, "i/o timeout"),
		strings.Contains(msg, "timeout awaiting response headers"),
		strings.Contains(msg, "TLS handshake timeout"):
		return loadgen.ClassTimeout
	case strings.Contains(msg, "server sent GOAWAY"),
		strings.Contains(msg, "graceful shutdown GOAWAY"):
		return loadgen.ClassGoAway
	case strings.Contains(msg, "stream error: stream ID"):
		return loadgen.ClassStreamReset
	case strings.Contains(msg, "connection refused"):
		return loadgen.ClassRefused
	case strings.Contains(msg, "connection reset"),
		strings.Contains(msg, "broken pipe"),
		strings.Contains(msg, "connection aborted"),
		// HTTP/2: Go's transport closed the connection the stream rode (its read loop failed,
		// the peer vanished) and failed the streams still on it.
		strings.Contains(msg, "http2: client connection force closed"),
		strings.Contains(msg, "http2: client connection lost"):
		return loadgen.ClassReset
	case strings.Contains(msg, "EOF"),
		strings.Contains(msg, "server closed idle connection"):
		return loadgen.ClassEOF
	}
	return loadgen.ClassOther
}

// classifyResult returns the class of one vegeta result given its status code
// and error text. Vegeta sets the error text for a status outside 200-399 and
// leaves the code 0 for transport errors.
func classifyResult(code uint16, errText string) loadgen.Class {
	if code != 0 {
		if c := classifyStatus(int(code)); c != loadgen.ClassOK || errText == "" {
			return c
		}
	}
	if errText == "" {
		return loadgen.ClassOther // code 0 without an error: nothing was answered
	}
	return classifyText(errText)
}
