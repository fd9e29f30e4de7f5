// Package stats is the arithmetic behind rollcheck's statistics over repeated runs: a 95 %
// interval for a failure ratio and Fisher's exact test for two failure counts. The functions
// are pure and import nothing outside the standard library.
package stats
