package forcedelete_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rollcheck/rollcheck/suites/common"
)

var env *common.Env

func TestForceDelete(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "rollcheck conformance: forced pod delete (grace 0)", Label("conformance"))
}

var _ = BeforeSuite(func(ctx context.Context) {
	env = common.SetUp(ctx, "forcedelete")
}, NodeTimeout(15*time.Minute))
