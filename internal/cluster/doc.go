// Package cluster creates or reuses the kind cluster rollcheck tests run on, makes rollcheck's
// own images (the sample app's and the load pod's, of its own executable: internal/selfimage)
// and loads them into it, applies manifests, waits for them with timeouts, exports logs
// and deletes the cluster when it is done with it. Outside a run it provides the load pod's image
// and the proxies' (ProvideLoadImage, ProxyImages: rollcheck cluster load-image and proxy-images).
//
// It is built on sigs.k8s.io/e2e-framework's kind provider and klient. Configuration comes
// from the environment (see FromEnv), so that `make e2e`, a plain `go test` and CI behave alike.
package cluster
