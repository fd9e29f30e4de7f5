// Package knobs holds every setting rollcheck reads from the environment (the ROLLCHECK_*
// variables, ARTIFACTS and the offline node image's versions), each with its one rule, its
// default and a one-line meaning. The table All is what the code checks (`rollcheck knobs`),
// what the scripts read (`rollcheck knobs get NAME`) and what docs/maintainers.md's "Knobs" section
// prints (`rollcheck knobs table`): a knob is added in one place.
package knobs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/rollcheck/rollcheck/check"
)

// The knobs' names.
const (
	EnvName            = "ROLLCHECK_CLUSTER_NAME"
	EnvKindConfig      = "ROLLCHECK_KIND_CONFIG"
	EnvNodeImage       = "ROLLCHECK_NODE_IMAGE"
	EnvNodeImageOf     = "ROLLCHECK_NODE_IMAGE_REF"
	EnvWorkers         = "ROLLCHECK_WORKERS"
	EnvProxyMode       = "ROLLCHECK_KUBE_PROXY_MODE"
	EnvKeep            = "ROLLCHECK_KEEP_CLUSTER"
	EnvIsolateDNS      = "ROLLCHECK_ISOLATE_DNS"
	EnvLoadImage       = "ROLLCHECK_LOAD_IMAGE"
	EnvLinuxExecutable = "ROLLCHECK_LINUX_EXECUTABLE"
	EnvPodSecurity     = "ROLLCHECK_POD_SECURITY"
	EnvRepeat          = "ROLLCHECK_REPEAT"
	EnvLoadFrom        = "ROLLCHECK_LOAD_FROM"
	EnvProcs           = "ROLLCHECK_PROCS"
	EnvLabels          = "ROLLCHECK_LABELS"
	EnvSuites          = "ROLLCHECK_SUITES"
	EnvGinkgoFlags     = "ROLLCHECK_GINKGO_FLAGS"
	EnvCheckFlags      = "ROLLCHECK_CHECK_FLAGS"
	EnvPullTimeout     = "ROLLCHECK_PULL_TIMEOUT"
	EnvDockerWait      = "ROLLCHECK_DOCKER_WAIT"
	EnvCache           = "ROLLCHECK_CACHE"
	EnvVersion         = "ROLLCHECK_VERSION"
	EnvArtifacts       = "ARTIFACTS"
	EnvK8sVersion      = "K8S_VERSION"
	EnvEtcdVersion     = "ETCD_VERSION"
	EnvCoreDNS         = "COREDNS_VERSION"
	EnvContainerd      = "CONTAINERD_VERSION"
	EnvDebianSuite     = "DEBIAN_SUITE"
	EnvDebianMirror    = "DEBIAN_MIRROR"
)

// A Knob is one setting read from the environment, with its one rule.
type Knob struct {
	Name string
	// Default is the value an unset or empty knob takes; empty when unset means something
	// that is not a value (Unset says what).
	Default string
	// Unset says, for the table, what an unset knob means when Default is empty.
	Unset string
	// Meaning is the knob's one line in docs/maintainers.md's table.
	Meaning string
	// Cluster is true for the knobs every front end that makes a cluster reads
	// (cluster.FromEnv); the others belong to make, Ginkgo or the node image build.
	Cluster bool
	// Check returns the problem with a non-empty value, or nil.
	Check func(v string) error
}

// Node image sources: what a node image reference or choice stands for.
const (
	SourceUpstream = "upstream"
	SourceOffline  = "offline"
)

// OfflineContainerd2 is the choice (ROLLCHECK_NODE_IMAGE) of the offline node image's variant
// with containerd CONTAINERD_VERSION over Debian's 1.6: a runtime that takes lifecycle.stopSignal
// (make e2e-stopsignal). Its source is offline, like the default offline image's.
const OfflineContainerd2 = "offline-containerd2"

// OfflineRepo is the repository of the node images scripts/node-image.sh builds, and
// OfflineContainerd2Repo that of their containerd 2 variant (scripts/node-image-containerd.sh):
// another repository, so that the choice offline never takes the variant.
const (
	OfflineRepo            = "rollcheck/kind-node"
	OfflineContainerd2Repo = "rollcheck/kind-node-containerd2"
)

// ImageSource tells a node image's source from its reference (or the choice "offline" or
// "offline-containerd2"): rollcheck's offline images are rollcheck/kind-node:* and
// rollcheck/kind-node-containerd2:*.
func ImageSource(ref string) string {
	if ref == SourceOffline || ref == OfflineContainerd2 ||
		strings.HasPrefix(ref, OfflineRepo+":") || strings.HasPrefix(ref, OfflineContainerd2Repo+":") {
		return SourceOffline
	}
	return SourceUpstream
}

// MaxProcs bounds ROLLCHECK_PROCS: more processes than this only queue on the API server and
// the nodes' CPUs.
const MaxProcs = 8

// DefaultProcs is the most rows that run at once when ROLLCHECK_PROCS is unset: no more than
// the machine's CPUs (DefaultProcsOn).
const DefaultProcs = 3

// NumCPU is the machine's CPU count, which bounds the default parallelism (runtime.NumCPU; a
// variable for tests).
var NumCPU = runtime.NumCPU

// DefaultProcsOn is the parallelism when ROLLCHECK_PROCS is unset on a machine of cpus CPUs:
// DefaultProcs, and no more rows than CPUs. A kind cluster's nodes share the machine's CPUs
// with the load pods, kube-proxy and the kubelet, and rows beyond one per CPU buy little time:
// on 2 cores a row took about 2.5 times as long with three at once as alone, 1.6 times with two
// (the default matrix took 26 min 20 s at three, 26 min 42 s at two), while three made
// kube-proxy route to a deleted pod up to 25 s after its deletion, the kubelet SIGKILL 3 s past
// the grace period, and 2 s requests time out, which failed rows that pass two at a time.
func DefaultProcsOn(cpus int) int { return max(1, min(DefaultProcs, cpus)) }

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

var (
	clusterName = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,48}[a-z0-9])?$`)
	ginkgoFlag  = regexp.MustCompile(`^--[A-Za-z][A-Za-z0-9.-]*(=.*)?$`)
	version     = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)
	debianSuite = regexp.MustCompile(`^[a-z]+$`)
	httpURL     = regexp.MustCompile(`^https?://[^\s]+$`)
	// ginkgoFormat matches Ginkgo's formatting tokens in its error messages.
	ginkgoFormat = regexp.MustCompile(`\{\{[a-z/-]*\}\}`)
)

// ValidClusterName is the rule of a kind cluster's name.
func ValidClusterName(name string) error {
	if !clusterName.MatchString(name) {
		return errors.New("want lower-case letters, digits, '.' and '-' (at most 50)")
	}
	return nil
}

// All are every knob rollcheck reads, in the order of docs/maintainers.md's table. An unset or empty
// knob takes its default and is never a problem.
var All = []Knob{
	{EnvName, "rollcheck", "", "the kind cluster's name", true, ValidClusterName},
	{EnvKindConfig, "", "rollcheck's own (one node, NodePort 30080 on 127.0.0.1)", "a kind config file for the cluster rollcheck creates", true, func(v string) error {
		if st, err := os.Stat(v); err != nil || st.IsDir() {
			return errors.New("no such file")
		}
		return nil
	}},
	{EnvNodeImage, "auto", "", "the kind node image: `auto` (kind's upstream image when the Docker engine has it, else the newest offline one; `rollcheck cluster node-image` and make pull the upstream one first when they can, `rollcheck check` never pulls), `upstream`, `offline`, `offline-containerd2` (the offline one with containerd `CONTAINERD_VERSION`, which takes `lifecycle.stopSignal`: make e2e-stopsignal's) or an image reference", true, ValidNodeImage},
	{EnvNodeImageOf, "", "none", "the node image reference the scripts chose for " + EnvNodeImage + " (make sets it; it wins over " + EnvNodeImage + ")", true, check.ValidImage},
	{EnvWorkers, "0", "", "worker nodes besides the control plane, 0 to 5", true, wholeNumber(0, 5)},
	{EnvProxyMode, "iptables", "", "kube-proxy's mode in a cluster rollcheck creates: `iptables` or `nftables` (kind's `networking.kubeProxyMode`; a reused cluster must run the same)", true, func(v string) error {
		if v != "iptables" && v != "nftables" {
			return errors.New("want iptables or nftables")
		}
		return nil
	}},
	{EnvKeep, "false", "", "keep a cluster this run created (`1`, `true`, `yes`, `on` or `0`, `false`, `no`, `off`); a cluster a run only reused is never deleted", true, func(v string) error { _, err := ParseBool(v); return err }},
	{EnvIsolateDNS, "auto", "", "in a cluster rollcheck creates, remove CoreDNS's forwarding of outside names and drop what pods send outside the cluster untranslated: `auto` (the offline node image only) or a boolean", true, func(v string) error { _, _, err := IsolateDNS(v); return err }},
	{EnvLoadImage, "", "rollcheck makes one", "a prebuilt load pod image (repo:tag) instead of the one rollcheck makes from its own executable (loaded into kind, or pushed to `--image-registry` on another existing cluster)", true, check.ValidLoadImage},
	{EnvLinuxExecutable, "", "this executable, else a build", "a Linux build of this same rollcheck (a release's `rollcheck-VERSION-linux-ARCH`) that rollcheck's own images (the load pod's, the sample app's) are made of when this executable cannot run in a pod: a macOS build, a cgo build; unset, such a rollcheck builds one with the `go` command (`go install` of its own version)", true, func(v string) error {
		st, err := os.Stat(v)
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return errors.New("not a regular file")
		}
		return nil
	}},
	{EnvPodSecurity, "", "no label", "label every namespace a run creates `" + PodSecurityEnforceLabel + ": LEVEL` (`restricted`, `baseline` or `privileged`), so that Pod Security admission refuses there what the level forbids (rollcheck's own pods meet `restricted`; your manifests' pods must too)", true, func(v string) error {
		switch v {
		case "restricted", "baseline", "privileged":
			return nil
		}
		return errors.New("want restricted, baseline or privileged")
	}},
	{EnvRepeat, "1", "", fmt.Sprintf("runs of every row of the matrix (1 to %d)", check.MaxRepeat), false, wholeNumber(1, check.MaxRepeat)},
	{EnvLoadFrom, string(LoadBoth), "", "where the matrix's load comes from: `both`, `host` or `cluster`", false, func(v string) error {
		switch MatrixLoad(v) {
		case LoadBoth, LoadHost, LoadCluster:
			return nil
		}
		return errors.New("want both, host or cluster")
	}},
	{EnvProcs, "", fmt.Sprintf("%d, or the machine's CPUs when fewer", DefaultProcs), fmt.Sprintf("Ginkgo processes of make e2e: rows with load from the cluster run this many at once (1 to %d)", MaxProcs), false, wholeNumber(1, MaxProcs)},
	{EnvLabels, DefaultLabels, "", "Ginkgo label filter of make e2e, e.g. `smoke`, `rollout-restart`, `negative-control`, `sidecar`, `proxy`, `drain-node` (the default leaves out the slow rows, the one that needs a runtime taking `lifecycle.stopSignal`, which `make e2e-stopsignal` runs, the rows through a real proxy, which `make e2e-proxy` runs, and the drain rows that need worker nodes and the rows of one replica, which `make e2e-multinode` runs: `multinode`, `terminating-endpoints`; and the HTTP/2 and gRPC rows, which `make e2e-grpc` runs: `http2`, `grpc`)", false, labelFilter},
	{EnvSuites, "suites examples/check examples/gotest", "", "the suite directories make e2e runs", false, func(v string) error {
		for _, w := range strings.Fields(v) {
			if st, err := os.Stat(w); err != nil || !st.IsDir() {
				return fmt.Errorf("%s: no such directory", w)
			}
		}
		return nil
	}},
	{EnvGinkgoFlags, "", "none", "more Ginkgo flags for make e2e (`--flag` or `--flag=value`)", false, flags("Ginkgo flags only; suites are chosen by " + EnvSuites)},
	{EnvCheckFlags, "", "none", "more `rollcheck check` flags for make check (`--flag` or `--flag=value`)", false, flags("rollcheck check flags only; the check file is SPEC")},
	{EnvPullTimeout, "120", "", "seconds make waits for `docker pull` of kind's upstream node image (one try; `auto` then takes the offline image)", false, wholeNumber(1, 99999)},
	{EnvDockerWait, "90", "", "seconds make docker waits for a dockerd it started to answer", false, wholeNumber(1, 99999)},
	{EnvCache, "", "`$XDG_CACHE_HOME/rollcheck`, else `~/.cache/rollcheck`", "caches outside the repository: the tools, the offline node image's builds, Debian packages, the state of a dockerd rollcheck started", false, absolutePath},
	{EnvVersion, "", "the module version of the binary", "the rollcheck version every row records (make e2e sets it from `git describe`)", false, nil},
	{EnvArtifacts, "_artifacts", "", "where rows, reports and cluster logs are written", false, nil},
	{EnvK8sVersion, "v1.34.3", "", "Kubernetes version of the offline node image", false, matches(version, "want a version like v1.2.3")},
	{EnvEtcdVersion, "v3.6.5", "", "etcd version of the offline node image", false, matches(version, "want a version like v1.2.3")},
	{EnvCoreDNS, "v1.12.1", "", "CoreDNS version of the offline node image", false, matches(version, "want a version like v1.2.3")},
	{EnvContainerd, "v2.3.7", "", "containerd version of the `offline-containerd2` node image, built from the Go module proxy (v2.3.0 or later: its CRI takes `lifecycle.stopSignal`)", false, containerdVersion},
	{EnvDebianSuite, "bookworm", "", "Debian suite of the offline node image's root file system", false, matches(debianSuite, "want a Debian suite name such as bookworm")},
	{EnvDebianMirror, "http://deb.debian.org/debian", "", "Debian mirror debootstrap downloads the offline node image's root file system from", false, matches(httpURL, "want an http:// or https:// URL")},
}

// containerdVersion is CONTAINERD_VERSION's rule: a version of containerd 2 from 2.3 on, the
// first whose CRI takes a container's stop signal (lifecycle.stopSignal).
func containerdVersion(v string) error {
	const want = "want a containerd version from v2.3.0 on, like v2.3.7 (earlier ones ignore lifecycle.stopSignal)"
	if !version.MatchString(v) {
		return errors.New(want)
	}
	f := strings.Split(v[1:], ".")
	major, _ := strconv.Atoi(f[0])
	minor, _ := strconv.Atoi(f[1])
	if major != 2 || minor < 3 {
		return errors.New(want)
	}
	return nil
}

func labelFilter(v string) error {
	_, err := types.ParseLabelFilter(v)
	if err == nil {
		return nil
	}
	// Ginkgo's error is several lines (filter, caret, message): keep its message.
	msg := err.Error()
	var ge types.GinkgoError
	if errors.As(err, &ge) {
		msg = ge.Message
	}
	// Its message also carries terminal formatting ({{red}}, {{/}}): one plain line.
	return errors.New(strings.Join(strings.Fields(ginkgoFormat.ReplaceAllString(msg, "")), " "))
}

// flags is the rule of a knob that holds more command-line flags: --flag or --flag=value only,
// so that no argument (a suite, a file) slips in through it.
func flags(only string) func(string) error {
	return func(v string) error {
		for _, w := range strings.Fields(v) {
			if !ginkgoFlag.MatchString(w) {
				return fmt.Errorf("%s: want --flag or --flag=value (%s)", w, only)
			}
		}
		return nil
	}
}

func absolutePath(v string) error {
	if !strings.HasPrefix(v, "/") {
		return errors.New("want an absolute path")
	}
	return nil
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

// Lookup is the knob named name.
func Lookup(name string) (Knob, bool) {
	for _, k := range All {
		if k.Name == name {
			return k, true
		}
	}
	return Knob{}, false
}

// Check applies the rule of every knob (only the cluster's when clusterOnly) to the
// environment getenv reads, and returns one problem per line-worthy error, all of them at once.
// Rules that join two knobs are checked here too: the offline node image is single-node.
func Check(getenv func(string) string, clusterOnly bool) []error {
	var errs []error
	for _, k := range All {
		if clusterOnly && !k.Cluster {
			continue
		}
		if v := getenv(k.Name); v != "" && k.Check != nil {
			if err := k.Check(v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", k.Name, v, err))
			}
		}
	}
	return errs
}

// Get is the value of the knob named name in the environment getenv reads, by its rule: its
// default when unset or empty (Default, possibly empty); a boolean knob as true or false. A
// name that is no knob, or a value its rule refuses, is an error naming the knob.
func Get(getenv func(string) string, name string) (string, error) {
	k, ok := Lookup(name)
	if !ok {
		return "", fmt.Errorf("%s: no such knob (rollcheck knobs table lists them)", name)
	}
	v := getenv(name)
	if v == "" {
		v = k.Default
	} else if k.Check != nil {
		if err := k.Check(v); err != nil {
			return "", fmt.Errorf("%s=%q: %w", name, v, err)
		}
	}
	if name == EnvKeep {
		b, _ := ParseBool(v)
		return strconv.FormatBool(b), nil
	}
	return v, nil
}

// whole is Get of a knob whose rule is a whole number.
func whole(getenv func(string) string, name string) (int, error) {
	v, err := Get(getenv, name)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(v)
}

// CacheDir is ROLLCHECK_CACHE by its rule: its value, else rollcheck in the user's cache
// directory ($XDG_CACHE_HOME, else ~/.cache: os.UserCacheDir's rule, the one scripts/lib.sh
// has too).
func CacheDir(getenv func(string) string) (string, error) {
	if d := getenv(EnvCache); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no %s and no cache directory: %w", EnvCache, err)
	}
	return filepath.Join(d, "rollcheck"), nil
}

// Repeat is ROLLCHECK_REPEAT, how many times every row of the matrix runs: 1 when unset.
func Repeat(getenv func(string) string) (int, error) { return whole(getenv, EnvRepeat) }

// Procs is ROLLCHECK_PROCS: DefaultProcsOn(NumCPU()) when unset.
func Procs(getenv func(string) string) (int, error) {
	v, err := Get(getenv, EnvProcs)
	if err != nil || v == "" {
		return DefaultProcsOn(NumCPU()), err
	}
	return strconv.Atoi(v)
}

// ProxyMode is ROLLCHECK_KUBE_PROXY_MODE: iptables when unset.
func ProxyMode(getenv func(string) string) string { v, _ := Get(getenv, EnvProxyMode); return v }

// Workers is ROLLCHECK_WORKERS: 0 when unset.
func Workers(getenv func(string) string) (int, error) { return whole(getenv, EnvWorkers) }

// LoadMode is ROLLCHECK_LOAD_FROM: LoadBoth when unset.
func LoadMode(getenv func(string) string) (MatrixLoad, error) {
	v, err := Get(getenv, EnvLoadFrom)
	return MatrixLoad(v), err
}

// Keep is ROLLCHECK_KEEP_CLUSTER: false when unset.
func Keep(getenv func(string) string) (bool, error) {
	v, err := Get(getenv, EnvKeep)
	return v == "true", err
}

// ValidNodeImage checks a node image choice: auto, upstream, offline, offline-containerd2 or an
// image reference with a tag (the rule of ROLLCHECK_NODE_IMAGE, and of kindcluster.WithNodeImage).
func ValidNodeImage(v string) error {
	if v == "auto" || v == SourceUpstream || v == SourceOffline || v == OfflineContainerd2 || check.ValidImage(v) == nil {
		return nil
	}
	return errors.New("want auto, upstream, offline, offline-containerd2 or an image reference with a tag (repo:tag)")
}

// NodeImageChoice is the node image the environment asks for: the reference make chose
// (ROLLCHECK_NODE_IMAGE_REF), else ROLLCHECK_NODE_IMAGE (auto when unset).
func NodeImageChoice(getenv func(string) string) string {
	if v := getenv(EnvNodeImageOf); v != "" {
		return v
	}
	v, _ := Get(func(string) string { return getenv(EnvNodeImage) }, EnvNodeImage)
	return v
}

// BoolKnob reads the value of the boolean knob name: 1, true, yes, on mean true; 0, false, no,
// off and empty mean false (any case); anything else is an error.
func BoolKnob(name, value string) (bool, error) {
	b, err := ParseBool(value)
	if err != nil {
		return false, fmt.Errorf("%s=%s: %w", name, value, err)
	}
	return b, nil
}

// ParseBool is the one meaning of a boolean knob's value.
func ParseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true, nil
	case "", "0", "false", "no", "off":
		return false, nil
	}
	return false, errors.New("want 1, true, yes, on or 0, false, no, off (or unset)")
}

// IsolateDNS reads a value of ROLLCHECK_ISOLATE_DNS: auto (or empty) leaves the choice to the
// node image; a boolean knob value forces it on or off.
func IsolateDNS(v string) (auto, on bool, err error) {
	if v == "" || v == "auto" {
		return true, false, nil
	}
	if on, err = ParseBool(v); err != nil {
		return false, false, errors.New("want auto, or 1, true, yes, on or 0, false, no, off (or unset: auto)")
	}
	return false, on, nil
}

// Heading is the section of docs/maintainers.md the table lives in.
const Heading = "## Knobs"

// WriteTable writes the knobs as the Markdown table of docs/maintainers.md's "Knobs" section.
func WriteTable(w io.Writer) error {
	return writeTable(w, "knob", All)
}

// Settings are the knobs a user of rollcheck's binary sets: those every front end that makes a
// kind cluster reads (Knob.Cluster), less the one make sets for the scripts (EnvNodeImageOf).
func Settings() []Knob {
	var out []Knob
	for _, k := range All {
		if k.Cluster && k.Name != EnvNodeImageOf {
			out = append(out, k)
		}
	}
	return out
}

// WriteSettings writes Settings as the Markdown table of docs/reference.md's "Which cluster".
func WriteSettings(w io.Writer) error {
	return writeTable(w, "setting", Settings())
}

// writeTable writes ks as a Markdown table whose first column is named first.
func writeTable(w io.Writer, first string, ks []Knob) error {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s | default | what it does |\n|---|---|---|\n", first)
	for _, k := range ks {
		def := k.Unset
		if k.Default != "" {
			def = "`" + k.Default + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.Name, def, strings.ReplaceAll(k.Meaning, "|", `\|`))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// PodSecurityEnforceLabel is the namespace label that makes Pod Security admission enforce a
// level there.
const PodSecurityEnforceLabel = "pod-security.kubernetes.io/enforce"

// NamespaceLabels are the labels ROLLCHECK_POD_SECURITY's level (checked) puts on every
// namespace a run creates; nil for none.
func NamespaceLabels(level string) map[string]string {
	if level == "" {
		return nil
	}
	return map[string]string{PodSecurityEnforceLabel: level}
}
