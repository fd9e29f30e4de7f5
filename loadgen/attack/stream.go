package attack

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rollcheck/rollcheck/loadgen"
)

// A stream is an attack's ledger as JSON lines, written where the attack runs (a load pod, by
// Serve) and read back where it is judged (Follow): a start line with the configuration, one
// line per request as it completes, and an end line with how the attack ended. The Result
// rebuilt from it is the one the attack would have returned itself.
type streamLine struct {
	Start *streamStart     `json:"start,omitempty"`
	Req   *loadgen.Request `json:"req,omitempty"`
	// Sent is the attack's count of requests sent so far, written every progressEvery: with
	// slow requests nothing completes for seconds, and the reader must still see the load run.
	Sent *int64 `json:"sent,omitempty"`
	// DNS is one change of the answer for Config.Resolve.
	DNS *loadgen.DNSAnswer `json:"dns,omitempty"`
	End *streamEnd         `json:"end,omitempty"`
}

// progressEvery is how often Serve writes the count of requests sent.
const progressEvery = 500 * time.Millisecond

type streamStart struct {
	Config  loadgen.Config `json:"config"`
	Started time.Time      `json:"started"`
}

type streamEnd struct {
	Ended     time.Time         `json:"ended"`
	StopAt    time.Time         `json:"stopAt,omitzero"`
	EndReason loadgen.EndReason `json:"endReason"`
	// Error is the attack's own error (its context ended it early), empty for none.
	Error string `json:"error,omitempty"`
}

// Serve runs the attack cfg and writes its stream to w: the start line, each request as it
// completes, and the end line once every request in flight has completed. The end of ctx stops
// the attack as Stop does (a load pod's SIGTERM): nothing more is sent, the requests in flight
// complete and are written. Serve returns the first write error, or nil; the attack's own
// outcome is in the stream.
func Serve(ctx context.Context, cfg loadgen.Config, w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	var mu sync.Mutex
	var werr error
	write := func(l streamLine) {
		mu.Lock()
		defer mu.Unlock()
		if werr == nil {
			werr = enc.Encode(l)
		}
		if werr == nil {
			werr = bw.Flush()
		}
	}
	// The attack's own context never ends early: ctx's end is a Stop, so that the end reason
	// says the caller stopped it and the requests in flight are kept.
	atk, err := start(context.WithoutCancel(ctx), cfg, func(q loadgen.Request) { write(streamLine{Req: &q}) },
		func(d loadgen.DNSAnswer) { write(streamLine{DNS: &d}) })
	if err != nil {
		return err
	}
	write(streamLine{Start: &streamStart{Config: atk.cfg, Started: atk.started}})
	stop := context.AfterFunc(ctx, atk.Stop)
	defer stop()
	go func() {
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-atk.Done():
				return
			case <-t.C:
				sent := atk.Progress().Sent
				write(streamLine{Sent: &sent})
			}
		}
	}()
	_, aerr := atk.Wait()
	end := &streamEnd{Ended: atk.run.Ended, StopAt: atk.run.StopAt, EndReason: atk.run.EndReason}
	if aerr != nil {
		end.Error = aerr.Error()
	}
	write(streamLine{End: end})
	return werr
}

// Remote is an attack run elsewhere, followed through its stream (Follow): it reports progress
// as the requests arrive and rebuilds the Result when the stream ends.
type Remote struct {
	sent, ok, failed atomic.Int64
	reportedSent     atomic.Int64 // the attack's own count of requests sent

	started     chan struct{}
	startedOnce sync.Once
	done        chan struct{}
	result      *loadgen.Result
	err         error
}

// Follow reads a stream from r as it is written, until its end line or the end of r. Progress
// counts the requests read so far; Wait returns the Result rebuilt from the stream. A stream
// that ends without its end line, or holds a line that does not decode, is an error: a lost
// stream is never an attack with fewer failures.
func Follow(r io.Reader) *Remote {
	rm := &Remote{started: make(chan struct{}), done: make(chan struct{})}
	go rm.read(r)
	return rm
}

// Progress returns the counts of the requests read so far; Sent is the attack's own count of
// requests sent (written every half second), or the completed ones when that is more.
func (rm *Remote) Progress() loadgen.Progress {
	ok, failed := rm.ok.Load(), rm.failed.Load()
	return loadgen.Progress{Sent: max(rm.sent.Load(), rm.reportedSent.Load()), OK: ok, Failed: failed}
}

// Started returns a channel closed when the start line has been read (the attack runs), or when
// the stream ended without one.
func (rm *Remote) Started() <-chan struct{} { return rm.started }

// Done returns a channel closed when the stream has ended.
func (rm *Remote) Done() <-chan struct{} { return rm.done }

// Wait blocks until the stream has ended and returns the Result it holds. On an error the
// Result is nil unless the stream was whole and the attack itself ended early (its context),
// as Attack.Wait.
func (rm *Remote) Wait() (*loadgen.Result, error) {
	<-rm.done
	return rm.result, rm.err
}

func (rm *Remote) read(r io.Reader) {
	markStarted := func() { rm.startedOnce.Do(func() { close(rm.started) }) }
	defer close(rm.done)
	defer markStarted()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var start *streamStart
	var reqs []loadgen.Request
	var dns []loadgen.DNSAnswer
	n := 0
	for sc.Scan() {
		n++
		var l streamLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			rm.err = fmt.Errorf("load stream line %d does not decode (%.300q): %w", n, sc.Bytes(), err)
			return
		}
		switch {
		case l.Start != nil:
			start = l.Start
			markStarted()
		case l.Sent != nil:
			rm.reportedSent.Store(*l.Sent)
		case l.DNS != nil:
			dns = append(dns, *l.DNS)
		case l.Req != nil:
			reqs = append(reqs, *l.Req)
			rm.sent.Add(1)
			if l.Req.OK() {
				rm.ok.Add(1)
			} else {
				rm.failed.Add(1)
			}
		case l.End != nil:
			if start == nil {
				rm.err = errors.New("load stream: an end line with no start line")
				return
			}
			rm.result = loadgen.NewResult(start.Config, loadgen.Run{Started: start.Started, Ended: l.End.Ended, StopAt: l.End.StopAt,
				EndReason: l.End.EndReason}, reqs)
			rm.result.DNS = dns
			if l.End.Error != "" {
				rm.err = errors.New(l.End.Error)
			}
			return
		}
	}
	err := sc.Err()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	rm.err = fmt.Errorf("load stream ended after %d lines without its end line (%d requests read): %w", n, len(reqs), err)
}
