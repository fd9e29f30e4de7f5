// Package stats is the arithmetic behind rollcheck's statistics over repeated runs: a 95 %
// interval for a failure ratio, Fisher's exact test for two failure counts, and Student's t
// quantiles (the prediction bounds of the matrix's at-most rows). The functions are pure and
// import nothing outside the standard library.
package stats
