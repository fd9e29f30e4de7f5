package loadgen

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWithDefaults(t *testing.T) {
	got := Config{Target: "http://127.0.0.1:1/", Rate: 1, Duration: time.Second}.WithDefaults()
	want := Config{
		Name: DefaultName, Target: "http://127.0.0.1:1/", Method: "GET", Rate: 1, Duration: time.Second,
		Timeout: 2 * time.Second, Connections: DefaultConnections, Workers: DefaultWorkers,
		MaxWorkers: 1000, PodHeader: "X-Pod-Name",
	}
	if got.Name != want.Name || got.Method != want.Method || got.Timeout != want.Timeout ||
		got.Connections != want.Connections || got.Workers != want.Workers ||
		got.MaxWorkers != want.MaxWorkers || got.PodHeader != want.PodHeader || got.KeepAlive {
		t.Errorf("WithDefaults() = %+v, want %+v", got, want)
	}
	set := Config{Method: "POST", Timeout: time.Second, Workers: 3, MaxWorkers: 7, PodHeader: "X-P", Name: "n"}.WithDefaults()
	if set.Method != "POST" || set.Timeout != time.Second || set.Workers != 3 || set.MaxWorkers != 7 || set.PodHeader != "X-P" || set.Name != "n" {
		t.Errorf("WithDefaults overrode set fields: %+v", set)
	}
}

func TestValidate(t *testing.T) {
	good := Config{Target: "http://127.0.0.1:30080/", Rate: 100, Duration: 30 * time.Second}
	with := func(f func(*Config)) Config {
		c := good
		f(&c)
		return c
	}
	cases := []struct {
		name string
		cfg  Config
		// want lists substrings of the error, one per expected problem;
		// empty means valid.
		want []string
	}{
		{"minimal", good, nil},
		{"minimal with defaults", good.WithDefaults(), nil},
		{"localhost https", with(func(c *Config) { c.Target = "https://localhost:8443/x" }), nil},
		{"ipv6 loopback", with(func(c *Config) { c.Target = "http://[::1]:8080/" }), nil},
		{"max duration", with(func(c *Config) { c.Duration = MaxDuration; c.Rate = 10 }), nil},
		{"remote allowed", with(func(c *Config) { c.Target = "http://example.com/"; c.AllowRemote = true }), nil},
		{"zero duration", with(func(c *Config) { c.Duration = 0 }), []string{"duration is required: zero would mean an unbounded attack"}},
		{"negative duration", with(func(c *Config) { c.Duration = -time.Second }), []string{"duration must be > 0, got -1s"}},
		{"huge duration", with(func(c *Config) { c.Duration = 2 * time.Hour }), []string{"duration 2h0m0s exceeds MaxDuration 1h0m0s"}},
		{"zero rate", with(func(c *Config) { c.Rate = 0 }), []string{"rate must be > 0 requests per second, got 0"}},
		{"negative rate", with(func(c *Config) { c.Rate = -5 }), []string{"rate must be > 0 requests per second, got -5"}},
		{"huge rate", with(func(c *Config) { c.Rate = MaxRate + 1 }), []string{"exceeds MaxRate"}},
		{"too many requests", with(func(c *Config) { c.Rate = MaxRate; c.Duration = MaxDuration }), []string{"more than MaxRequests"}},
		{"no target", with(func(c *Config) { c.Target = "" }), []string{"target: required"}},
		{"unparsable target", with(func(c *Config) { c.Target = "http://127.0.0.1:port/" }), []string{"target: parsing"}},
		{"no scheme", with(func(c *Config) { c.Target = "//127.0.0.1:8080/" }), []string{`scheme must be http or https, got ""`}},
		{"ftp", with(func(c *Config) { c.Target = "ftp://127.0.0.1/" }), []string{`scheme must be http or https, got "ftp"`}},
		{"no host", with(func(c *Config) { c.Target = "http:///path" }), []string{"no host"}},
		{"remote", with(func(c *Config) { c.Target = "http://example.com/" }), []string{`host "example.com" is not a loopback address`}},
		{"bad method", with(func(c *Config) { c.Method = "GE T" }), []string{`method "GE T" is not a valid HTTP method`}},
		{"bad header name", with(func(c *Config) { c.Headers = map[string]string{"Bad Header": "x"} }), []string{`header name "Bad Header"`}},
		{"bad header value", with(func(c *Config) { c.Headers = map[string]string{"X-A": "a\r\nb"} }), []string{`header "X-A": value contains CR, LF or NUL`}},
		{"negative timeout", with(func(c *Config) { c.Timeout = -1 }), []string{"timeout must be >= 0"}},
		{"negative connections", with(func(c *Config) { c.Connections = -1; c.MaxConnections = -2 }), []string{"connections must be >= 0", "maxConnections must be >= 0"}},
		{"workers over max", with(func(c *Config) { c.Workers = 10; c.MaxWorkers = 5 }), []string{"workers 10 exceeds maxWorkers 5"}},
		{"huge max workers", with(func(c *Config) { c.MaxWorkers = maxWorkersLimit + 1 }), []string{"maxWorkers 100001 exceeds"}},
		{"bad pod header", with(func(c *Config) { c.PodHeader = "X Pod" }), []string{`podHeader "X Pod"`}},
		{"everything wrong", Config{Target: "ftp://x", Rate: 0, Duration: 0, Timeout: -1},
			[]string{"target:", "rate must be", "duration is required", "timeout must be"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tc.want)
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("error %v does not wrap ErrInvalidConfig", err)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Errorf("got %d problems, want %d:\n%v", len(lines), len(tc.want), err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestTransparentRetry(t *testing.T) {
	cases := []struct {
		cfg  Config
		want bool
	}{
		{Config{KeepAlive: false, Method: "GET"}, false},
		{Config{KeepAlive: true, Method: ""}, true},
		{Config{KeepAlive: true, Method: "GET"}, true},
		{Config{KeepAlive: true, Method: "HEAD"}, true},
		{Config{KeepAlive: true, Method: "POST"}, false},
		{Config{KeepAlive: true, Method: "PUT"}, false}, // idempotent in HTTP, but Go does not replay it
		{Config{KeepAlive: true, Method: "POST", Headers: map[string]string{"idempotency-key": "k"}}, true},
		{Config{KeepAlive: false, Method: "POST", Headers: map[string]string{"Idempotency-Key": "k"}}, false},
		// HTTP/2 sends a refused stream again for any method (vegeta's bodies replay).
		{Config{KeepAlive: true, Method: "POST", Protocol: ProtocolH2C}, true},
		{Config{KeepAlive: false, Method: "POST", Protocol: ProtocolHTTP2}, true},
		{Config{KeepAlive: true, Method: "POST", Protocol: ProtocolHTTP1}, false},
	}
	for _, tc := range cases {
		if got := tc.cfg.transparentRetry(); got != tc.want {
			t.Errorf("%+v: transparentRetry() = %v, want %v", tc.cfg, got, tc.want)
		}
	}
}
