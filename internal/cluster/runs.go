package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/internal/kube"
	"github.com/rollcheck/rollcheck/internal/runlease"
)

// Two runs may share one kind cluster (make e2e while a rollcheck check runs, two checks): each
// labels its namespaces with its run id (engine.RunLabel) and holds a Lease of its own,
// RunLeaseName(id) in RunsNamespace, renewed while it lives. A sweep deletes only the
// namespaces of runs whose Lease is gone or expired (and those that name no run), never a live
// run's.

// RunsNamespace holds the runs' Leases. It is rollcheck's own but not labelled check.PartOfLabel:
// no sweep deletes it.
const RunsNamespace = "rollcheck-runs"

// RunLeaseName is the name of run id's Lease in RunsNamespace.
func RunLeaseName(id string) string { return "run-" + id }

// leaseClock is the clock of the runs' Leases and of the sweep's judgement of them (tests: a fake).
var leaseClock clock.WithTicker = clock.RealClock{}

// HoldRun gives the run an id (Cluster.RunID, which labels the namespaces of its rows) and holds
// its Lease until ReleaseRun: a sweep by another run on the same cluster leaves this run's
// namespaces alone while it lives. A run killed with kill -9 leaves its Lease to expire
// (runlease.Duration), and the next sweep deletes what it left.
func HoldRun(ctx context.Context, r *Run) error {
	if !r.connected() {
		return nil
	}
	cs, err := kubernetes.NewForConfig(r.Cluster.Client.RESTConfig())
	if err != nil {
		return err
	}
	if r.Cluster.RunID == "" {
		id := make([]byte, 6)
		_, _ = rand.Read(id)
		r.Cluster.RunID = hex.EncodeToString(id)
	}
	r.lease, err = holdRun(ctx, cs, r.Cluster.RunID)
	return err
}

// holdRun makes RunsNamespace if it is not there and holds run id's Lease in it.
func holdRun(ctx context.Context, cs kubernetes.Interface, id string) (*runlease.Lease, error) {
	err := kube.Retry(ctx, func(ctx context.Context) error {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: RunsNamespace,
			Labels: map[string]string{"app.kubernetes.io/managed-by": check.PartOfValue}}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("namespace %s for the runs' Leases: %w", RunsNamespace, err)
	}
	return runlease.Acquire(ctx, cs, RunsNamespace, RunLeaseName(id), id, "run "+id, runlease.WithClock(leaseClock))
}

// ReleaseRun releases the run's Lease (HoldRun), once its namespaces are gone.
func ReleaseRun(ctx context.Context, r *Run) error {
	err := r.lease.Release(ctx)
	r.lease = nil
	return err
}

// runsOf is what a sweep finds: the namespaces rollcheck made, by run.
type runsOf struct {
	// Dead are the runs whose Lease is gone or expired, Live those whose Lease is live (their
	// namespaces are kept), sorted.
	Dead, Live []string
	// Unlabelled is how many namespaces name no run (a Target without a RunID): no Lease can say
	// they are live; they are swept as before runs had Leases.
	Unlabelled int
}

// staleRuns lists the namespaces labelled check.PartOfLabel and sorts their runs by their Lease
// at now: self is this run (never stale here).
func staleRuns(ctx context.Context, cs kubernetes.Interface, self string, now time.Time) (runsOf, error) {
	var out runsOf
	var list *corev1.NamespaceList
	err := kube.Retry(ctx, func(ctx context.Context) (err error) {
		list, err = cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: PartOfSelector})
		return err
	})
	if err != nil {
		return out, fmt.Errorf("list namespaces %s: %w", PartOfSelector, err)
	}
	seen := map[string]bool{}
	for _, ns := range list.Items {
		run := ns.Labels[engine.RunLabel]
		switch {
		case run == "":
			out.Unlabelled++
			continue
		case run == self || seen[run]:
			continue
		}
		seen[run] = true
		s, err := runlease.Get(ctx, cs, RunsNamespace, RunLeaseName(run))
		if err != nil {
			return out, err
		}
		if s != nil && s.Live(now) {
			out.Live = append(out.Live, run)
		} else {
			out.Dead = append(out.Dead, run)
		}
	}
	sort.Strings(out.Dead)
	sort.Strings(out.Live)
	return out, nil
}

// sweepRuns deletes the namespaces of the dead runs found (and those that name no run) and waits
// until they are gone, then the dead runs' Leases; own adds this run's own namespaces (its
// teardown). It returns how many namespaces it deleted and the live runs it left alone.
func (c *Cluster) sweepRuns(ctx context.Context, own bool) (int, []string, error) {
	cs, err := kubernetes.NewForConfig(c.Client.RESTConfig())
	if err != nil {
		return 0, nil, err
	}
	runs, err := staleRuns(ctx, cs, c.RunID, leaseClock.Now())
	if err != nil {
		return 0, nil, err
	}
	dead := runs.Dead
	if own && c.RunID != "" {
		dead = append(slices.Clone(dead), c.RunID)
	}
	var selectors []string
	if runs.Unlabelled > 0 || c.RunID == "" {
		selectors = append(selectors, PartOfSelector+",!"+engine.RunLabel)
	}
	if len(dead) > 0 {
		selectors = append(selectors, PartOfSelector+","+engine.RunLabel+" in ("+strings.Join(dead, ",")+")")
	}
	n := 0
	for _, sel := range selectors {
		m, err := kube.SweepNamespaces(ctx, c.Client, sel, 3*time.Minute)
		n += m
		if err != nil {
			return n, runs.Live, err
		}
	}
	var errs []error
	for _, run := range runs.Dead {
		err := kube.Retry(ctx, func(ctx context.Context) error {
			return cs.CoordinationV1().Leases(RunsNamespace).Delete(ctx, RunLeaseName(run), metav1.DeleteOptions{})
		})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete the Lease of run %s, whose namespaces are gone: %w", run, err))
		}
	}
	return n, runs.Live, errors.Join(errs...)
}
