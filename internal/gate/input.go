package gate

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/checkinput"
	"github.com/rollcheck/rollcheck/internal/knobs"
)

// Flags are the input of rollcheck gate and serve: check's (checkinput.Flags, with Gate set),
// and the Argo Rollout whose revision is checked.
type Flags struct {
	*checkinput.Flags
	// Rollout, [NS/]NAME, is an Argo Rollout whose revision of pod-template hash Hash (gate; serve
	// takes it from each call) is checked: its ReplicaSet NAME-HASH, as it runs.
	Rollout, Hash string
	// Serve: rollcheck serve, where each call names the revision (no Hash).
	Serve bool
}

// Disruptions are the disruptions a gate runs: those that leave the workload's spec alone.
var Disruptions = []check.DisruptionKind{check.DeletePod, check.ForceDelete}

// Read reads and checks the gate's input: check's, then what a gate refuses (an app it would
// apply, a variant that changes the Deployment, a disruption that changes what the release
// controller owns), and in a pod the load image. It returns the input and its target line
// ("Deployment NS/NAME"). warn is given each warning of the check.
func (f *Flags) Read(warn func(string)) (*checkinput.Input, string, error) {
	if f.Rollout != "" {
		if err := f.rolloutInput(); err != nil {
			return nil, "", err
		}
		rs := "Rollout/" + f.RolloutName()
		f.Adjust = func(p *check.Plan) { p.App.ReplicaSetOf = rs }
	} else if f.Hash != "" {
		return nil, "", errors.New("--pod-template-hash: only with --rollout")
	}
	if f.File == "" && f.Deployment == "" {
		return nil, "", errors.New("nothing to check: give --deployment NS/NAME --port N, --rollout NS/NAME --pod-template-hash H --port N (or -f CHECK.yaml of an app in place)")
	}
	if len(f.Disruptions) == 0 && f.File == "" {
		f.Disruptions = checkinput.Multi{string(check.DeletePod)}
	}
	// The flags' disruptions are the gate's to refuse first, with its reason (a check file's are
	// refused below, once read).
	for _, d := range f.Disruptions {
		if err := Disruption(check.DisruptionKind(d)); err != nil && slices.Contains(check.DisruptionKinds, check.DisruptionKind(d)) {
			return nil, "", err
		}
	}
	in, err := f.Flags.Read(warn)
	if err != nil {
		return nil, "", err
	}
	if len(in.Plans) == 0 || !in.Plans[0].InPlace() {
		return nil, "", fmt.Errorf("%s: a gate checks a Deployment where it runs: give --deployment NS/NAME (or a check file with app.namespace)", in.Check.Name())
	}
	for _, r := range in.Plans {
		p := r.Plan()
		if ch := p.Variant.Changes(); len(ch) > 0 {
			return nil, "", fmt.Errorf("variant %s would change %s of the Deployment: a gate checks the release as it runs (its one variant is as-is)", p.Variant.Name, strings.Join(ch, ", "))
		}
	}
	for _, r := range in.Plans {
		if err := Disruption(r.Plan().Disruption.Kind); err != nil {
			return nil, "", err
		}
	}
	// The cluster's configuration is read before any work: a kubeconfig that is not there, or
	// no pod around the gate, is one line.
	if _, _, err := in.Existing.Resolve(); err != nil {
		return nil, "", err
	}
	if in.Existing.InCluster && in.LoadImage == "" {
		return nil, "", fmt.Errorf("in a pod, the load pods run rollcheck's load image: set %s to it (the gate's own image; docs/gate.md)", knobs.EnvLoadImage)
	}
	a := in.Plans[0].Plan().App
	if f.Rollout != "" {
		if f.Hash == "" { // serve: each call names the revision
			return in, fmt.Sprintf("Rollout %s/%s", a.Namespace, f.RolloutName()), nil
		}
		return in, fmt.Sprintf("Rollout %s/%s revision %s (ReplicaSet %s)", a.Namespace, f.RolloutName(), f.Hash, a.Deployment), nil
	}
	return in, fmt.Sprintf("Deployment %s/%s", a.Namespace, a.Deployment), nil
}

// podTemplateHash is what Argo Rollouts' rollouts-pod-template-hash label holds.
var podTemplateHash = regexp.MustCompile(`^[a-z0-9]{1,20}$`)

// rolloutInput checks --rollout and --pod-template-hash and names, as --deployment does, the
// ReplicaSet Argo Rollouts gives that revision (NAME-HASH; serve names it per call).
func (f *Flags) rolloutInput() error {
	switch {
	case f.File != "":
		return errors.New("--rollout names the workload: not with -f")
	case f.Deployment != "":
		return errors.New("--rollout or --deployment, not both")
	case !f.Serve && f.Hash == "":
		return errors.New("--rollout needs --pod-template-hash H, the revision to check (in an AnalysisTemplate: an arg with valueFrom.podTemplateHashValue Latest)")
	case f.Hash != "" && !podTemplateHash.MatchString(f.Hash):
		return fmt.Errorf("--pod-template-hash %q: want the revision's hash (lower-case letters and digits)", f.Hash)
	}
	ns, name, ok := strings.Cut(f.Rollout, "/")
	if !ok {
		ns, name = f.Namespace, f.Rollout
	} else if f.Namespace != "" && f.Namespace != ns {
		return fmt.Errorf("--rollout %s and -n %s name two namespaces", f.Rollout, f.Namespace)
	}
	if ns == "" || name == "" {
		return fmt.Errorf("--rollout %q: want NS/NAME (or -n NS)", f.Rollout)
	}
	hash := f.Hash
	if hash == "" {
		hash = "0" // serve: a stand-in until a call names the revision
	}
	f.Deployment, f.Namespace = ns+"/"+name+"-"+hash, ""
	return nil
}

// RolloutName is --rollout's NAME.
func (f *Flags) RolloutName() string {
	if _, name, ok := strings.Cut(f.Rollout, "/"); ok {
		return name
	}
	return f.Rollout
}

// RevisionPlans are in's plans on the revision of f.Rollout that key names (hash:H, what Argo's
// Web provider passes), and its target line; an error for another key (Flagger's checksum).
func (f *Flags) RevisionPlans(in *checkinput.Input, key string) ([]*check.Resolved, string, error) {
	hash, ok := strings.CutPrefix(key, "hash:")
	if !ok || !podTemplateHash.MatchString(hash) {
		return nil, "", fmt.Errorf("%s: a Rollout's revision is named by its pod-template hash (Argo's Web provider: %s?hash=H)", key, ArgoPath)
	}
	// The revision's plans: the input's, resolved anew with the ReplicaSet that key names.
	plans, _, err := in.Check.PlansWith(func(p *check.Plan) {
		in.Adjust(p)
		p.App.Deployment = f.RolloutName() + "-" + hash
	})
	if err != nil {
		return nil, "", err
	}
	a := plans[0].Plan().App
	return plans, fmt.Sprintf("Rollout %s/%s revision %s (ReplicaSet %s)", a.Namespace, f.RolloutName(), hash, a.Deployment), nil
}

// Disruption refuses, with its reason, a disruption a gate does not run.
func Disruption(k check.DisruptionKind) error {
	if slices.Contains(Disruptions, k) {
		return nil
	}
	why := "it is not one that only deletes pods"
	switch info := k.Info(); {
	case k == check.RolloutRestart:
		why = "it changes the pod template, which the release controller takes for a new revision"
	case info.Scales:
		why = "it changes the replicas, which the release controller owns"
	case info.Evicts:
		why = "it cordons a node other workloads share"
	case info.RestartsKubelet:
		why = "it restarts a kubelet (kind only)"
	}
	return fmt.Errorf("disruption %s: a gate does not run it: %s (delete-pod or force-delete)", k, why)
}
