// Package grpc_test checks the example of a check of a gRPC server: the check file and its
// manifests make a valid plan whose load speaks gRPC through one connection to the Service.
// `make example-image && make check SPEC=examples/grpc/check.yaml` runs it on kind.
package grpc_test

import (
	"testing"

	"github.com/rollcheck/rollcheck/loadgen"
	"github.com/rollcheck/rollcheck/spec"
)

func TestCheckFile(t *testing.T) {
	c, err := spec.Load("check.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plans, _, err := c.Plans()
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 {
		t.Fatalf("%d plans, want prestop-5s", len(plans))
	}
	r := plans[0]
	if l := r.Plan().Load; l.Protocol != loadgen.ProtocolGRPC || l.GRPC.Balancing != loadgen.BalancingPickFirst || l.GRPC.Method != "/rollcheck.app.v1.App/Sleep" || len(l.GRPC.Message) != 0 {
		t.Errorf("load %+v, want gRPC through one connection, calling App/Sleep with an empty message", l)
	}
	if _, err := r.Objects("ns", 0); err != nil {
		t.Error(err)
	}
}
