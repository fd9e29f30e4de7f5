package controllers

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// A step is one external program a build runs (go mod download, go list, go build, docker
// load): what it waits for, said in the log and in errors, its time limit per try, and how many
// tries it gets.
type step struct {
	what  string
	limit time.Duration
	tries int
	argv  []string // the program and its arguments
	dir   string   // its working directory; empty: the current one
	env   []string // added to the environment
}

// Pauses of the steps: before a step's next try (times the try's number), and between the lines
// that say a step still runs. Tests shorten them.
var (
	retryPause = 5 * time.Second
	stillEvery = time.Minute
)

// do runs s until a try succeeds or its tries are spent (retried), each try bounded and
// watched (once), and returns the standard output of the try that succeeded.
func (s step) do(ctx context.Context, logf func(string, ...any)) ([]byte, error) {
	var out []byte
	err := retried(ctx, s.what, s.tries, logf, func(try int) (err error) {
		logf("waiting up to %s for: %s (try %d/%d)", s.limit, s.what, try, max(s.tries, 1))
		out, err = s.once(ctx, logf)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.what, err)
	}
	return out, nil
}

// retried calls f with the try's number (from 1) until it succeeds, tries times at most, pausing
// before each try after the first (retryPause times the number of tries done). It stops when ctx
// ends (f's error must say so). The error says how many tries failed and carries the last one's.
func retried(ctx context.Context, what string, tries int, logf func(string, ...any), f func(try int) error) error {
	tries = max(tries, 1)
	var err error
	for try := 1; try <= tries; try++ {
		if err = f(try); err == nil || ctx.Err() != nil {
			return err
		}
		if try == tries {
			break
		}
		logf("%s: %v; trying again", what, err)
		t := time.NewTimer(time.Duration(try) * retryPause)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return fmt.Errorf("gave up after %d tries: %w", tries, err)
}

// once runs s once under its limit, logging every stillEvery that it still waits (a stalled
// download shows in the log). Its error carries the end of the program's standard error.
func (s step) once(parent context.Context, logf func(string, ...any)) ([]byte, error) {
	ctx, cancel := context.WithTimeout(parent, s.limit)
	defer cancel()
	defer watch(s.what, s.limit, logf)()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, s.argv[0], s.argv[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = s.dir, &stdout, &stderr
	if s.env != nil {
		cmd.Env = append(os.Environ(), s.env...)
	}
	cmd.WaitDelay = 10 * time.Second // a child that holds the pipes open must not outlive the limit
	err := cmd.Run()
	switch {
	case parent.Err() != nil:
		err = parent.Err()
	case ctx.Err() != nil:
		err = fmt.Errorf("no result within %s", s.limit)
	case err != nil:
		err = fmt.Errorf("%w: %s", err, tail(stderr.String(), 8))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(s.argv, " "), err)
	}
	return stdout.Bytes(), nil
}

// watch logs every stillEvery that what is still waited for, until the function it returns is
// called.
func watch(what string, limit time.Duration, logf func(string, ...any)) (stop func()) {
	start, done := time.Now(), make(chan struct{})
	go func() {
		t := time.NewTicker(stillEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				logf("still waiting for: %s (%s of at most %s)", what, time.Since(start).Round(time.Second), limit)
			}
		}
	}()
	return func() { close(done) }
}

// tail is the last n lines of s, trimmed, joined on one line.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], " | ")
}
