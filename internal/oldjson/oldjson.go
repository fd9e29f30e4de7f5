// Package oldjson upgrades the JSON of rows an earlier rollcheck wrote to today's form, so that
// check's types decode every row as they are, with no decoder of their own: a row's quiet time
// under its old key "settle", and a preStop in PreStop.String's short form ("sleep:5s",
// "exec:/app sleep 5", "none") written before the preStop was typed. The row files' reader
// (internal/rowfile) and the run's (internal/report) read through it.
package oldjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Row is the JSON of a row (check.Row), upgraded; b itself when nothing in it is old.
func Row(b []byte) ([]byte, error) {
	if !old(b) {
		return b, nil
	}
	var row map[string]any
	if err := decode(b, &row); err != nil {
		return nil, err
	}
	if err := upgradeRow(row); err != nil {
		return nil, err
	}
	return json.Marshal(row)
}

// Run is the JSON of a run (report.Run, conformance.json), its rows upgraded; b itself when
// nothing in it is old.
func Run(b []byte) ([]byte, error) {
	if !old(b) {
		return b, nil
	}
	var run map[string]any
	if err := decode(b, &run); err != nil {
		return nil, err
	}
	rows, _ := run["rows"].([]any)
	for i, r := range rows {
		row, ok := r.(map[string]any)
		if !ok {
			continue
		}
		if err := upgradeRow(row); err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
	}
	return json.Marshal(run)
}

// old reports whether b may hold an old form: an old key, or a preStop given as a string.
func old(b []byte) bool {
	return bytes.Contains(b, []byte(`"settle"`)) || bytes.Contains(b, []byte(`"preStop":"`)) || bytes.Contains(b, []byte(`"preStop": "`))
}

// decode decodes b keeping numbers as they are written (durations are nanoseconds, beyond a
// float's exact integers).
func decode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// upgradeRow upgrades one row in place: its configuration's quiet time and preStops (the app's
// and each sidecar's).
func upgradeRow(row map[string]any) error {
	cfg, ok := row["config"].(map[string]any)
	if !ok {
		return nil
	}
	if settle, ok := cfg["settle"]; ok {
		if _, has := cfg["quiet"]; !has {
			cfg["quiet"] = settle
		}
		delete(cfg, "settle")
	}
	if err := upgradePreStop(cfg); err != nil {
		return err
	}
	sidecars, _ := cfg["sidecars"].([]any)
	for _, s := range sidecars {
		if sc, ok := s.(map[string]any); ok {
			if err := upgradePreStop(sc); err != nil {
				return err
			}
		}
	}
	return nil
}

// upgradePreStop replaces a preStop in the short form of PreStop.String with PreStop's JSON
// (check/prestop.go: none, sleep (nanoseconds), exec, httpGet, tcpSocket).
func upgradePreStop(m map[string]any) error {
	s, ok := m["preStop"].(string)
	if !ok {
		return nil
	}
	kind, arg, _ := strings.Cut(s, ":")
	switch kind {
	case "none":
		m["preStop"] = map[string]any{"none": true}
	case "sleep":
		d, err := time.ParseDuration(arg)
		if err != nil {
			return fmt.Errorf("preStop %q: %w", s, err)
		}
		m["preStop"] = map[string]any{"sleep": int64(d)}
	case "exec":
		m["preStop"] = map[string]any{"exec": strings.Fields(arg)}
	case "httpGet":
		m["preStop"] = map[string]any{"httpGet": arg}
	case "tcpSocket":
		m["preStop"] = map[string]any{"tcpSocket": true}
	default:
		return fmt.Errorf("preStop %q: not none, sleep:, exec:, httpGet: or tcpSocket", s)
	}
	return nil
}
