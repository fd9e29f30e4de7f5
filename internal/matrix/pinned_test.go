//go:build !e2e

// Not in the e2e suite's binary: these tests need no cluster and run with go test ./suites,
// and inside a Ginkgo run their failure would fail the suite with none of their output shown.

package matrix

import "github.com/rollcheck/rollcheck/internal/knobs"

// pinned is every spec of the matrix as the table declared it before rows became data, computed
// then by RowLabels, the table's Serial rule and each row's Also, with load from both paths and
// from the host only (from the cluster only, the specs were those of both with load-cluster):
// its name, its labels in order, whether it ran alone, and its Also as alsoPrint gives it. Each
// of these specs must stay as it is (TestSpecsAsPinned); a row added later adds specs, pinned
// here as it was added (sidecar-classic-quiet, the drain rows). The sidecar rows from the cluster
// have run alone since the first runs of the default matrix at two rows at once (sidecarAlone).
var pinned = map[knobs.MatrixLoad][]pinnedSpec{
	knobs.LoadBoth: {
		{"naive: preStop=none sigterm=exit grace=30s keepalive=off load=cluster rollout-restart×3", "rollout-restart failures-expected load-cluster negative-control", false, ""},
		{"naive: preStop=none sigterm=exit grace=30s keepalive=off rollout-restart×3", "rollout-restart failures-expected load-host negative-control", true, ""},
		{"drain-only: preStop=none sigterm=drain grace=30s keepalive=off load=cluster rollout-restart×3", "rollout-restart failures-expected load-cluster negative-control", false, ""},
		{"drain-only: preStop=none sigterm=drain grace=30s keepalive=off rollout-restart×3", "rollout-restart failures-expected load-host negative-control", true, ""},
		{"prestop-exit: preStop=exec:/app sleep 5s sigterm=exit grace=30s keepalive=off load=cluster rollout-restart×3", "rollout-restart zero-failures load-cluster", false, ""},
		{"prestop-exit-keepalive: preStop=exec:/app sleep 5s sigterm=exit grace=30s req=200ms keepalive=on POST load=cluster rollout-restart×3", "rollout-restart failures-expected load-cluster negative-control", false, ""},
		{"prestop-exit-keepalive-get: preStop=exec:/app sleep 5s sigterm=exit grace=30s req=200ms keepalive=on load=cluster rollout-restart×3", "rollout-restart zero-failures load-cluster", false, ""},
		{"prestop-drain: preStop=exec:/app sleep 5s sigterm=drain grace=30s keepalive=off load=cluster rollout-restart×3", "rollout-restart zero-failures load-cluster", false, ""},
		{"app-delay: preStop=none sigterm=drain+5s grace=30s keepalive=off load=cluster rollout-restart×3", "rollout-restart zero-failures load-cluster", false, "creditsOwnDelay err err err"},
		{"native-sleep-drain: preStop=sleep:5s sigterm=drain grace=30s keepalive=off load=cluster rollout-restart×3", "rollout-restart zero-failures load-cluster", false, ""},
		{"slow-requests: preStop=sleep:2s sigterm=drain grace=3s req=5s keepalive=off load=cluster rollout-restart×3", "rollout-restart failures-expected load-cluster negative-control", false, ""},
		{"ignore-sigterm: preStop=sleep:5s sigterm=ignore grace=8s keepalive=off load=cluster rollout-restart×3", "rollout-restart zero-failures load-cluster", false, ""},
		{"ignore-sigterm-keepalive: preStop=sleep:5s sigterm=ignore grace=8s req=200ms keepalive=on POST load=cluster rollout-restart×3", "rollout-restart failures-expected load-cluster negative-control", false, ""},
		{"slow-requests: preStop=sleep:2s sigterm=drain grace=3s req=5s keepalive=off load=cluster delete-pod×3", "delete-pod failures-expected load-cluster negative-control", false, ""},
		{"naive: preStop=none sigterm=exit grace=30s keepalive=off load=cluster delete-pod×3", "delete-pod at-most load-cluster", false, ""},
		{"http-prestop-drain: preStop=httpGet:/prestop?sleep=5s sigterm=drain grace=30s keepalive=off load=cluster delete-pod×3", "delete-pod zero-failures load-cluster", false, ""},
		{"prestop-drain-slow: preStop=exec:/app sleep 5s sigterm=drain grace=30s req=5s keepalive=off load=cluster delete-pod×3", "delete-pod zero-failures load-cluster", false, ""},
		{"prestop-past-grace: preStop=exec:/app sleep 10s sigterm=ignore grace=4s keepalive=off load=cluster delete-pod×3", "delete-pod zero-failures load-cluster", false, "killedAtGracePlus2 err err err"},
		{"naive: preStop=none sigterm=exit grace=30s keepalive=off load=cluster force-delete×3", "force-delete at-most load-cluster", false, ""},
		{"prestop-drain: preStop=exec:/app sleep 5s sigterm=drain grace=30s keepalive=off load=cluster force-delete×3", "force-delete at-most load-cluster", false, ""},
		{"prestop-drain-slow: preStop=exec:/app sleep 5s sigterm=drain grace=30s req=5s keepalive=off load=cluster force-delete×3", "force-delete failures-expected load-cluster negative-control", false, ""},
		{"slow-requests: preStop=sleep:2s sigterm=drain grace=3s req=5s keepalive=off load=cluster scale-down×3", "scale-down failures-expected load-cluster negative-control", false, ""},
		{"naive: preStop=none sigterm=exit grace=30s keepalive=off load=cluster scale-down×3", "scale-down at-most load-cluster", false, ""},
		{"prestop-drain: preStop=exec:/app sleep 5s sigterm=drain grace=30s keepalive=off load=cluster scale-down×3", "scale-down zero-failures load-cluster", false, ""},
		{"pid1-exec: preStop=sleep:5s sigterm=drain grace=15s keepalive=off load=cluster rollout-restart×3", "rollout-restart zero-failures load-cluster pid1", false, "heardSIGTERM ok err ok"},
		{"pid1-shell: preStop=sleep:5s sigterm=drain@shell grace=15s keepalive=off load=cluster rollout-restart×3", "rollout-restart zero-failures load-cluster pid1", false, "heardSIGTERM err ok err"},
		{"pid1-tini: preStop=sleep:5s sigterm=drain@tini grace=15s keepalive=off load=cluster rollout-restart×3", "rollout-restart zero-failures load-cluster pid1", false, "heardSIGTERM ok err ok"},
		{"stopsignal-field: preStop=sleep:5s sigterm=drain/SIGQUIT stopSignal=SIGQUIT grace=20s req=5s keepalive=off load=cluster rollout-restart×3", "rollout-restart zero-failures load-cluster stop-signal-field", false, "runtimeTakesStopSignal ok err ok"},
		{"stopsignal-image: preStop=sleep:5s sigterm=drain/SIGQUIT@stopsignal grace=20s req=5s keepalive=off load=cluster rollout-restart×3", "rollout-restart zero-failures load-cluster stop-signal", false, "heardSIGTERM ok err ok"},
		{"stopsignal-missing: preStop=sleep:5s sigterm=drain/SIGQUIT grace=20s req=5s keepalive=off load=cluster rollout-restart×3", "rollout-restart failures-expected load-cluster stop-signal negative-control", false, "diedAtSIGTERM err err err"},
		{"sidecar-classic: preStop=sleep:5s sigterm=drain grace=30s sidecar=proxy(classic,front,preStop=none) keepalive=off load=cluster rollout-restart×3", "rollout-restart failures-expected load-cluster sidecar negative-control", true, "sidecarOrder err ok err"},
		{"sidecar-classic-quiet: preStop=sleep:5s sigterm=drain grace=30s sidecar=proxy(classic,front,preStop=none) keepalive=off load=cluster rollout-restart×3", "rollout-restart failures-expected load-cluster sidecar negative-control", true, "quietSidecar err ok err"},
		{"sidecar-classic-prestop: preStop=sleep:5s sigterm=drain grace=30s sidecar=proxy(classic,front,preStop=httpGet:/prestop?sleep=5s) keepalive=off load=cluster rollout-restart×3", "rollout-restart zero-failures load-cluster sidecar", true, "sidecarOrder ok err err"},
		{"sidecar-native: preStop=sleep:5s sigterm=drain grace=30s sidecar=proxy(native,front,preStop=none) keepalive=off load=cluster rollout-restart×3", "rollout-restart zero-failures load-cluster sidecar", true, "sidecarOrder ok err ok"},
		{"sidecar-native-prestop: preStop=sleep:5s sigterm=drain grace=30s sidecar=proxy(native,front,preStop=httpGet:/prestop?sleep=5s) keepalive=off load=cluster rollout-restart×3", "rollout-restart zero-failures load-cluster sidecar", true, "sidecarOrder ok err ok"},
		{"kubelet-restart: preStop=none sigterm=ignore grace=10s keepalive=off kubelet-restart×3", "kubelet-restart zero-failures load-host slow", true, "kubeletRestarted err err err"},
		{"drain-pdb: preStop=sleep:5s sigterm=drain grace=30s pdb=maxUnavailable:1 keepalive=off load=cluster drain-node×3", "drain-node zero-failures load-cluster family multinode", true, ""},
		{"drain-colocated: preStop=sleep:5s sigterm=drain grace=30s +patch keepalive=off load=cluster drain-node×3", "drain-node failures-expected load-cluster family multinode negative-control", true, ""},
		{"drain-single-pdb: preStop=sleep:5s sigterm=drain grace=30s pdb=minAvailable:1 keepalive=off load=cluster drain-node×3 drainTimeout=30s", "drain-node zero-failures load-cluster", true, ""},
	},
	knobs.LoadHost: {
		{"naive: preStop=none sigterm=exit grace=30s keepalive=off rollout-restart×3", "rollout-restart failures-expected load-host negative-control", true, ""},
		{"drain-only: preStop=none sigterm=drain grace=30s keepalive=off rollout-restart×3", "rollout-restart failures-expected load-host negative-control", true, ""},
		{"prestop-exit: preStop=exec:/app sleep 5s sigterm=exit grace=30s keepalive=off rollout-restart×3", "rollout-restart zero-failures load-host", true, ""},
		{"prestop-exit-keepalive: preStop=exec:/app sleep 5s sigterm=exit grace=30s req=200ms keepalive=on POST rollout-restart×3", "rollout-restart failures-expected load-host negative-control", true, ""},
		{"prestop-exit-keepalive-get: preStop=exec:/app sleep 5s sigterm=exit grace=30s req=200ms keepalive=on rollout-restart×3", "rollout-restart zero-failures load-host", true, ""},
		{"prestop-drain: preStop=exec:/app sleep 5s sigterm=drain grace=30s keepalive=off rollout-restart×3", "rollout-restart zero-failures load-host", true, ""},
		{"app-delay: preStop=none sigterm=drain+5s grace=30s keepalive=off rollout-restart×3", "rollout-restart zero-failures load-host", true, "creditsOwnDelay err err err"},
		{"native-sleep-drain: preStop=sleep:5s sigterm=drain grace=30s keepalive=off rollout-restart×3", "rollout-restart zero-failures load-host", true, ""},
		{"slow-requests: preStop=sleep:2s sigterm=drain grace=3s req=5s keepalive=off rollout-restart×3", "rollout-restart failures-expected load-host negative-control", true, ""},
		{"ignore-sigterm: preStop=sleep:5s sigterm=ignore grace=8s keepalive=off rollout-restart×3", "rollout-restart zero-failures load-host", true, ""},
		{"ignore-sigterm-keepalive: preStop=sleep:5s sigterm=ignore grace=8s req=200ms keepalive=on POST rollout-restart×3", "rollout-restart failures-expected load-host negative-control", true, ""},
		{"slow-requests: preStop=sleep:2s sigterm=drain grace=3s req=5s keepalive=off delete-pod×3", "delete-pod failures-expected load-host negative-control", true, ""},
		{"naive: preStop=none sigterm=exit grace=30s keepalive=off delete-pod×3", "delete-pod at-most load-host", true, ""},
		{"http-prestop-drain: preStop=httpGet:/prestop?sleep=5s sigterm=drain grace=30s keepalive=off delete-pod×3", "delete-pod zero-failures load-host", true, ""},
		{"prestop-drain-slow: preStop=exec:/app sleep 5s sigterm=drain grace=30s req=5s keepalive=off delete-pod×3", "delete-pod zero-failures load-host", true, ""},
		{"prestop-past-grace: preStop=exec:/app sleep 10s sigterm=ignore grace=4s keepalive=off delete-pod×3", "delete-pod zero-failures load-host", true, "killedAtGracePlus2 err err err"},
		{"naive: preStop=none sigterm=exit grace=30s keepalive=off force-delete×3", "force-delete at-most load-host", true, ""},
		{"prestop-drain: preStop=exec:/app sleep 5s sigterm=drain grace=30s keepalive=off force-delete×3", "force-delete at-most load-host", true, ""},
		{"prestop-drain-slow: preStop=exec:/app sleep 5s sigterm=drain grace=30s req=5s keepalive=off force-delete×3", "force-delete failures-expected load-host negative-control", true, ""},
		{"slow-requests: preStop=sleep:2s sigterm=drain grace=3s req=5s keepalive=off scale-down×3", "scale-down failures-expected load-host negative-control", true, ""},
		{"naive: preStop=none sigterm=exit grace=30s keepalive=off scale-down×3", "scale-down at-most load-host", true, ""},
		{"prestop-drain: preStop=exec:/app sleep 5s sigterm=drain grace=30s keepalive=off scale-down×3", "scale-down zero-failures load-host", true, ""},
		{"pid1-exec: preStop=sleep:5s sigterm=drain grace=15s keepalive=off rollout-restart×3", "rollout-restart zero-failures load-host pid1", true, "heardSIGTERM ok err ok"},
		{"pid1-shell: preStop=sleep:5s sigterm=drain@shell grace=15s keepalive=off rollout-restart×3", "rollout-restart zero-failures load-host pid1", true, "heardSIGTERM err ok err"},
		{"pid1-tini: preStop=sleep:5s sigterm=drain@tini grace=15s keepalive=off rollout-restart×3", "rollout-restart zero-failures load-host pid1", true, "heardSIGTERM ok err ok"},
		{"stopsignal-field: preStop=sleep:5s sigterm=drain/SIGQUIT stopSignal=SIGQUIT grace=20s req=5s keepalive=off rollout-restart×3", "rollout-restart zero-failures load-host stop-signal-field", true, "runtimeTakesStopSignal ok err ok"},
		{"stopsignal-image: preStop=sleep:5s sigterm=drain/SIGQUIT@stopsignal grace=20s req=5s keepalive=off rollout-restart×3", "rollout-restart zero-failures load-host stop-signal", true, "heardSIGTERM ok err ok"},
		{"stopsignal-missing: preStop=sleep:5s sigterm=drain/SIGQUIT grace=20s req=5s keepalive=off rollout-restart×3", "rollout-restart failures-expected load-host stop-signal negative-control", true, "diedAtSIGTERM err err err"},
		{"sidecar-classic: preStop=sleep:5s sigterm=drain grace=30s sidecar=proxy(classic,front,preStop=none) keepalive=off rollout-restart×3", "rollout-restart failures-expected load-host sidecar negative-control", true, "sidecarOrder err ok err"},
		{"sidecar-classic-quiet: preStop=sleep:5s sigterm=drain grace=30s sidecar=proxy(classic,front,preStop=none) keepalive=off rollout-restart×3", "rollout-restart failures-expected load-host sidecar negative-control", true, "quietSidecar err ok err"},
		{"sidecar-classic-prestop: preStop=sleep:5s sigterm=drain grace=30s sidecar=proxy(classic,front,preStop=httpGet:/prestop?sleep=5s) keepalive=off rollout-restart×3", "rollout-restart zero-failures load-host sidecar", true, "sidecarOrder ok err err"},
		{"sidecar-native: preStop=sleep:5s sigterm=drain grace=30s sidecar=proxy(native,front,preStop=none) keepalive=off rollout-restart×3", "rollout-restart zero-failures load-host sidecar", true, "sidecarOrder ok err ok"},
		{"sidecar-native-prestop: preStop=sleep:5s sigterm=drain grace=30s sidecar=proxy(native,front,preStop=httpGet:/prestop?sleep=5s) keepalive=off rollout-restart×3", "rollout-restart zero-failures load-host sidecar", true, "sidecarOrder ok err ok"},
		{"kubelet-restart: preStop=none sigterm=ignore grace=10s keepalive=off kubelet-restart×3", "kubelet-restart zero-failures load-host slow", true, "kubeletRestarted err err err"},
		{"drain-pdb: preStop=sleep:5s sigterm=drain grace=30s pdb=maxUnavailable:1 keepalive=off drain-node×3", "drain-node zero-failures load-host family multinode", true, ""},
		{"drain-colocated: preStop=sleep:5s sigterm=drain grace=30s +patch keepalive=off drain-node×3", "drain-node failures-expected load-host family multinode negative-control", true, ""},
		{"drain-single-pdb: preStop=sleep:5s sigterm=drain grace=30s pdb=minAvailable:1 keepalive=off drain-node×3 drainTimeout=30s", "drain-node zero-failures load-host", true, ""},
	},
}

// pinnedSpec is one spec of pinned.
type pinnedSpec struct {
	name, labels string
	serial       bool
	also         string
}
