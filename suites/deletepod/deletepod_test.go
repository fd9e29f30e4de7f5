package deletepod_test

import "github.com/rollcheck/rollcheck/suites/common"

// The rows and the reasoning behind each expected outcome are in suites/common/rows.go.
var _ = common.Table("graceful pod delete under constant load", "deletepod", &env, common.DeletePodRows()...)
