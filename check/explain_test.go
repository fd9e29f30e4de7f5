package check

import (
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 200; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	s := Summarize(ds)
	if s.N != 200 || len(s.Samples) != 200 || s.P50 != 100*time.Millisecond || s.P99 != 198*time.Millisecond || s.Max != 200*time.Millisecond {
		t.Errorf("summarize %+v", s)
	}
	if s := Summarize(nil); s.N != 0 || s.Samples != nil {
		t.Error("Summarize(nil) not zero")
	}
}
