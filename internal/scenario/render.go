package scenario

import (
	"bytes"
	"context"
	"fmt"
	"text/template"

	"sigs.k8s.io/e2e-framework/klient/decoder"
	"sigs.k8s.io/e2e-framework/klient/k8s"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/fixtures/manifests"
)

// AppName is the name of the sample app's Deployment and Service in every namespace.
const AppName = "app"

// SampleAppPort is the port the sample app serves on.
const SampleAppPort = 8080

var appTemplate = template.Must(template.ParseFS(manifests.FS, "app.yaml.tmpl"))

// Render returns the sample app's Deployment for a Scenario, running image.
func Render(s Scenario, image string) ([]k8s.Object, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if image == "" {
		return nil, fmt.Errorf("render %s: no image", s.Name)
	}
	var buf bytes.Buffer
	err := appTemplate.Execute(&buf, map[string]any{
		"Name": AppName, "Scenario": s.Name, "Image": image,
		"Replicas": s.Replicas, "GraceSeconds": s.GraceSeconds, "Shutdown": string(s.OnSIGTERM),
		"DrainDelay": s.DrainDelay.String(), "RequestDuration": s.RequestDuration.String(),
		"PreStop": string(s.PreStop), "PreStopSeconds": s.PreStopSeconds,
	})
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", s.Name, err)
	}
	objs, err := decoder.DecodeAll(context.Background(), &buf)
	if err != nil {
		return nil, fmt.Errorf("render %s: decode manifests: %w", s.Name, err)
	}
	return objs, nil
}

// Plan is the engine's Plan for a Scenario: the sample app rendered with its shutdown
// configuration (the Scenario is its own variant: the manifest already holds the preStop,
// grace period and replicas), the load and the disruption.
func (s Scenario) Plan(suite, image string) (check.Plan, error) {
	s = s.WithDefaults()
	objs, err := Render(s, image)
	if err != nil {
		return check.Plan{}, err
	}
	app := check.App{Deployment: AppName, Port: SampleAppPort, Path: "/", Images: []string{image},
		OnSIGTERM: string(s.OnSIGTERM), RequestDuration: s.RequestDuration}
	if s.DrainDelay > 0 {
		app.OnSIGTERM += "+" + s.DrainDelay.String()
	}
	for _, o := range objs {
		app.Objects = append(app.Objects, o.(check.Object))
	}
	p := check.Plan{
		Suite: suite, App: app,
		Variant:    check.Variant{Name: s.Name, Why: s.Why, Expect: s.Expect},
		Disruption: check.Disruption{Kind: s.Disruption, Count: s.Count},
		Load:       check.Load{Rate: s.Rate, Method: s.Method, KeepAlive: s.KeepAlive},
		Settle:     s.Settle,
	}
	if _, err := p.Validate(); err != nil {
		return check.Plan{}, err
	}
	return p, nil
}
