// Package scenario defines one configuration of rollcheck's built-in matrix, a Scenario: the sample app's
// own settings ([Sample]: what it does on SIGTERM, its request duration, warm-up, entry point,
// protocol, a proxy sidecar), an optional proxy in front ([Front]), and a variant with the
// expected outcome. [Scenario.Plan] turns it into a check.Plan, which is validated before any
// cluster work and judged by check.Outcome; [Render] writes the sample app's manifests. The
// suites declare the matrix from Scenarios; users' checks never need this package.
package scenario
