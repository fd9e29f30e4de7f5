package scaledown_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rollcheck/rollcheck/suites/common"
)

var env *common.Env

func TestScaleDown(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "rollcheck conformance: scale down and up", Label("conformance"))
}

var _ = BeforeSuite(func(ctx context.Context) {
	env = common.SetUp(ctx, "scaledown")
}, NodeTimeout(15*time.Minute))
