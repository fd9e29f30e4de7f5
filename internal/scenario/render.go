package scenario

import (
	"bytes"
	"context"
	"fmt"
	"text/template"
	"time"

	"sigs.k8s.io/e2e-framework/klient/decoder"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/fixtures/manifests"
)

// AppName is the name of the sample app's Deployment in every namespace.
const AppName = "app"

// SampleAppPort is the port the sample app serves on.
const SampleAppPort = 8080

var appTemplate = template.Must(template.ParseFS(manifests.FS, "app.yaml.tmpl"))

// Render returns the sample app's Deployment for a row named name: the app's settings as its
// flags, image, 3 replicas, a 30 s grace period and no preStop (a Variant changes those).
func Render(name string, a Sample, image string) ([]check.Object, error) {
	if image == "" {
		return nil, fmt.Errorf("render %s: no image", name)
	}
	var buf bytes.Buffer
	err := appTemplate.Execute(&buf, map[string]any{
		"Name": AppName, "Scenario": name, "Image": image, "Shutdown": string(a.OnSIGTERM),
		"DrainDelay": a.DrainDelay.String(), "RequestDuration": a.RequestDuration.String(), "StopSignal": a.StopSignal,
		"Proxy": a.Proxy != nil, "ProxyNative": a.Proxy != nil && a.Proxy.Native, "ProxyPreStop": a.Proxy.preStopSeconds(),
		"ProxyQuiet": a.Proxy != nil && a.Proxy.Quiet, "Protocol": a.Protocol,
		"GracefulTimeout": durationOrEmpty(a.GracefulTimeout), "MaxConnectionAge": durationOrEmpty(a.MaxConnectionAge),
		"MaxConnectionAgeGrace": durationOrEmpty(a.MaxConnectionAgeGrace), "ReadyDelay": durationOrEmpty(a.ReadyDelay),
	})
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	objs, err := decoder.DecodeAll(context.Background(), &buf)
	if err != nil {
		return nil, fmt.Errorf("render %s: decode manifests: %w", name, err)
	}
	out := make([]check.Object, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out, nil
}

// durationOrEmpty is d as the app's flags read it, or "" for zero (the template sets nothing).
func durationOrEmpty(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}
