package proxies

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// A command is one external program EnsureImage runs: what it waits for (in the log and in the
// error), its time limit per try, and how many tries.
type command struct {
	what  string
	limit time.Duration
	tries int
	dir   string   // working directory; empty: the current one
	env   []string // added to the environment
	argv  []string
}

// retryPause is the pause before a command's next try (times the try's number).
var retryPause = 3 * time.Second

// run runs cmd, each try under its time limit, logging before each try what it waits for and
// how long at most. It returns the standard output of the try that succeeded; the error of the
// last try carries its standard error.
func run(ctx context.Context, logf func(string, ...any), cmd command) (string, error) {
	tries := max(cmd.tries, 1)
	var err error
	for try := 1; try <= tries; try++ {
		logf("waiting up to %s for: %s (try %d/%d)", cmd.limit, cmd.what, try, tries)
		var out string
		out, err = runOnce(ctx, cmd)
		if err == nil {
			return out, nil
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("%s: %w", cmd.what, ctx.Err())
		}
		logf("%s: %v (try %d/%d)", cmd.what, err, try, tries)
		if try < tries {
			select {
			case <-ctx.Done():
				return "", fmt.Errorf("%s: %w", cmd.what, ctx.Err())
			case <-time.After(time.Duration(try) * retryPause):
			}
		}
	}
	return "", fmt.Errorf("%s: gave up after %d tries of at most %s: %w", cmd.what, tries, cmd.limit, err)
}

// runOnce runs cmd once under its time limit.
func runOnce(ctx context.Context, cmd command) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, cmd.limit)
	defer cancel()
	c := exec.CommandContext(ctx, cmd.argv[0], cmd.argv[1:]...)
	c.Dir = cmd.dir
	if len(cmd.env) > 0 {
		c.Env = append(os.Environ(), cmd.env...)
	}
	c.WaitDelay = 10 * time.Second // a child holding the pipes open must not outlive the limit
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return stdout.String(), fmt.Errorf("%s: no result within %s", strings.Join(cmd.argv, " "), cmd.limit)
	}
	if err != nil {
		return stdout.String(), fmt.Errorf("%s: %w: %s", strings.Join(cmd.argv, " "), err, lastLines(stderr.String(), 5))
	}
	return stdout.String(), nil
}

// quick runs a local command that answers at once (apt-cache, dpkg-query, docker image
// inspect, go list): one try of at most a minute, nothing logged.
func quick(ctx context.Context, argv ...string) (string, error) {
	return runOnce(ctx, command{limit: time.Minute, argv: argv})
}

// lastLines is the last n lines of s, trimmed, on one line.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
