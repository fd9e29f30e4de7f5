package existingcluster_test

import (
	"context"
	"fmt"
	"log"

	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/existingcluster"
	"github.com/rollcheck/rollcheck/spec"
)

// A check file's rows on a cluster of the user's, in two namespaces the user created and bound
// examples/rbac/namespaced.yaml in (no ClusterRole): Acquire asks for every right before any
// work and holds both namespaces for the run; each row takes one of them.
func Example() {
	ctx := context.Background()
	c, err := spec.Load("check.yaml")
	if err != nil {
		log.Fatal(err)
	}
	plans, warnings, err := c.Plans()
	if err != nil {
		log.Fatal(err, warnings)
	}
	cl, err := existingcluster.Acquire(ctx, plans,
		existingcluster.FromEnv(),
		existingcluster.WithContext("staging"),
		existingcluster.WithRowNamespaces("team-a", "team-b"),
		existingcluster.WithLogger(log.Printf))
	if err != nil {
		log.Fatal(err) // one line: the context, the API server, a right, a Lease another run holds
	}
	defer func() {
		if err := cl.Release(ctx); err != nil {
			log.Print(err)
		}
	}()
	for _, n := range cl.Notes() {
		log.Print("warning: ", n)
	}
	for i, p := range plans { // one at a time here; up to one per namespace at once
		t := cl.Target()
		t.RowNamespace = cl.RowNamespaces()[i%2]
		row, err := engine.Run(ctx, t, p)
		if err != nil {
			log.Print(err)
		}
		fmt.Println(row.Verdict.Status)
	}
}
