// Package manifest reads a user's Kubernetes manifests, one way for rollcheck check, init and
// audit: a file (YAML documents or JSON, a List's items each an object), a directory's
// .yaml, .yml and .json files (its top level, as kubectl apply -f DIR reads it), or a directory
// with a kustomization, rendered in process with sigs.k8s.io/kustomize/api as kubectl kustomize
// renders it. Each object comes with the file it came from, and every error names the file at
// fault.
package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/e2e-framework/klient/decoder"
	"sigs.k8s.io/e2e-framework/klient/k8s"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// Doc is one object of the manifests: its YAML (or JSON) and where it came from.
type Doc struct {
	// Source is the file the object is in, as the path given names it ("k8s/app.yaml"), or the
	// directory of the kustomization it was rendered from ("k8s/overlay"): what a check file's
	// app.manifests may list.
	Source string
	// At names the object in errors: its source and its place there ("k8s/app.yaml: document 2",
	// "…, item 3" of a List).
	At string
	// Data is the object, YAML or JSON.
	Data []byte
	// TypeMeta is its apiVersion and kind.
	metav1.TypeMeta
}

// Kustomizations are the file names that make a directory a kustomization, as kustomize
// recognises them.
var Kustomizations = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// extensions are the files of a directory that are read.
var extensions = []string{".yaml", ".yml", ".json"}

// ErrNotManifests is returned for a file that holds a tool's file, not Kubernetes objects (a
// rollcheck check file): given as a file it is an error, in a directory it is left out.
var ErrNotManifests = errors.New("a rollcheck file (a check file), not Kubernetes manifests")

// Read reads the manifests at path: a file, a directory of them, or a kustomization (a directory
// holding one of Kustomizations, or that file itself). In a directory, a file that holds no object
// or a check file is left out; subdirectories are not read (a kustomization names what it uses).
// An error names the file at fault; reading nothing at all is an error too.
func Read(path string) ([]Doc, error) {
	st, err := os.Stat(path)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return nil, fmt.Errorf("%s: %w", path, pe.Err)
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		if slices.Contains(Kustomizations, filepath.Base(path)) {
			return kustomize(filepath.Dir(path))
		}
		docs, err := readFile(path)
		switch {
		case errors.Is(err, ErrNotManifests):
			return nil, fmt.Errorf("%s: %w", path, err)
		case err != nil:
			return nil, err
		case len(docs) == 0:
			return nil, fmt.Errorf("%s: no Kubernetes object in it", path)
		}
		return docs, nil
	}
	for _, k := range Kustomizations {
		if _, err := os.Stat(filepath.Join(path, k)); err == nil {
			return kustomize(path)
		}
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var docs []Doc
	for _, e := range entries {
		if e.IsDir() || !slices.Contains(extensions, strings.ToLower(filepath.Ext(e.Name()))) {
			continue
		}
		got, err := readFile(filepath.Join(path, e.Name()))
		if errors.Is(err, ErrNotManifests) {
			continue // a check file beside the manifests
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, got...)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: no Kubernetes object in its .yaml, .yml and .json files", path)
	}
	return docs, nil
}

// ReadAll reads each of paths (Read) in order.
func ReadAll(paths ...string) ([]Doc, error) {
	var docs []Doc
	for _, p := range paths {
		got, err := Read(p)
		if err != nil {
			return nil, err
		}
		docs = append(docs, got...)
	}
	return docs, nil
}

// Sources are the distinct sources of docs, in order.
func Sources(docs []Doc) []string {
	var out []string
	for _, d := range docs {
		if !slices.Contains(out, d.Source) {
			out = append(out, d.Source)
		}
	}
	return out
}

// Objects decodes docs into typed objects (client-go's scheme; other kinds unstructured), in
// order; an error names the doc's source.
func Objects(docs []Doc) ([]k8s.Object, error) {
	out := make([]k8s.Object, 0, len(docs))
	for _, d := range docs {
		o, err := decoder.DecodeAny(bytes.NewReader(d.Data))
		if err != nil {
			return nil, fmt.Errorf("%s: %s %s: %w", d.At, d.Kind, d.APIVersion, err)
		}
		out = append(out, o)
	}
	return out, nil
}

// readFile reads a file's objects (Decode). A file of rollcheck's own is ErrNotManifests.
func readFile(file string) ([]Doc, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return Decode(b, file)
}

// Decode reads the objects of b, named source in errors and in each Doc: its YAML documents (or
// JSON), a List's items each an object, comment-only documents left out. A document of
// rollcheck's own (apiVersion rollcheck.io/…, a check file) is ErrNotManifests.
func Decode(b []byte, source string) ([]Doc, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var docs []Doc
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		at := fmt.Sprintf("%s: document %d", source, i)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		got, err := objects(doc, source, at)
		if err != nil {
			return nil, err
		}
		docs = append(docs, got...)
	}
}

// objects are the objects of one document: none (comments only), it, or a List's items.
func objects(doc []byte, source, at string) ([]Doc, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, nil
	}
	var probe map[string]any
	if err := yaml.Unmarshal(doc, &probe); err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	if len(probe) == 0 { // comments only
		return nil, nil
	}
	tm := metav1.TypeMeta{}
	tm.APIVersion, _ = probe["apiVersion"].(string)
	tm.Kind, _ = probe["kind"].(string)
	group, _, _ := strings.Cut(tm.APIVersion, "/")
	switch {
	case group == "rollcheck.io":
		return nil, ErrNotManifests
	case tm.Kind == "" || tm.APIVersion == "":
		return nil, fmt.Errorf("%s: an object without apiVersion and kind", at)
	case tm.APIVersion == "v1" && strings.HasSuffix(tm.Kind, "List"):
		var l struct {
			Items []map[string]any `json:"items"`
		}
		if err := yaml.Unmarshal(doc, &l); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		var out []Doc
		for i, item := range l.Items {
			b, err := yaml.Marshal(item)
			if err != nil {
				return nil, fmt.Errorf("%s, item %d: %w", at, i, err)
			}
			got, err := objects(b, source, fmt.Sprintf("%s, item %d", at, i))
			if err != nil {
				return nil, err
			}
			out = append(out, got...)
		}
		return out, nil
	}
	return []Doc{{Source: source, At: at, Data: doc, TypeMeta: tm}}, nil
}

// kustomize renders the kustomization in dir as kubectl kustomize does (its default options:
// no plugins, no helm, loads restricted to the kustomization's root), each resource an object.
func kustomize(dir string) ([]Doc, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("%s: kustomize: %w", dir, err)
	}
	at := dir + " (kustomization)"
	var docs []Doc
	for _, r := range m.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", at, r.CurId(), err)
		}
		got, err := objects(b, dir, fmt.Sprintf("%s: %s", at, r.CurId()))
		if err != nil {
			return nil, err
		}
		docs = append(docs, got...)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: the kustomization renders no object", dir)
	}
	return docs, nil
}
