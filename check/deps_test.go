package check

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// checkPackage is the import path whose dependencies TestNoLoadDependencies lists.
const checkPackage = "github.com/rollcheck/rollcheck/check"

// banned reports whether dep is a package of the load generator's own dependencies, vegeta or
// grpc-go: they belong to loadgen/attack, which check must not import.
func banned(dep string) bool {
	return strings.HasPrefix(dep, "github.com/tsenart/vegeta") ||
		dep == "google.golang.org/grpc" || strings.HasPrefix(dep, "google.golang.org/grpc/")
}

// Every Go user of rollcheck imports check (its Plan, Outcome and Verdict types): it must not
// pull vegeta or grpc-go, which only the attack side (loadgen/attack) needs. go list -deps is
// the compiler's own view of what check imports, however indirectly.
func TestNoLoadDependencies(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("this test lists the dependencies of %s with the go command, which is not on PATH: %v", checkPackage, err)
	}
	cmd := exec.Command(goBin, "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, checkPackage)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list -deps %s: %v\n%s", checkPackage, err, stderr.Bytes())
		}
		t.Fatalf("go list -deps %s: %v", checkPackage, err)
	}
	// imports maps each dependency to its own imports, so that a failure names the chain.
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fs := strings.Fields(line)
		if len(fs) > 0 {
			imports[fs[0]] = fs[1:]
		}
	}
	if _, ok := imports[checkPackage]; !ok {
		t.Fatalf("go list -deps %s did not list the package itself:\n%s", checkPackage, out)
	}
	var found []string
	for dep := range imports {
		if banned(dep) {
			found = append(found, dep)
		}
	}
	if len(found) > 0 {
		t.Errorf("%s depends on %d packages of vegeta or grpc-go, e.g. through %s",
			checkPackage, len(found), strings.Join(chain(imports, checkPackage), " → "))
	}
}

// chain returns the shortest import chain from root to a banned package, breadth first.
func chain(imports map[string][]string, root string) []string {
	prev := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if banned(p) {
			var c []string
			for ; p != ""; p = prev[p] {
				c = append([]string{p}, c...)
			}
			return c
		}
		for _, q := range imports[p] {
			if _, ok := prev[q]; !ok {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return nil
}
