package timeline

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docs/reference.md's table of lifecycle lines has an entry for each line rollcheck reads, in
// ReadLines' order, and names the lines that are only drawn.
func TestReferenceNamesTheLines(t *testing.T) {
	b, err := os.ReadFile("../docs/reference.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	_, table, ok := strings.Cut(doc, "| event | when to write it |")
	if !ok {
		t.Fatal(`docs/reference.md: no table "| event | when to write it |"`)
	}
	first := regexp.MustCompile("^\\| `([a-z_]+)`")
	var rows []string
	for _, l := range strings.Split(table, "\n")[2:] {
		if !strings.HasPrefix(l, "|") {
			break
		}
		if m := first.FindStringSubmatch(l); m != nil {
			rows = append(rows, m[1])
		}
	}
	if !slices.Equal(rows, ReadLines) {
		t.Errorf("docs/reference.md's lifecycle lines are %q, the code reads %q", rows, ReadLines)
	}
	if !strings.Contains(doc, "`prestop` with `\"phase\":\""+PreStopStart+"\"`") {
		t.Errorf("docs/reference.md does not name the prestop line's phase %q", PreStopStart)
	}
	_, other, _ := strings.Cut(table, "Other events (")
	other, _, _ = strings.Cut(other, ")")
	for _, l := range DrawnLines {
		if !strings.Contains(other, "`"+l+"`") {
			t.Errorf("docs/reference.md's other events (%s) do not name %q", other, l)
		}
	}
}
