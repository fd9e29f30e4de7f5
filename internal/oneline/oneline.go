// Package oneline joins validation errors into one error that prints on one line, as every
// bad input in rollcheck is reported: all problems at once, "a; b; c".
package oneline

import "strings"

// Join returns nil for no errors, else one error whose message is the messages joined by
// "; "; errors.Is and errors.As still see each.
func Join(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return &joined{msg: strings.Join(msgs, "; "), errs: errs}
}

type joined struct {
	msg  string
	errs []error
}

func (j *joined) Error() string   { return j.msg }
func (j *joined) Unwrap() []error { return j.errs }
