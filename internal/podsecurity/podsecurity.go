// Package podsecurity checks pod specs against the restricted Pod Security Standard with
// Kubernetes' own checks (k8s.io/pod-security-admission's policy package, as the admission
// plugin runs them): the tests of every package that renders a pod use it. It also names the
// namespace labels that make a namespace enforce a level.
package podsecurity

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// EnforceLabel is the namespace label that makes PodSecurity admission refuse a pod that does not
// meet its level.
const EnforceLabel = api.EnforceLevelLabel

// Restricted returns why a pod with meta and spec violates the restricted standard at its latest
// version: one line per failed check, none when it meets it.
func Restricted(meta metav1.ObjectMeta, spec corev1.PodSpec) ([]string, error) {
	ev, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return nil, fmt.Errorf("pod security evaluator: %w", err)
	}
	var out []string
	for _, r := range ev.EvaluatePod(api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}, &meta, &spec) {
		if !r.Allowed {
			out = append(out, r.ForbiddenReason+" ("+r.ForbiddenDetail+")")
		}
	}
	return out, nil
}
