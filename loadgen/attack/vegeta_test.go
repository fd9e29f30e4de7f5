package attack

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"reflect"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/rollcheck/rollcheck/loadgen"
)

var t0 = time.Date(2025, 11, 22, 12, 0, 0, 0, time.UTC)

// hit returns the vegeta result of the k-th hit (k from 1) of a 10/s
// constant pacer: sent at k × 100 ms (+1 ms) after t0, answered 200 by pod-k%2.
func hit(k int) vegeta.Result {
	return vegeta.Result{
		Attack:    loadgen.DefaultName,
		Seq:       uint64(k - 1),
		Code:      200,
		Timestamp: t0.Add(time.Duration(k)*100*time.Millisecond + time.Millisecond),
		Latency:   10 * time.Millisecond,
		BytesIn:   2,
		Body:      []byte("ok"),
		Method:    "GET",
		URL:       "http://127.0.0.1:30080/",
		Headers:   http.Header{"X-Pod-Name": {[]string{"pod-0", "pod-1"}[k%2]}},
	}
}

// recorded is the Result of vegeta results recorded the way a live attack records them:
// through the recorder, in the (shuffled) order they arrived, over a run from t0 that went
// its whole Duration.
func recorded(cfg loadgen.Config, rs []vegeta.Result) *loadgen.Result {
	cfg = cfg.WithDefaults()
	rc := newRecorder(cfg, &Attack{})
	for i := range rs {
		rc.add(&rs[i])
	}
	return loadgen.NewResult(cfg, loadgen.Run{Started: t0, Ended: t0.Add(cfg.Duration + time.Second), EndReason: loadgen.EndDuration}, rc.reqs)
}

var synthCfg = loadgen.Config{Target: "http://127.0.0.1:30080/", Rate: 10, Duration: 5 * time.Second}

// synthResults is a 5 s run at 10/s with three bursts of failures: five refused, a reset,
// a 503, a 404 and a timeout, each as vegeta records it.
func synthResults() []vegeta.Result {
	const refused = `Get "http://127.0.0.1:30080/": dial tcp 127.0.0.1:30080: connect: connection refused`
	failed := map[int]struct {
		code uint16
		msg  string
	}{
		10: {0, refused}, 11: {0, refused}, 12: {0, refused}, 13: {0, refused}, 14: {0, refused},
		16: {0, `Get "http://127.0.0.1:30080/": read tcp 127.0.0.1:4->127.0.0.1:30080: read: connection reset by peer`},
		30: {503, "503 Service Unavailable"},
		31: {404, "404 Not Found"},
		42: {0, `Get "http://127.0.0.1:30080/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`},
	}
	rs := make([]vegeta.Result, 0, 50)
	for k := 1; k <= 50; k++ {
		r := hit(k)
		if f, ok := failed[k]; ok {
			r.Code, r.Error, r.Body, r.BytesIn, r.Headers = f.code, f.msg, nil, 0, nil
		}
		rs = append(rs, r)
	}
	rs[41].Latency = 2 * time.Second // the timeout
	// Results arrive in completion order, not sending order.
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
	return rs
}

// The recorder keeps every vegeta result as a ledger entry: classified by its status code and
// its error text, the error kept only for a failure, the pod from its header.
func TestRecorder(t *testing.T) {
	res := recorded(synthCfg, synthResults())
	wantTotals := loadgen.Totals{Requests: 50, OK: 41, Failed: 9, Failures: map[loadgen.Class]int{
		loadgen.ClassRefused: 5, loadgen.ClassReset: 1, "http_503": 1, loadgen.ClassHTTP4xx: 1, loadgen.ClassTimeout: 1}}
	if !reflect.DeepEqual(res.Totals, wantTotals) || !res.Valid {
		t.Errorf("Totals = %+v, want %+v (valid %v: %s)", res.Totals, wantTotals, res.Valid, res.InvalidReason)
	}
	for i, q := range res.Requests {
		if q.Seq != uint64(i) || q.OK() != (q.Error == "") || q.OK() != (q.Pod != "") {
			t.Errorf("ledger entry %d: %+v", i, q)
		}
	}
}

func TestWriteVegeta(t *testing.T) {
	res := recorded(synthCfg, synthResults())
	var buf bytes.Buffer
	if err := WriteVegeta(&buf, res); err != nil {
		t.Fatal(err)
	}
	dec := vegeta.NewDecoder(&buf)
	var got []vegeta.Result
	var m vegeta.Metrics
	for {
		var r vegeta.Result
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
		m.Add(&r)
	}
	m.Close()
	if len(got) != len(res.Requests) {
		t.Fatalf("decoded %d results, want %d", len(got), len(res.Requests))
	}
	for i, r := range got {
		q := res.Requests[i]
		if r.Seq != q.Seq || r.Code != q.Code || r.Error != q.Error || !r.Timestamp.Equal(q.Timestamp) ||
			r.Latency != q.Latency || r.BytesIn != q.BytesIn || r.Method != "GET" || r.URL != synthCfg.Target || r.Attack != loadgen.DefaultName {
			t.Errorf("result %d = %+v, want ledger entry %+v", i, r, q)
		}
	}
	// What "vegeta report" computes from the file agrees with the Result.
	if m.Requests != 50 || m.Success != res.SuccessRatio || m.StatusCodes["503"] != 1 || m.StatusCodes["0"] != 7 {
		t.Errorf("vegeta metrics: %d requests, success %v, codes %v", m.Requests, m.Success, m.StatusCodes)
	}
}
