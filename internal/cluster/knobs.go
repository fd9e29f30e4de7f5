package cluster

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/rollcheck/rollcheck/check"
)

// Environment variables: the knobs of make e2e, make check, rctest.SetUp and the CLI. Knobs
// holds the one rule of each; Check applies them.
const (
	EnvName        = "ROLLCHECK_CLUSTER_NAME"   // kind cluster name (default "rollcheck")
	EnvKindConfig  = "ROLLCHECK_KIND_CONFIG"    // kind config file (default: the embedded kind-config.yaml)
	EnvNodeImage   = "ROLLCHECK_NODE_IMAGE"     // auto | upstream | offline | an image reference
	EnvNodeImageOf = "ROLLCHECK_NODE_IMAGE_REF" // the node image make e2e chose (scripts/node-image-choice.sh)
	EnvWorkers     = "ROLLCHECK_WORKERS"        // number of worker nodes (default 0)
	EnvKeep        = "ROLLCHECK_KEEP_CLUSTER"   // a boolean knob (see BoolKnob): keep the cluster
	EnvIsolateDNS  = "ROLLCHECK_ISOLATE_DNS"    // auto or a boolean: remove CoreDNS's forwarding outside a created cluster (see dnsIsolation)
	EnvLoadImage   = "ROLLCHECK_LOAD_IMAGE"     // a prebuilt load pod image (repo:tag) instead of the one BuildLoadImage builds
	EnvRepeat      = "ROLLCHECK_REPEAT"         // runs of every row (1 to 20)
	EnvLoadFrom    = "ROLLCHECK_LOAD_FROM"      // where the matrix's load comes from: both (default), host or cluster (see MatrixLoad)
	EnvProcs       = "ROLLCHECK_PROCS"          // Ginkgo processes of make e2e: rows with load from the cluster run this many at once
	EnvLabels      = "ROLLCHECK_LABELS"         // Ginkgo label filter of make e2e
	EnvSuites      = "ROLLCHECK_SUITES"         // suite directories of make e2e
	EnvGinkgoFlags = "ROLLCHECK_GINKGO_FLAGS"   // more Ginkgo flags for make e2e
)

// A Knob is one setting read from the environment, with its one rule.
type Knob struct {
	Name string
	// Cluster is true for the knobs every front end that makes a cluster reads (FromEnv);
	// the others belong to make e2e or to the node image build.
	Cluster bool
	// Check returns the problem with a non-empty value, or nil.
	Check func(v string) error
}

var (
	clusterName = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,48}[a-z0-9])?$`)
	ginkgoFlag  = regexp.MustCompile(`^--[A-Za-z][A-Za-z0-9.-]*(=.*)?$`)
	version     = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)
	debianSuite = regexp.MustCompile(`^[a-z]+$`)
	// ginkgoFormat matches Ginkgo's formatting tokens in its error messages.
	ginkgoFormat = regexp.MustCompile(`\{\{[a-z/-]*\}\}`)
)

// Knobs are every knob rollcheck reads, with its rule. An unset or empty knob takes its default
// and is never a problem.
var Knobs = []Knob{
	{EnvName, true, func(v string) error {
		if !clusterName.MatchString(v) {
			return errors.New("want lower-case letters, digits, '.' and '-' (at most 50)")
		}
		return nil
	}},
	{EnvKindConfig, true, func(v string) error {
		if st, err := os.Stat(v); err != nil || st.IsDir() {
			return errors.New("no such file")
		}
		return nil
	}},
	{EnvNodeImage, true, ValidNodeImage},
	{EnvNodeImageOf, true, func(v string) error {
		return check.ValidImage(v)
	}},
	{EnvWorkers, true, wholeNumber(0, 5)},
	{EnvKeep, true, func(v string) error { _, err := parseBool(v); return err }},
	{EnvIsolateDNS, true, func(v string) error { _, _, err := isolateDNSValue(v); return err }},
	{EnvLoadImage, true, check.ValidLoadImage},
	{EnvRepeat, false, wholeNumber(1, check.MaxRepeat)},
	{EnvLoadFrom, false, func(v string) error {
		switch MatrixLoad(v) {
		case LoadBoth, LoadHost, LoadCluster:
			return nil
		}
		return errors.New("want both, host or cluster")
	}},
	{EnvProcs, false, wholeNumber(1, MaxProcs)},
	{EnvLabels, false, func(v string) error {
		_, err := types.ParseLabelFilter(v)
		if err != nil {
			// Ginkgo's error is several lines (filter, caret, message): keep its message.
			msg := err.Error()
			var ge types.GinkgoError
			if errors.As(err, &ge) {
				msg = ge.Message
			}
			// Its message also carries terminal formatting ({{red}}, {{/}}): one plain line.
			return errors.New(strings.Join(strings.Fields(ginkgoFormat.ReplaceAllString(msg, "")), " "))
		}
		return nil
	}},
	{EnvSuites, false, func(v string) error {
		for _, w := range strings.Fields(v) {
			if st, err := os.Stat(w); err != nil || !st.IsDir() {
				return fmt.Errorf("%s: no such directory", w)
			}
		}
		return nil
	}},
	{EnvGinkgoFlags, false, func(v string) error {
		for _, w := range strings.Fields(v) {
			if !ginkgoFlag.MatchString(w) {
				return fmt.Errorf("%s: want --flag or --flag=value (Ginkgo flags only; suites are chosen by %s)", w, EnvSuites)
			}
		}
		return nil
	}},
	{"ROLLCHECK_PULL_TIMEOUT", false, wholeNumber(1, 99999)},
	{"ROLLCHECK_DOCKER_WAIT", false, wholeNumber(1, 99999)},
	{"K8S_VERSION", false, matches(version, "want a version like v1.2.3")},
	{"ETCD_VERSION", false, matches(version, "want a version like v1.2.3")},
	{"COREDNS_VERSION", false, matches(version, "want a version like v1.2.3")},
	{"DEBIAN_SUITE", false, matches(debianSuite, "want a Debian suite name such as bookworm")},
}

// ValidNodeImage checks a node image choice: auto, upstream, offline (see ResolveNodeImage) or an
// image reference with a tag.
func ValidNodeImage(v string) error {
	if v == "auto" || v == SourceUpstream || v == SourceOffline || check.ValidImage(v) == nil {
		return nil
	}
	return errors.New("want auto, upstream, offline or an image reference with a tag (repo:tag)")
}

func wholeNumber(lo, hi int) func(string) error {
	return func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi || strings.HasPrefix(v, "+") {
			return fmt.Errorf("want a whole number from %d to %d", lo, hi)
		}
		return nil
	}
}

func matches(re *regexp.Regexp, want string) func(string) error {
	return func(v string) error {
		if !re.MatchString(v) {
			return errors.New(want)
		}
		return nil
	}
}

// CheckKnobs applies the rule of every knob (only the cluster's when clusterOnly) to the
// environment getenv reads, and returns one problem per line-worthy error, all of them at once.
// Rules that join two knobs are checked here too: the offline node image is single-node.
func CheckKnobs(getenv func(string) string, clusterOnly bool) []error {
	var errs []error
	for _, k := range Knobs {
		if clusterOnly && !k.Cluster {
			continue
		}
		if v := getenv(k.Name); v != "" {
			if err := k.Check(v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", k.Name, v, err))
			}
		}
	}
	if w := getenv(EnvWorkers); w != "" && wholeNumber(1, 5)(w) == nil && imageSource(nodeImageChoice(getenv)) == SourceOffline {
		errs = append(errs, fmt.Errorf("%s=%q: the offline node image has a static single-node bridge CNI; use 0 workers or the upstream image", EnvWorkers, w))
	}
	return errs
}

// Repeat is ROLLCHECK_REPEAT, how many times every row of the matrix runs, by its knob's rule:
// 1 when unset.
func Repeat(getenv func(string) string) (int, error) {
	v := getenv(EnvRepeat)
	if v == "" {
		return 1, nil
	}
	if err := wholeNumber(1, check.MaxRepeat)(v); err != nil {
		return 0, fmt.Errorf("%s=%q: %w", EnvRepeat, v, err)
	}
	return strconv.Atoi(v)
}

// MatrixLoad is where the built-in matrix's load comes from (ROLLCHECK_LOAD_FROM).
type MatrixLoad string

const (
	// LoadBoth, the default: every row from inside the cluster (the path real clients take, and
	// rows run in parallel), and from the host too where the host's path gives another result.
	LoadBoth MatrixLoad = "both"
	// LoadHost: every row from the host, through the NodePort kind maps to 127.0.0.1.
	LoadHost MatrixLoad = "host"
	// LoadCluster: every row from inside the cluster only.
	LoadCluster MatrixLoad = "cluster"
)

// LoadMode is ROLLCHECK_LOAD_FROM by its knob's rule: LoadBoth when unset.
func LoadMode(getenv func(string) string) (MatrixLoad, error) {
	v := getenv(EnvLoadFrom)
	if v == "" {
		return LoadBoth, nil
	}
	if err := knobRule(EnvLoadFrom)(v); err != nil {
		return "", fmt.Errorf("%s=%q: %w", EnvLoadFrom, v, err)
	}
	return MatrixLoad(v), nil
}

// MaxProcs bounds ROLLCHECK_PROCS: more processes than this only queue on the API server and
// the nodes' CPUs.
const MaxProcs = 8

// DefaultProcs is make e2e's parallelism when ROLLCHECK_PROCS is unset: the most that kept
// every verdict of the matrix unchanged on a 2-core machine (README, "Rows in parallel").
const DefaultProcs = 3

// Procs is ROLLCHECK_PROCS by its knob's rule: DefaultProcs when unset.
func Procs(getenv func(string) string) (int, error) {
	v := getenv(EnvProcs)
	if v == "" {
		return DefaultProcs, nil
	}
	if err := knobRule(EnvProcs)(v); err != nil {
		return 0, fmt.Errorf("%s=%q: %w", EnvProcs, v, err)
	}
	return strconv.Atoi(v)
}

// knobRule is the rule of the knob named name.
func knobRule(name string) func(string) error {
	for _, k := range Knobs {
		if k.Name == name {
			return k.Check
		}
	}
	panic("no knob " + name)
}

// nodeImageChoice is the node image the environment asks for: the reference make e2e chose, else
// ROLLCHECK_NODE_IMAGE (auto when unset).
func nodeImageChoice(getenv func(string) string) string {
	if v := getenv(EnvNodeImageOf); v != "" {
		return v
	}
	if v := getenv(EnvNodeImage); v != "" {
		return v
	}
	return "auto"
}

// BoolKnob reads the value of the boolean knob name: 1, true, yes, on mean true; 0, false, no,
// off and empty mean false (any case); anything else is an error. scripts/lib.sh's bool_knob
// accepts exactly the same values.
func BoolKnob(name, value string) (bool, error) {
	b, err := parseBool(value)
	if err != nil {
		return false, fmt.Errorf("%s=%s: %w", name, value, err)
	}
	return b, nil
}

// isolateDNSValue reads a value of ROLLCHECK_ISOLATE_DNS: auto (or empty) leaves the choice to
// the node image (dnsIsolation); a boolean knob value forces it on or off.
func isolateDNSValue(v string) (auto, on bool, err error) {
	if v == "" || v == "auto" {
		return true, false, nil
	}
	if on, err = parseBool(v); err != nil {
		return false, false, errors.New("want auto, or 1, true, yes, on or 0, false, no, off (or unset: auto)")
	}
	return false, on, nil
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true, nil
	case "", "0", "false", "no", "off":
		return false, nil
	}
	return false, errors.New("want 1, true, yes, on or 0, false, no, off (or unset)")
}
