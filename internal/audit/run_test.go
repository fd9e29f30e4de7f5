package audit

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// --app-delay's values: every workload's, one workload's, and one line for a bad one.
func TestParseAppDelays(t *testing.T) {
	got, err := ParseAppDelays([]string{"1s", "web=2s"})
	if err != nil || got[""].Delay.D() != time.Second || got["web"].Delay.D() != 2*time.Second || got["web"].From != "given (--app-delay)" {
		t.Errorf("%v %+v", err, got)
	}
	for _, tc := range []struct {
		vs   []string
		want string
	}{
		{[]string{"web=soon"}, `--app-delay "web=soon": want [WORKLOAD=]DURATION, a duration of 0 or more such as 5s`},
		{[]string{"-1s"}, `--app-delay "-1s": want [WORKLOAD=]DURATION`},
		{[]string{"1s", "2s"}, `--app-delay "2s": every workload's given twice`},
		{[]string{"web=1s", "web=2s"}, `--app-delay "web=2s": web given twice`},
	} {
		if _, err := ParseAppDelays(tc.vs); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.vs, err, tc.want)
		}
	}
}

// A run is the same whether named by its directory or its conformance.json.
func TestSameRun(t *testing.T) {
	if !sameRun("testdata/kind-run", "./testdata/kind-run/conformance.json") || !sameRun("testdata/kind-run/", "testdata/../testdata/kind-run") {
		t.Error("one run, named two ways: not the same")
	}
	if sameRun("testdata/kind-run", "testdata/e2e-run") {
		t.Error("two runs: the same")
	}
}

// A recorded run's rows and windows, read as rollcheck windows extract reads them.
func TestExtractRun(t *testing.T) {
	w, err := ExtractRun("testdata/kind-run")
	if err != nil || w.Measured.Source == "" || w.Windows.DataPlane == nil {
		t.Errorf("%v %+v", err, w)
	}
	if _, err := ReadRunRows("testdata/no-such-run"); err == nil {
		t.Error("a run that is not there: no error")
	}
}

// The agreement's options name one way to take the windows; windows of the rows' own run are
// refused (ErrInSample) unless asked for, and then said to be in sample.
func TestRunAgreementInSample(t *testing.T) {
	if err := (AgreementOptions{}).Check(); err == nil || err.Error() != "give exactly one of --windows FILE, --windows-from OTHER_RUN and --cross N" {
		t.Errorf("no windows: %v", err)
	}
	if err := (AgreementOptions{Cross: 1}).Check(); err == nil || err.Error() != "--cross 1: want 2 folds or more" {
		t.Errorf("--cross 1: %v", err)
	}
	const run = "testdata/kind-run"
	_, err := RunAgreement(run, AgreementOptions{WindowsFrom: run})
	if !errors.Is(err, ErrInSample) || !strings.HasPrefix(err.Error(), "the windows of "+run+" are the same run's: measured on the rows they predict") {
		t.Errorf("the same run: %v", err)
	}
	r, err := RunAgreement(run, AgreementOptions{WindowsFrom: run, InSample: true})
	if err != nil || len(r.Rows) == 0 || !strings.HasSuffix(r.Windows, ", asked in sample (--in-sample): where the windows were measured on the rows they predict, the figures flatter the audit") {
		t.Errorf("asked in sample: %v %+v", err, r)
	}
}
