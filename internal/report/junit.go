package report

import (
	"encoding/xml"
	"fmt"
	"io"

	"github.com/rollcheck/rollcheck/check"
)

// JUnitFile is the name of the JUnit report WriteAll writes.
const JUnitFile = "conformance.junit.xml"

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes the run as JUnit XML, one test suite per Row.Suite and one test case per
// row: a failed verdict is a failure, a harness fault or an error is an error; a row that
// needed a second attempt says so in its system-out (" (retried: <reason>)") and its message.
func (run Run) WriteJUnit(w io.Writer) error {
	var out junitSuites
	index := map[string]int{}
	for _, r := range run.Rows {
		i, ok := index[r.Suite]
		if !ok {
			i = len(out.Suites)
			index[r.Suite] = i
			out.Suites = append(out.Suites, junitSuite{Name: r.Suite})
		}
		s := &out.Suites[i]
		c := junitCase{Name: r.Config.String(), ClassName: r.Suite, Time: r.Duration.Seconds(), SystemOut: r.Summary.String()}
		if note := retriedNote(r); note != "" {
			// A row that needed a second attempt says so, whatever its verdict; its name stays
			// the row's, so that CI matches it across runs.
			c.SystemOut = fmt.Sprintf("attempt %d of the row%s\n%s", r.Attempts, note, c.SystemOut)
		}
		msg := &junitMessage{Message: reason(r) + retriedNote(r), Body: fmt.Sprintf("expected %s\n%s", r.Config.Expect, r.Summary)}
		switch status(r) {
		case check.Pass:
		case check.Fail:
			c.Failure = msg
			s.Failures++
		default:
			c.Error = msg
			s.Errors++
		}
		s.Tests++
		s.Cases = append(s.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write JUnit report: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write JUnit report: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}
