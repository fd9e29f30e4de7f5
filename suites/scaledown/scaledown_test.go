package scaledown_test

import "github.com/rollcheck/rollcheck/suites/common"

// The rows and the reasoning behind each expected outcome are in suites/common/rows.go.
var _ = common.Table("scale down and up under constant load", "scaledown", &env, common.ScaleDownRows()...)
