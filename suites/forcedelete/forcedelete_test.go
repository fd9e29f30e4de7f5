package forcedelete_test

import "github.com/rollcheck/rollcheck/suites/common"

// The rows and the reasoning behind each expected outcome are in suites/common/rows.go.
var _ = common.Table("forced pod delete under constant load", "forcedelete", &env, common.ForceDeleteRows()...)
