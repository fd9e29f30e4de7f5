// Package rowfile reads and writes rows as files: each row a JSON file under an artifacts
// directory's rows/ (engine.Run writes its row there when it keeps its artifacts), named after
// its suite, variant and disruption; a retried row's first attempt beside it, which Read skips.
// The reports, replay and the audit read rows with it.
package rowfile

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/atomicfile"
	"github.com/rollcheck/rollcheck/internal/oldjson"
)

// rowsDir is the directory, under the artifacts directory, that Write writes rows into.
const rowsDir = "rows"

// Write writes row as indented JSON to dir/rows/<suite>--<name>--<disruption>.json,
// creating the directories it needs, and returns the file's path. A row written earlier
// under the same name is replaced. The file is written to a temporary name and renamed, so
// Read never sees half a row.
func Write(dir string, row check.Row) (string, error) {
	return write(dir, row, Name(row))
}

// WriteAttempt writes row, attempt n of a row that was run again, to
// dir/rows/AttemptName(row, n), as Write writes a row; Read skips it, so that the
// reports count the row once, by its last attempt (which records Attempts and Retried).
func WriteAttempt(dir string, row check.Row, n int) (string, error) {
	return write(dir, row, AttemptName(row, n))
}

func write(dir string, row check.Row, name string) (string, error) {
	if row.Suite == "" || row.Config.Name == "" || row.Config.Disruption == "" {
		return "", fmt.Errorf("write row: suite %q, name %q and disruption %q are all required",
			row.Suite, row.Config.Name, row.Config.Disruption)
	}
	rows := filepath.Join(dir, rowsDir)
	if err := os.MkdirAll(rows, 0o755); err != nil {
		return "", fmt.Errorf("write row %s: %w", name, err)
	}
	b, err := json.MarshalIndent(row, "", "  ")
	if err != nil {
		return "", fmt.Errorf("write row %s: encode: %w", name, err)
	}
	path := filepath.Join(rows, name)
	if err := atomicfile.Write(path, append(b, '\n')); err != nil {
		return "", fmt.Errorf("write row: %w", err)
	}
	return path, nil
}

// AttemptName is the base name WriteAttempt gives attempt n of the row: Name with .attempt<n> before .json.
func AttemptName(row check.Row, n int) string {
	return strings.TrimSuffix(Name(row), ".json") + fmt.Sprintf(".attempt%d.json", n)
}

// attemptFile matches the names AttemptName gives.
var attemptFile = regexp.MustCompile(`\.attempt[0-9]+\.json$`)

// Name is the base name Write gives the row's file:
// <suite>--<name>--<disruption>[--cluster][--r<repeat>].json (--cluster when the load came
// from inside the cluster: the matrix runs some rows both ways), with any character other than
// letters, digits, '.', '_' and '-' replaced by '_'.
func Name(row check.Row) string {
	rep := ""
	if row.Config.LoadFrom == check.LoadFromCluster {
		rep = "--cluster"
	}
	if row.Repeat > 0 {
		rep += fmt.Sprintf("--r%d", row.Repeat)
	}
	return safeName(row.Suite) + "--" + safeName(row.Config.Name) + "--" +
		safeName(string(row.Config.Disruption)) + rep + ".json"
}

func safeName(s string) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// Read reads every dir/rows/*.json written by Write (not WriteAttempt's) and returns the rows sorted by
// Started (then by file name). A file that does not decode, or holds a row without a suite
// or name, is an error naming the file. A missing rows directory is an error that
// wraps fs.ErrNotExist; an empty one gives no rows and no error.
func Read(dir string) ([]check.Row, error) {
	return readRows(dir, func(name string) bool { return !attemptFile.MatchString(name) })
}

// ReadAttempts reads the attempts that WriteAttempt kept in dir/rows (the first attempt of
// every row that was run again), sorted as Read sorts rows. A run with none gives none.
func ReadAttempts(dir string) ([]check.Row, error) {
	return readRows(dir, attemptFile.MatchString)
}

// readRows reads the row files of dir/rows whose names take says.
func readRows(dir string, take func(name string) bool) ([]check.Row, error) {
	rowsDir := filepath.Join(dir, rowsDir)
	entries, err := os.ReadDir(rowsDir)
	if err != nil {
		return nil, fmt.Errorf("read rows: %w", err)
	}
	type named struct {
		file string
		row  check.Row
	}
	var got []named
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || !take(e.Name()) {
			continue
		}
		path := filepath.Join(rowsDir, e.Name())
		row, err := readRow(path)
		if err != nil {
			return nil, err
		}
		got = append(got, named{e.Name(), row})
	}
	slices.SortStableFunc(got, func(a, b named) int {
		return cmp.Or(a.row.Started.Compare(b.row.Started), strings.Compare(a.file, b.file))
	})
	rows := make([]check.Row, len(got))
	for i, n := range got {
		rows[i] = n.row
	}
	return rows, nil
}

func readRow(path string) (check.Row, error) {
	var row check.Row
	b, err := os.ReadFile(path)
	if err != nil {
		return row, fmt.Errorf("read row: %w", err)
	}
	if b, err = oldjson.Row(b); err == nil {
		err = json.Unmarshal(b, &row)
	}
	if err != nil {
		return row, fmt.Errorf("read row %s: %w", path, err)
	}
	if row.Suite == "" || row.Config.Name == "" {
		return row, fmt.Errorf("read row %s: no suite or name: not a row written by rollcheck", path)
	}
	return row, nil
}

// Clear removes the rows Write wrote under dir (a new run starts with none of an old
// one's); no rows is no error.
func Clear(dir string) error {
	if err := os.RemoveAll(filepath.Join(dir, rowsDir)); err != nil {
		return fmt.Errorf("clear rows: %w", err)
	}
	return nil
}
