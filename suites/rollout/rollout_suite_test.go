package rollout_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rollcheck/rollcheck/suites/common"
)

var env *common.Env

func TestRollout(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "rollcheck conformance: rollout restart", Label("conformance"))
}

var _ = BeforeSuite(func(ctx context.Context) {
	env = common.SetUp(ctx, "rollout")
}, NodeTimeout(15*time.Minute))
