package scenario

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/proxies"
)

// FrontURL is where the load of a row with a Front goes: the proxy's Service, by its short name
// in the row's namespace (the load pod resolves it there).
const FrontURL = "http://front/"

// UpstreamHeader is the response header in which the proxies of internal/proxies name the
// upstream address they chose (all but Traefik: proxies.Config.UpstreamNamed).
const UpstreamHeader = "X-Upstream"

// Front is a real L7 proxy in front of the sample app (internal/proxies): its own Deployment
// and Service, which the load goes to, and a headless (or ClusterIP) Service of the app by
// which the proxy finds the pods (Traefik: an Ingress to the ClusterIP Service, whose
// EndpointSlices it reads). Only the app's Deployment is disrupted.
type Front struct {
	Config proxies.Config
	// Images are the proxies' images, set by the front end that built them (suites: once per
	// run). Empty: placeholder references, enough to name and validate the row, never to run it.
	Images proxies.Images
}

// withFront adds the proxy's objects and image to p and sends the load through it, from a load
// pod (the host reaches only rollcheck's own NodePort).
//
// A proxy that resolves the app's pods once, at its start, first waits for every one of them in
// the DNS (proxies.AppRef.Image and Replicas: an init container of the app's image, which is
// loaded for the row anyway).
func (f *Front) withFront(p check.Plan, image string, replicas int32) (check.Plan, error) {
	im := f.Images
	if len(im) == 0 {
		im = proxies.Unbuilt()
	}
	objs, err := proxies.Objects(f.Config, im, proxies.AppRef{Selector: map[string]string{"app": AppName}, Port: SampleAppPort, Image: image, Replicas: replicas})
	if err != nil {
		return p, fmt.Errorf("front %s: %w", f.Config, err)
	}
	p.App.Objects = append(p.App.Objects, objs...)
	if ref := im.For(f.Config.Proxy()); ref != "" {
		p.App.Images = append(p.App.Images, ref)
	}
	p.Load.URL, p.Load.From = FrontURL, check.LoadFromCluster
	if f.Config.UpstreamNamed() {
		p.Load.UpstreamHeader = UpstreamHeader
	}
	if f.Config.Resolves() {
		p.Load.Resolve = proxies.HeadlessServiceName
		p.Load.ResolveRefresh, p.Load.ResolveSetting = f.Config.Refresh()
	}
	return p, nil
}

// replicasOf is how many pods the row's app runs: the variant's replicas, else the rendered
// Deployment's (objs), else Kubernetes' default of 1.
func replicasOf(objs []check.Object, v check.Variant) int32 {
	if v.Replicas != nil {
		return *v.Replicas
	}
	for _, o := range objs {
		if d, ok := o.(*appsv1.Deployment); ok && d.Spec.Replicas != nil {
			return *d.Spec.Replicas
		}
	}
	return 1
}
