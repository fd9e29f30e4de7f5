package cluster

import (
	"fmt"
	"strings"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	kindversion "sigs.k8s.io/kind/pkg/cmd/kind/version"
	kindlog "sigs.k8s.io/kind/pkg/log"
)

// kindAPI is what rollcheck uses of kind's *cluster.Provider, so that tests can stand in for it.
type kindAPI interface {
	List() ([]string, error)
	Create(name string, options ...kindcluster.CreateOption) error
	KubeConfig(name string, internal bool) (string, error)
	ListNodes(name string) ([]nodes.Node, error)
	CollectLogs(name, dir string) error
	Delete(name, explicitKubeconfigPath string) error
}

// newKindAPI makes the kind provider a Cluster uses; tests replace it.
var newKindAPI = func(logf func(string, ...any)) kindAPI {
	return kindcluster.NewProvider(kindcluster.ProviderWithDocker(), kindcluster.ProviderWithLogger(kindLogger{logf}))
}

func newKind(logf func(string, ...any)) kindAPI { return newKindAPI(logf) }

// KindVersion is the version of kind rollcheck is built with, as `kind version` prints it.
func KindVersion() string { return kindversion.DisplayVersion() }

// kindLogger passes kind's warnings, errors and level-0 progress lines ("✓ Preparing nodes") to
// logf, prefixed with "kind:"; its more verbose levels are dropped.
type kindLogger struct{ logf func(string, ...any) }

func (l kindLogger) Warn(m string)                    { l.line("warning: " + m) }
func (l kindLogger) Warnf(f string, a ...interface{}) { l.line("warning: " + fmt.Sprintf(f, a...)) }
func (l kindLogger) Error(m string)                   { l.line("error: " + m) }
func (l kindLogger) Errorf(f string, a ...any)        { l.line("error: " + fmt.Sprintf(f, a...)) }
func (l kindLogger) V(v kindlog.Level) kindlog.InfoLogger {
	return kindInfo{l, v == 0}
}

func (l kindLogger) line(m string) {
	if m = strings.TrimSpace(m); m != "" {
		l.logf("kind: %s", m)
	}
}

type kindInfo struct {
	l  kindLogger
	on bool
}

func (i kindInfo) Info(m string) {
	if i.on {
		i.l.line(m)
	}
}

func (i kindInfo) Infof(f string, a ...any) {
	if i.on {
		i.l.line(fmt.Sprintf(f, a...))
	}
}

func (i kindInfo) Enabled() bool { return i.on }
