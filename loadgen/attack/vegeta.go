package attack

import (
	"bufio"
	"cmp"
	"fmt"
	"io"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/rollcheck/rollcheck/loadgen"
)

// WriteVegeta writes the ledger of r to w as vegeta results in vegeta's own gob encoding, so
// that "vegeta report" and "vegeta plot" can read it. Response bodies and headers are not kept
// and so not written.
func WriteVegeta(w io.Writer, r *loadgen.Result) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := vegeta.NewEncoder(bw)
	method := cmp.Or(r.Config.Method, loadgen.DefaultMethod)
	for i := range r.Requests {
		q := &r.Requests[i]
		vr := vegeta.Result{
			Attack:    r.Config.Name,
			Seq:       q.Seq,
			Code:      q.Code,
			Timestamp: q.Timestamp,
			Latency:   q.Latency,
			BytesIn:   q.BytesIn,
			Error:     q.Error,
			Method:    method,
			URL:       r.Config.Target,
		}
		if err := enc.Encode(&vr); err != nil {
			return fmt.Errorf("encoding request %d as vegeta result: %w", q.Seq, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing vegeta results: %w", err)
	}
	return nil
}
