package loadgen

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestProtocolValidate(t *testing.T) {
	for _, tc := range []struct {
		target string
		proto  Protocol
		bad    string
	}{
		{"http://127.0.0.1:1/", ProtocolH2C, ""},
		{"https://127.0.0.1:1/", ProtocolHTTP2, ""},
		{"https://127.0.0.1:1/", ProtocolHTTP1, ""},
		{"https://127.0.0.1:1/", ProtocolH2C, "h2c needs an http:// target"},
		{"http://127.0.0.1:1/", ProtocolHTTP2, "http2 needs an https:// target"},
		{"http://127.0.0.1:1/", "h3", `"h3" is not one of [http1 h2c http2 grpc]`},
	} {
		err := Config{Target: tc.target, Protocol: tc.proto, Rate: 1, Duration: time.Second}.Validate()
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%s %s: %v", tc.proto, tc.target, err)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad) || !errors.Is(err, ErrInvalidConfig)):
			t.Errorf("%s %s: got %v, want %q", tc.proto, tc.target, err, tc.bad)
		}
	}
}
