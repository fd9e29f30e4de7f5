package engine

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// host describes the machine this process runs on, as a row records it (check.Versions.Host):
// cores, memory, operating system and kernel. The figures a row measured depend on it (a
// loaded 2-core machine stretches every propagation delay), and kind's nodes are containers on
// this machine, so for a kind cluster it is the cluster's machine too. Read when the row runs,
// not when a report is written: a report may be written anywhere, later.
func host() string {
	parts := []string{fmt.Sprintf("%d cores", runtime.NumCPU())}
	if kb := memTotalKB("/proc/meminfo"); kb > 0 {
		parts = append(parts, fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20)))
	}
	osName := runtime.GOOS + "/" + runtime.GOARCH
	if pretty := osRelease("/etc/os-release"); pretty != "" {
		osName = pretty + " " + runtime.GOARCH
	}
	parts = append(parts, osName)
	if k, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		parts = append(parts, "kernel "+strings.TrimSpace(string(k)))
	}
	return strings.Join(parts, ", ")
}

// memTotalKB is MemTotal of a /proc/meminfo file, in kB; 0 when it cannot be read.
func memTotalKB(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "MemTotal:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// osRelease is PRETTY_NAME of an os-release file; "" when it cannot be read.
func osRelease(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}
