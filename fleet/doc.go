// Package fleet compares what the processes of a fleet place keys by: the
// status of a pool that a kolco proxy's admin endpoint serves
// ([PoolStatus], GET /v1/membership), a client that asks many endpoints
// for it at once ([Ask]), and the comparison that says whether they agree
// ([Compare]).
//
// Processes agree on a pool exactly when their placements' fingerprints
// (kolco.Fingerprint) are equal: [Compare] says whether the reports of a
// fleet ([Report]) agree, which of them differ and since when, and which could not be
// asked. [Ask] reads each proxy's pool statuses from its admin endpoint,
// all at once and each within a timeout, and [Answer.Report] turns an
// answer into a report on one pool. A follower of package membership
// reports the same fields for processes that are not proxies.
//
// The package sits above the placement library and beside package
// membership: it speaks HTTP and JSON, which the algorithms never need.
package fleet
