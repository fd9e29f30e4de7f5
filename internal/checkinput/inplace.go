package checkinput

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/spec"
)

// inPlaceCheck is the check of the flags-only form for a Deployment that runs already:
// --deployment [NS/]NAME (-n NS), --service, --port and the variant and load flags, as
// flagsCheck reads them for manifests.
func (f *Flags) inPlaceCheck() (*spec.Check, error) {
	flag, given := "--deployment", f.Deployment
	if f.Rollout != "" {
		flag, given = "--rollout", f.Rollout
	}
	ns, name, cut := strings.Cut(given, "/")
	if !cut {
		ns, name = f.Namespace, given
	}
	switch {
	case f.Rollout != "" && len(f.Manifests) > 0:
		return nil, errors.New("--rollout checks an Argo Rollout where it already runs: give it without --manifest")
	case ns == "":
		return nil, fmt.Errorf("%s %s without --manifest checks it where it already runs: name its namespace (-n NS, or %s NS/%s)", flag, given, flag, given)
	case cut && f.Namespace != "" && f.Namespace != ns:
		return nil, fmt.Errorf("%s %s and -n %s name two namespaces", flag, given, f.Namespace)
	case len(f.Images) > 0:
		return nil, errors.New("--image: nothing is loaded for a workload checked where it already runs")
	}
	c, err := f.flagsCheck()
	if err != nil {
		return nil, err
	}
	c.App.Manifests, c.App.Namespace, c.App.Service = nil, ns, f.Service
	if f.Rollout != "" {
		c.App.Deployment, c.App.Rollout = "", name
	} else {
		c.App.Deployment = name
	}
	return c, nil
}

// inPlaceInput checks the flags that concern an app checked in place against the plans: a
// variant that changes the Deployment needs --in-place (refused in one line otherwise, before
// any work), and --in-place and --load-namespace need an app in place.
func (f *Flags) inPlaceInput(c *spec.Check, plans []*check.Resolved) error {
	inPlace := c.App.Namespace != ""
	switch {
	case !inPlace && f.InPlace:
		return fmt.Errorf("--in-place: %s applies its app into a namespace of its own (no app.namespace): nothing runs in place", c.Name())
	case !inPlace && f.LoadNamespace != "":
		return fmt.Errorf("--load-namespace %s: only for an app checked where it already runs (app.namespace)", f.LoadNamespace)
	case !inPlace:
		return nil
	}
	// A dry run changes nothing: it shows what each variant would change, and says which need
	// --in-place (InPlaceSays).
	if f.InPlace || f.DryRun || f.Gate {
		return nil
	}
	var changing []string
	seen := map[string]bool{}
	for _, r := range plans {
		p := r.Plan()
		if ch := p.Variant.Changes(); len(ch) > 0 && !seen[p.Variant.Name] {
			seen[p.Variant.Name] = true
			changing = append(changing, fmt.Sprintf("%s (%s)", p.Variant.Name, strings.Join(ch, ", ")))
		}
	}
	if len(changing) == 0 {
		return nil
	}
	return fmt.Errorf("variant %s would change %s where it runs: add --in-place to allow it (its spec is recorded on it and restored after each row; docs/in-place.md), or check the as-is variant only",
		strings.Join(changing, ", variant "), plans[0].Plan().App.Workload())
}

// inPlaceSays is what --dry-run prints for a variant of an app in place, which applies nothing of
// its own: what it changes of the live Deployment, if anything.
// allowed is --in-place: without it a variant that changes the Deployment is said to need it.
func InPlaceSays(p check.Plan, allowed bool) string {
	where := p.App.Workload() + " where it runs"
	ch := p.Variant.Changes()
	if len(ch) == 0 {
		return "applies nothing; disrupts " + where + " as it is (its spec restored after the row: a rollout restart stamps its pod template)"
	}
	if !allowed {
		return fmt.Sprintf("applies nothing of the app; would change %s of %s for the row, restored after it: needs --in-place to run", strings.Join(ch, ", "), where)
	}
	return fmt.Sprintf("applies nothing of the app; changes %s of %s for the row (--in-place), restored after it", strings.Join(ch, ", "), where)
}
