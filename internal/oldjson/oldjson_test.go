package oldjson

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rollcheck/rollcheck/check"
)

// decodeRow decodes a row's JSON, upgraded, as the readers do.
func decodeRow(t *testing.T, raw string) (check.Row, error) {
	t.Helper()
	b, err := Row([]byte(raw))
	if err != nil {
		return check.Row{}, err
	}
	var row check.Row
	return row, json.Unmarshal(b, &row)
}

// The quiet time of a row written before it had this name is under "settle": taken when "quiet"
// is absent, and a row's "quiet" wins.
func TestRowQuiet(t *testing.T) {
	for _, c := range []struct {
		json string
		want time.Duration
	}{
		{`{"name":"a","quiet":2000000000}`, 2 * time.Second},
		{`{"name":"a","settle":4000000000}`, 4 * time.Second},
		{`{"name":"a","quiet":2000000000,"settle":4000000000}`, 2 * time.Second}, // quiet wins
		{`{"name":"a","quiet":0,"settle":4000000000}`, 0},
		{`{"name":"a"}`, 0},
		{`{"name":"a","settle":9007199254740993}`, 9007199254740993}, // beyond a float's integers
	} {
		row, err := decodeRow(t, `{"config":`+c.json+`}`)
		if err != nil {
			t.Errorf("%s: %v", c.json, err)
			continue
		}
		if a := row.Config; a.Quiet != c.want || a.Name != "a" {
			t.Errorf("%s: Quiet %s, name %q; want %s, a", c.json, a.Quiet, a.Name, c.want)
		}
	}
	if row, err := decodeRow(t, `{"config":{"name":"a","quiet":"3s"}}`); err == nil {
		t.Errorf("a quiet that is not a number decoded: %+v", row.Config)
	}
}

// A preStop written as PreStop.String's short form, the app's and a sidecar's, is read as the
// typed PreStop it says; a short form that is none of them is an error.
func TestRowPreStop(t *testing.T) {
	for _, c := range []struct {
		short string
		want  check.PreStop
	}{
		{"none", check.PreStop{None: true}},
		{"sleep:5s", check.PreStop{Sleep: 5 * time.Second}},
		{"exec:/app sleep 5", check.PreStop{Exec: []string{"/app", "sleep", "5"}}},
		{"httpGet:/drain?sleep=5", check.PreStop{HTTPGet: "/drain?sleep=5"}},
		{"tcpSocket", check.PreStop{TCPSocket: true}},
	} {
		raw := fmt.Sprintf(`{"config":{"name":"a","preStop":%q,"sidecars":[{"name":"s","preStop": %q}]}}`, c.short, c.short)
		row, err := decodeRow(t, raw)
		if err != nil {
			t.Errorf("%s: %v", c.short, err)
			continue
		}
		got := row.Config.PreStop
		if got.None != c.want.None || got.Sleep != c.want.Sleep || !slices.Equal(got.Exec, c.want.Exec) || got.HTTPGet != c.want.HTTPGet || got.TCPSocket != c.want.TCPSocket {
			t.Errorf("%s: %+v, want %+v", c.short, got, c.want)
		}
		if sc := row.Config.Sidecars; len(sc) != 1 || sc[0].PreStop.String() != got.String() {
			t.Errorf("%s: sidecar %+v", c.short, sc)
		}
	}
	for _, bad := range []string{"sleep:soon", "wait:5s"} {
		if _, err := decodeRow(t, fmt.Sprintf(`{"config":{"name":"a","preStop":%q}}`, bad)); err == nil {
			t.Errorf("%s: decoded", bad)
		}
	}
}

// A run's rows are upgraded, the rest of it kept; JSON with nothing old is returned as it is.
func TestRun(t *testing.T) {
	in := `{"schemaVersion":1,"rows":[{"config":{"name":"a","settle":3000000000,"preStop":"sleep:5s"}},{"config":{"name":"b","quiet":1}}]}`
	b, err := Run([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		SchemaVersion int         `json:"schemaVersion"`
		Rows          []check.Row `json:"rows"`
	}
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	if run.SchemaVersion != 1 || len(run.Rows) != 2 || run.Rows[0].Config.Quiet != 3*time.Second ||
		run.Rows[0].Config.PreStop.Sleep != 5*time.Second || run.Rows[1].Config.Quiet != 1 {
		t.Errorf("upgraded run: %s", b)
	}
	now := []byte(`{"rows":[{"config":{"name":"b","quiet":1,"preStop":{"none":true}}}]}`)
	if got, err := Run(now); err != nil || &got[0] != &now[0] {
		t.Errorf("a run of today's form was rewritten (%v)", err)
	}
}
