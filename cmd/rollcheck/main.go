// Command rollcheck checks an app's shutdown configuration under load (rollcheck check) and
// manages the kind cluster the checks and the conformance suites run on; the scripts behind
// `make check`, `make cluster`, `make down` and `make e2e` call it.
//
//	rollcheck check -f CHECK.yaml  run a check file's variants × disruptions (exit 0 pass, 1 fail, 2 bad input or no verdict)
//	rollcheck check --manifest F --image REF --port N   the same for one app from flags
//	rollcheck compare [--alpha 0.05] BASE NEW  compare two conformance.json files (exit 0 no significant regression, 1 one, 2 bad input)
//	rollcheck tune --sample exit|drain|ignore | -f CHECK.yaml [--variant NAME]  find the smallest preStop that
//	                            meets the threshold (exit 0 found and confirmed, 1 not, 2 bad input or no verdict)
//	rollcheck e2e [--ginkgo PATH] [--artifacts DIR]  the conformance suites (make e2e): check every knob,
//	                            acquire the cluster, run ginkgo on ROLLCHECK_SUITES, write the report,
//	                            release the cluster (exit: ginkgo's, 1 report or cluster, 2 bad knob, 130 interrupted)
//	rollcheck knobs             check every ROLLCHECK_* knob: one line per problem and exit 2, or nothing
//	rollcheck knobs get NAME    print a knob's value by its rule (its default when unset; exit 2 when bad)
//	rollcheck knobs table       print every knob, its default and meaning (the README's table)
//	rollcheck cluster up        create or reuse the cluster (kept), wait until it is ready; print
//	                            "created" or "reused" on stdout
//	rollcheck cluster down      delete the cluster
//	rollcheck cluster logs DIR  export the cluster's logs into DIR
//	rollcheck cluster versions  print the existing cluster's Kubernetes, kind and node image
//	                            versions as JSON (an error when there is none: creates nothing)
//	rollcheck cluster default-image  print kind's default (upstream) node image
//	rollcheck cluster node-image  choose the node image by ROLLCHECK_NODE_IMAGE (pulling kind's
//	                            upstream one if needed) and print it, or "offline": make builds that one
//	rollcheck cluster load-image  build the load pod's image (cmd/rollcheck-load) and load it into
//	                            the existing cluster, or take ROLLCHECK_LOAD_IMAGE's; print its reference
//	rollcheck report DIR        merge DIR/rows/*.json into DIR/conformance.{json,md} and
//	                            DIR/timeline.html, print the Markdown table; exit 1 unless every row passed
//
// Configuration comes from the ROLLCHECK_* environment variables (internal/knobs).
// kind runs in-process (its Go API): no kind binary is needed.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	kinddefaults "sigs.k8s.io/kind/pkg/apis/config/defaults"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/report"
)

const usage = "usage: rollcheck --version | check -h | tune -h | compare BASE NEW | e2e | knobs [get NAME|table] | cluster up|down|logs DIR|versions|default-image|node-image|load-image | report DIR"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) > 1 && (os.Args[1] == "--version" || os.Args[1] == "-version" || os.Args[1] == "version") {
		fmt.Println("rollcheck", engine.Version())
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == "knobs" {
		os.Exit(knobsCmd(os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "e2e" {
		// e2e handles SIGINT and SIGTERM itself: it passes them on to ginkgo.
		stop()
		os.Exit(e2e(os.Args[2:], os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "compare" {
		os.Exit(compare(os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "check" {
		code := checkCmd(ctx, os.Args[2:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	if len(os.Args) > 1 && os.Args[1] == "tune" {
		code := tuneCmd(ctx, os.Args[2:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "rollcheck:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 2 && args[0] == "report" {
		return writeReport(args[1])
	}
	if len(args) < 2 || args[0] != "cluster" {
		return fmt.Errorf("%s", usage)
	}
	if len(args) == 2 && args[1] == "default-image" {
		fmt.Println(kinddefaults.Image)
		return nil
	}
	if len(args) == 2 && args[1] == "node-image" {
		ref, err := cluster.ChooseNodeImage(ctx, os.Getenv, cluster.Docker, logLine(os.Stderr, "node-image"))
		if err != nil {
			return err
		}
		fmt.Println(ref)
		return nil
	}
	opts, err := cluster.FromEnv()
	if err != nil {
		return err
	}
	opts.Logf = logLine(os.Stderr, "cluster")
	switch args[1] {
	case "up":
		// make cluster: the cluster stays; only a set-up that fails releases it by the policy.
		r := &cluster.Run{Options: opts, LogsDir: filepath.Join(artifactsDir(), "cluster-logs")}
		if err := r.Setup(ctx, cluster.DefaultSetup...); err != nil {
			if terr := r.Teardown(ctx, cluster.DefaultTeardown...); terr != nil {
				opts.Logf("cleanup: %v", terr)
			}
			return err
		}
		if r.Cluster.Created {
			fmt.Println("created")
		} else {
			fmt.Println("reused")
		}
		return nil
	case "down":
		return cluster.Down(ctx, opts)
	case "logs":
		if len(args) != 3 {
			return fmt.Errorf("%s", usage)
		}
		return cluster.ExportLogs(ctx, opts, args[2])
	case "versions":
		c, err := cluster.Existing(ctx, opts)
		if err != nil {
			return err
		}
		v, err := c.Versions(ctx)
		if err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(v)
	case "load-image":
		c, err := cluster.Existing(ctx, opts)
		if err != nil {
			return err
		}
		ref, err := c.LoadPodImage(ctx)
		if err != nil {
			return err
		}
		fmt.Println(ref)
		return nil
	}
	return fmt.Errorf("%s", usage)
}

// writeReport merges the rows the suites wrote into the run's reports and prints the table.
func writeReport(dir string) error {
	rows, err := check.ReadRows(dir)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("report: no rows in %s/rows", dir)
	}
	run := report.NewRun(rows)
	paths, err := report.WriteAll(dir, run)
	if err != nil {
		return err
	}
	if err := run.WriteMarkdown(os.Stdout); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "reports: %v\n", paths)
	c := report.Summarize(run)
	// The plain closing line CI reads.
	fmt.Printf("\nconformance: %d passed, %d failed\n", c.Pass, c.NotPassed())
	if c.NotPassed() > 0 {
		return fmt.Errorf("%d row(s) failed, %d flaky, %d harness fault(s), %d error(s)", c.Fail, c.Flaky, c.HarnessFault, c.Error)
	}
	return nil
}
