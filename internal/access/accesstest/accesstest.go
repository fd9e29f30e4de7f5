// Package accesstest answers access reviews (internal/access.Review) for the tests of the
// packages that ask them, without a cluster.
package accesstest

import (
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// Reviews is a fake clientset that answers every SelfSubjectAccessReview with allowed, except
// those deny says no to.
func Reviews(deny func(*authorizationv1.ResourceAttributes) bool) *fake.Clientset {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		r.Status.Allowed = !deny(r.Spec.ResourceAttributes)
		return true, r, nil
	})
	return cs
}
