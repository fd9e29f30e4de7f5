// Package audit scores a cluster's workloads against its measured windows without disrupting
// anything: it reads Deployments and StatefulSets (and what leads to them: Services, PDBs,
// Ingresses, routes) from manifests into one model, reads a windows file (a cluster's measured
// windows, written by rollcheck windows extract from a recorded run), and predicts, per
// termination mechanism, how many requests a rollout costs and which setting removes them, with
// the recommendation's formula (internal/analyze) that rollcheck check uses. It also reads
// recorded runs (ReadRunRows, ExtractRun) and puts its predictions beside what their rows
// measured (RunAgreement: rollcheck windows agreement's table).
package audit
