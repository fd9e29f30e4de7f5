// Package checkinput is where the flags of rollcheck's front ends (check, tune, gate and serve)
// and a check file meet: one rule for each input, every problem said in one line before any
// Docker or cluster work. With -f a flag that describes what the file describes is refused,
// never silently dropped; the cluster's flags replace the file's cluster section; the run's
// flags apply to either form.
//
// cmd/rollcheck registers the flags and maps the errors to exit codes; this package reads
// them into the resolved plans a run takes (Flags.Read), decides how many run at once
// (Run.AtOnce) and prints a dry run (DryRun).
package checkinput
