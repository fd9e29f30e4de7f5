// Package kindlink hands rctest the cluster policy's run behind a kindcluster.Cluster. Package
// kindcluster keeps it unexported, so that its public surface stays what a user needs; rctest,
// its Ginkgo wrapper in the same module, also builds the matrix's PID 1 images and shares the
// cluster between Ginkgo's processes, which need the run's cluster itself.
package kindlink

import "github.com/rollcheck/rollcheck/internal/cluster"

// RunOf returns the run behind c, which must be a *kindcluster.Cluster. Package kindcluster sets
// it when it is initialised; a program that imports rctest imports kindcluster too.
var RunOf func(c any) *cluster.Run
