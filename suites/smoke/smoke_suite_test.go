// The smoke suite: a kind cluster comes up, the sample app runs with 3 replicas behind a
// NodePort Service that answers on 127.0.0.1, the API server keeps the native sleep preStop
// action, and a rollout restart completes. Every step fails loudly when it cannot happen.
package smoke_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rollcheck/rollcheck/suites/common"
)

var env *common.Env

func TestSmoke(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "rollcheck smoke suite", Label("smoke"))
}

var _ = BeforeSuite(func(ctx context.Context) {
	env = common.SetUp(ctx, "smoke")
}, NodeTimeout(15*time.Minute))
