package kindcluster

import (
	"errors"
	"fmt"

	kindv1 "sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/rollcheck/rollcheck/check"
	"github.com/rollcheck/rollcheck/internal/cluster"
	"github.com/rollcheck/rollcheck/internal/knobs"
	"github.com/rollcheck/rollcheck/internal/oneline"
)

// An Option configures Acquire. Options apply in order: a later one overrides what an earlier
// one set, so FromEnv goes first and the settings a program fixes after it.
type Option interface {
	apply(*settings) error
}

type optionFunc func(*settings) error

func (f optionFunc) apply(s *settings) error { return f(s) }

// settings are what the options set: the cluster policy's options, the images to load and
// where the logs of a failed run go.
type settings struct {
	opts    cluster.Options
	images  []string
	logsDir string
}

// applyOptions applies options to the defaults and checks the result: every problem at once, on one
// line, before any work.
func applyOptions(options []Option) (settings, error) {
	s := settings{opts: cluster.Options{Name: DefaultName, NodeImage: "auto"}}
	var errs []error
	for i, o := range options {
		if o == nil {
			errs = append(errs, fmt.Errorf("option %d is nil", i+1))
			continue
		}
		if err := o.apply(&s); err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.opts.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := oneline.Join(errs); err != nil {
		return s, fmt.Errorf("kind cluster options: %w", err)
	}
	return s, nil
}

// WithName names the kind cluster (default DefaultName): lower-case letters, digits, '.' and
// '-', at most 50. A running cluster of that name is reused.
func WithName(name string) Option {
	return optionFunc(func(s *settings) error {
		s.opts.Name = name
		return nil
	})
}

// WithNodeImage chooses the node image: "auto" (the default: kind's own image, as the kind
// module rollcheck is built with names it, when the Docker engine has it, else the newest
// offline one), "upstream" (kind's own), "offline" (the newest rollcheck/kind-node image that
// make node-image built, which needs nothing from outside the machine), "offline-containerd2"
// (the newest rollcheck/kind-node-containerd2 image: the offline one with a containerd that takes
// lifecycle.stopSignal, built by make e2e-stopsignal) or an image reference with a tag. The image must be in the local Docker engine already: it is never pulled.
func WithNodeImage(ref string) Option {
	return optionFunc(func(s *settings) error {
		if err := knobs.ValidNodeImage(ref); err != nil {
			return fmt.Errorf("node image %q: %w", ref, err)
		}
		s.opts.NodeImage = ref
		return nil
	})
}

// WithKeep keeps a cluster Acquire created when Release runs, so that the next run reuses it
// in seconds instead of creating it again (rollcheck cluster down, or make down in a checkout, deletes it). A reused cluster is always
// kept.
func WithKeep(keep bool) Option {
	return optionFunc(func(s *settings) error {
		s.opts.Keep = keep
		return nil
	})
}

// WithWorkers adds n worker nodes (0 to 5; default 0) besides the control plane, which then
// runs no workload of the rows. Both node images take workers (the offline one's pod networks
// are routed between the nodes by the front end).
func WithWorkers(n int) Option {
	return optionFunc(func(s *settings) error {
		s.opts.Workers = n
		return nil
	})
}

// WithKubeProxyMode sets kube-proxy's mode in the cluster Acquire creates: "iptables" (the
// default) or "nftables" (kind's networking.kubeProxyMode). A cluster it reuses must already
// run that mode, or Acquire refuses it. Every row records the mode kube-proxy reported.
func WithKubeProxyMode(mode string) Option {
	return optionFunc(func(s *settings) error {
		s.opts.ProxyMode = mode
		return nil
	})
}

// WithConfig creates the cluster from a kind config (kind's v1alpha4 Cluster) instead of
// rollcheck's own. It must keep what the load needs: exactly one extraPortMappings entry on the
// control-plane node, from a NodePort (30000-32767) to a port on 127.0.0.1, since rollcheck
// sends load only to the loopback address. Its nodes are replaced by the control plane plus
// WithWorkers' workers. Kind and APIVersion may be left empty.
func WithConfig(config *kindv1.Cluster) Option {
	return optionFunc(func(s *settings) error {
		if config == nil {
			return errors.New("kind config: nil")
		}
		c := config.DeepCopy()
		if c.Kind == "" && c.APIVersion == "" {
			c.Kind, c.APIVersion = "Cluster", "kind.x-k8s.io/v1alpha4"
		}
		b, err := yaml.Marshal(c)
		if err != nil {
			return fmt.Errorf("kind config: %w", err)
		}
		if _, err := cluster.ParseKindConfig("(WithConfig)", b); err != nil {
			return err
		}
		s.opts.KindConfig, s.opts.KindConfigData = "", b
		return nil
	})
}

// WithImages loads images from the local Docker engine into the cluster's nodes once it is
// ready, as kind load docker-image does. Each is a reference with a tag (repo:tag).
func WithImages(refs ...string) Option {
	return optionFunc(func(s *settings) error {
		if err := validImages(refs); err != nil {
			return err
		}
		s.images = append(s.images, refs...)
		return nil
	})
}

// WithLogger receives progress lines (cluster created or reused, images loaded, kind's own
// steps), printf style: t.Logf in a test, log.Printf in a program. Without it they are dropped.
func WithLogger(logf func(format string, args ...any)) Option {
	return optionFunc(func(s *settings) error {
		s.opts.Logf = logf
		return nil
	})
}

// WithLogsDir is where Release exports the cluster's logs (what kind export logs writes) when
// the run was marked failed (Cluster.MarkFailed). Without it they are not exported.
func WithLogsDir(dir string) Option {
	return optionFunc(func(s *settings) error {
		s.logsDir = dir
		return nil
	})
}

// FromEnv sets every cluster setting from the ROLLCHECK_* knobs, as make e2e, rctest and the
// rollcheck command read them (see the knob table in docs/maintainers.md): ROLLCHECK_CLUSTER_NAME,
// ROLLCHECK_NODE_IMAGE, ROLLCHECK_WORKERS, ROLLCHECK_KUBE_PROXY_MODE, ROLLCHECK_KEEP_CLUSTER, ROLLCHECK_KIND_CONFIG,
// ROLLCHECK_ISOLATE_DNS and ROLLCHECK_LOAD_IMAGE, each with its default when unset. A bad knob
// is an error of Acquire's, every one at once. It keeps WithImages, WithLogger and WithLogsDir
// given before it; the options after it override it.
func FromEnv() Option {
	return optionFunc(func(s *settings) error {
		o, err := cluster.FromEnv()
		if err != nil {
			return err
		}
		o.Logf = s.opts.Logf
		s.opts = o
		return nil
	})
}

// validImages checks image references as a check's images are checked, all at once.
func validImages(refs []string) error {
	var errs []error
	for _, ref := range refs {
		if err := check.ValidImage(ref); err != nil {
			errs = append(errs, fmt.Errorf("image %q: %w", ref, err))
		}
	}
	return oneline.Join(errs)
}
