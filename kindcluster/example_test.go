package kindcluster_test

import (
	"context"
	"fmt"
	"log"

	kindv1 "sigs.k8s.io/kind/pkg/apis/config/v1alpha4"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/engine"
	"github.com/rollcheck/rollcheck/kindcluster"
)

// A program acquires the cluster, runs a Plan on its Target and releases it. It needs a Docker
// engine with the node image (make node-image builds the offline one), so it is not run here;
// examples/gotest is the same in a plain go test.
func Example() {
	ctx := context.Background()
	kc, err := kindcluster.Acquire(ctx,
		kindcluster.WithNodeImage("offline"),
		kindcluster.WithKeep(true), // the next run reuses it in seconds
		kindcluster.WithImages("registry.example/web:v1.4.2"),
		kindcluster.WithLogger(log.Printf))
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := kc.Release(ctx); err != nil {
			log.Print(err)
		}
	}()
	var plan check.Plan // the app's manifests, a Variant, a Disruption, a Load: see check.Plan
	resolved, err := plan.Resolve()
	if err != nil {
		log.Fatal(err)
	}
	row, err := engine.Run(ctx, kc.Target(), resolved)
	if err != nil {
		kc.MarkFailed() // Release exports the cluster's logs (WithLogsDir)
		log.Fatal(err)
	}
	fmt.Println(row.Verdict.Status, row.Verdict.Reason)
}

// FromEnv reads the ROLLCHECK_* knobs as make e2e does (ROLLCHECK_NODE_IMAGE,
// ROLLCHECK_KEEP_CLUSTER, …); the options after it override them.
func ExampleFromEnv() {
	ctx := context.Background()
	kc, err := kindcluster.Acquire(ctx, kindcluster.FromEnv(), kindcluster.WithLogger(log.Printf))
	if err != nil {
		log.Fatal(err)
	}
	defer kc.Release(ctx)
	fmt.Println(kc.Name(), kc.Created())
}

// WithConfig takes kind's own config type. The port mapping from the load's NodePort to
// 127.0.0.1 is the one thing rollcheck needs of it.
func ExampleWithConfig() {
	config := &kindv1.Cluster{
		Nodes: []kindv1.Node{{
			Role:              kindv1.ControlPlaneRole,
			ExtraPortMappings: []kindv1.PortMapping{{ContainerPort: 30080, HostPort: 30080, ListenAddress: "127.0.0.1"}},
		}},
		FeatureGates: map[string]bool{"ContainerStopSignals": true},
	}
	kc, err := kindcluster.Acquire(context.Background(), kindcluster.WithName("my-checks"), kindcluster.WithConfig(config))
	if err != nil {
		log.Fatal(err)
	}
	defer kc.Release(context.Background())
	fmt.Println(kc.Target().LoadURL)
}

// Bad options are reported all at once, on one line, before Docker is asked anything: this one
// runs without a Docker engine.
func ExampleAcquire_badOptions() {
	_, err := kindcluster.Acquire(context.Background(),
		kindcluster.WithName("My Cluster"),
		kindcluster.WithNodeImage("kindest/node"),
		kindcluster.WithWorkers(9),
		kindcluster.WithImages("web"))
	fmt.Println(err)
	// Output:
	// kind cluster options: node image "kindest/node": want auto, upstream, offline, offline-containerd2 or an image reference with a tag (repo:tag); image "web": want an image reference with a tag (repo:tag); cluster name "My Cluster": want lower-case letters, digits, '.' and '-' (at most 50); 9 worker node(s): want 0 to 5 workers
}

// The sample app is rollcheck's own test app: its image is built from the rollcheck module and
// loaded into the cluster, for checks that need an app of known behaviour.
func ExampleCluster_SampleAppImage() {
	ctx := context.Background()
	kc, err := kindcluster.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer kc.Release(ctx)
	ref, err := kc.SampleAppImage(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ref) // rollcheck/app:<build time>-<hash>
}
