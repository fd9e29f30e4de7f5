package deletepod_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/rollcheck/rollcheck/suites/common"
)

var env *common.Env

func TestDeletePod(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "rollcheck conformance: graceful pod delete", Label("conformance"))
}

var _ = BeforeSuite(func(ctx context.Context) {
	env = common.SetUp(ctx, "deletepod")
}, NodeTimeout(15*time.Minute))
