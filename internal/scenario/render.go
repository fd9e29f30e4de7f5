package scenario

import (
	"bytes"
	"context"
	"fmt"
	"text/template"

	"sigs.k8s.io/e2e-framework/klient/decoder"
	"sigs.k8s.io/e2e-framework/klient/k8s"

	"github.com/rollcheck/rollcheck/fixtures/manifests"
)

// AppName is the name of the sample app's Deployment and Service in every namespace.
const AppName = "app"

// Target says where a Scenario's manifests go.
type Target struct {
	Namespace string
	Image     string // the sample app image, loaded into the cluster
	NodePort  int32  // the Service's nodePort, mapped to 127.0.0.1 by kind
}

var appTemplate = template.Must(template.ParseFS(manifests.FS, "app.yaml.tmpl"))

// Render returns the Deployment and Service of a Scenario, ready to apply.
func Render(s Scenario, t Target) ([]k8s.Object, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if t.Namespace == "" || t.Image == "" || t.NodePort == 0 {
		return nil, fmt.Errorf("render %s: namespace, image and nodePort are required", s.Name)
	}
	var buf bytes.Buffer
	err := appTemplate.Execute(&buf, map[string]any{
		"Name": AppName, "Namespace": t.Namespace, "Scenario": s.Name, "Image": t.Image, "NodePort": t.NodePort,
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
