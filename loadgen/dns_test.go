package loadgen

import (
	"testing"
	"time"
)

func TestResolveValidate(t *testing.T) {
	c := Config{Target: "http://127.0.0.1:1/", Rate: 1, Duration: time.Second, Resolve: "bad name/x"}
	if c.Validate() == nil {
		t.Fatal("a bad resolve name passed")
	}
	c.Resolve = "app-headless"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}
