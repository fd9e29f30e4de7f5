package loadgen

import (
	"testing"
)

func TestHTTP5xxClass(t *testing.T) {
	for code, want := range map[int]Class{500: "http_500", 503: "http_503", 599: "http_599", 499: ClassOther, 600: ClassOther} {
		if got := HTTP5xxClass(code); got != want {
			t.Errorf("HTTP5xxClass(%d) = %q, want %q", code, got, want)
		}
	}
	if ClassOK.IsFailure() || !ClassEOF.IsFailure() {
		t.Error("IsFailure wrong")
	}
}
