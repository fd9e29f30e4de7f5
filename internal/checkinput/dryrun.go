package checkinput

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/rollcheck/rollcheck/check"
)

// dryVariant is one variant of a dry run as -o json prints it: its rows, and the objects it
// would apply (or, in place, what it would change).
type dryVariant struct {
	Variant string         `json:"variant"`
	Rows    []string       `json:"rows"`
	InPlace string         `json:"inPlace,omitempty"`
	Objects []check.Object `json:"objects,omitempty"`
}

// DryRun prints, per variant, the objects the check would apply (in place, what it would
// change, and whether that needs --in-place: inPlaceAllowed): as YAML documents under a comment
// per variant, or with -o json as one JSON array of dryVariant. The rows go to stderr either way.
func DryRun(plans []*check.Resolved, format string, inPlaceAllowed bool, stdout, stderr io.Writer) error {
	var out []*dryVariant
	byName := map[string]*dryVariant{}
	for _, res := range plans {
		p := res.Plan()
		row := fmt.Sprintf("%s×%d", p.Disruption.Kind, p.Disruption.Count)
		fmt.Fprintf(stderr, "row: %s under %s\n", p.Variant.Name, row)
		if v := byName[p.Variant.Name]; v != nil {
			v.Rows = append(v.Rows, row) // the same objects as the variant's first row
			continue
		}
		v := &dryVariant{Variant: p.Variant.Name, Rows: []string{row}}
		byName[p.Variant.Name] = v
		out = append(out, v)
		if p.InPlace() {
			v.InPlace = InPlaceSays(p, inPlaceAllowed) // never empty
			continue
		}
		objs, err := res.Objects("rc-"+p.Variant.Name+"-<random>", 30080)
		if err != nil {
			return err
		}
		for _, o := range objs {
			o.SetManagedFields(nil)
		}
		v.Objects = objs
	}
	if format == JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	for _, v := range out {
		if v.InPlace != "" {
			fmt.Fprintf(stdout, "# variant %s: %s\n", v.Variant, v.InPlace)
			continue
		}
		fmt.Fprintf(stdout, "# variant %s\n", v.Variant)
		for _, o := range v.Objects {
			b, err := yaml.Marshal(o)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "---\n%s", b)
		}
	}
	return nil
}
