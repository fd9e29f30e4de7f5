package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// AgreementOptions say which windows a recorded run's rows are audited against
// (rollcheck windows agreement): exactly one of a windows file (Windows), another recorded run's
// windows (WindowsFrom) and the run's own rows dealt into Cross folds. Windows measured while the
// rows ran are refused (ErrInSample) unless InSample.
type AgreementOptions struct {
	Windows     string
	WindowsFrom string
	Cross       int
	InSample    bool
}

// Check refuses options that do not name one way to take the windows, in one line.
func (o AgreementOptions) Check() error {
	given := 0
	for _, set := range []bool{o.Windows != "", o.WindowsFrom != "", o.Cross != 0} {
		if set {
			given++
		}
	}
	switch {
	case given != 1:
		return errors.New("give exactly one of --windows FILE, --windows-from OTHER_RUN and --cross N")
	case o.Cross < 0 || o.Cross == 1:
		return fmt.Errorf("--cross %d: want 2 folds or more", o.Cross)
	}
	return nil
}

// ErrInSample is wrapped in RunAgreement's error when the windows were measured on the rows they
// would predict and AgreementOptions.InSample does not allow it.
var ErrInSample = errors.New("measured on the rows they predict (in sample, which flatters the audit)")

// AgreementReport is a recorded run's agreement table and how its windows were taken.
type AgreementReport struct {
	// Windows says how the windows were taken, and whether out of sample, as the table says it.
	Windows string
	Rows    []AgreementRow
}

// RunAgreement puts the audit's predictions beside what the rows of the recorded run at run
// (ReadRunRows) measured, against the windows o names: another run's (AgreementBetween), a
// windows file's (Agreement), or the run's own folds (CrossAgreement).
func RunAgreement(run string, o AgreementOptions) (*AgreementReport, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	rows, err := ReadRunRows(run)
	if err != nil {
		return nil, err
	}
	inSample := func(what string) error {
		return fmt.Errorf("%s: %w: give another run's windows (--windows-from OTHER_RUN), --cross N, or --in-sample to compute it anyway", what, ErrInSample)
	}
	r := &AgreementReport{}
	switch {
	case o.Cross != 0:
		if r.Rows, err = CrossAgreement(rows, o.Cross, runName(run)); err != nil {
			return nil, err
		}
		r.Windows = fmt.Sprintf("the windows of the same run's other rows (%d folds: each row's fold left out of the windows it is audited against, and of the apps' delays measured): **out of sample**", o.Cross)
		return r, nil
	case o.WindowsFrom != "":
		if sameRun(o.WindowsFrom, run) && !o.InSample {
			return nil, inSample("the windows of " + o.WindowsFrom + " are the same run's")
		}
		wrows, err := ReadRunRows(o.WindowsFrom)
		if err != nil {
			return nil, err
		}
		var win *WindowsFile
		if r.Rows, win, err = AgreementBetween(wrows, rows, runName(o.WindowsFrom)); err != nil {
			return nil, err
		}
		if InSample(win, rows) && !o.InSample {
			return nil, inSample("the windows of " + o.WindowsFrom + " were measured while the rows ran")
		}
		r.Windows = fmt.Sprintf("the windows of another run (%s)", win.Measured.Source)
	default:
		win, err := ReadWindows(o.Windows)
		if err != nil {
			return nil, err
		}
		if InSample(win, rows) && !o.InSample {
			return nil, inSample("the windows of " + o.Windows + " were measured while the rows ran")
		}
		r.Rows = Agreement(rows, win)
		r.Windows = fmt.Sprintf("the windows file %s (%s)", o.Windows, win.Measured.Source)
	}
	if o.InSample {
		r.Windows += ", asked in sample (--in-sample): where the windows were measured on the rows they predict, the figures flatter the audit"
	} else {
		r.Windows += ": **out of sample**"
	}
	return r, nil
}

// Markdown writes the report as a table (WriteAgreementTable).
func (r *AgreementReport) Markdown(w io.Writer) error {
	return WriteAgreementTable(w, r.Rows, r.Windows)
}

// JSON writes the report as indented JSON: how the windows were taken, the table's counts
// (Summary) and its rows.
func (r *AgreementReport) JSON(w io.Writer) error {
	b, err := json.MarshalIndent(struct {
		Windows string           `json:"windows"`
		Summary AgreementSummary `json:"summary"`
		Rows    []AgreementRow   `json:"rows"`
	}{r.Windows, Summary(r.Rows), r.Rows}, "", "  ")
	if err == nil {
		_, err = fmt.Fprintf(w, "%s\n", b)
	}
	return err
}
