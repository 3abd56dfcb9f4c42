package kolco

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// StateMarshaler is implemented by placements whose placement depends on
// the history of changes, not only on the node set: jump, jumpback,
// jumpbackanchor, flip, binomial, power, anchor and dx (which buckets the nodes hold and in
// which order buckets were removed) and slots (which node owns each slot). Their packages' Restore
// functions, and algo.Restore, rebuild exactly the same placement from the
// state in another process, so that a restarted server, or one that joins
// later, places every key as the one that lived through the changes.
type StateMarshaler interface {
	// MarshalState returns the canonical encoding of the state that,
	// with the algorithm's configuration and node set, decides placement:
	// versioned, and equal for equal states. It names nodes by ID only;
	// weights, zones and addresses come with the node set.
	MarshalState() []byte
}

// Identity is implemented by placements that can write down everything that
// decides where they place keys: every algorithm of this module.
type Identity interface {
	// AppendIdentity appends to dst a canonical description of the
	// placement (see [Fingerprint]). The error wraps [ErrBadConfig] when a
	// part of the configuration has no stable name, such as a hash function
	// or a point label that is not one of this module's.
	AppendIdentity(dst []byte) ([]byte, error)
}

// Fingerprint returns a digest of p's identity: 32 hexadecimal digits that
// are equal for two placements exactly when they place every key alike,
// across processes, machines and releases, so that servers and clients can
// check that they agree by comparing one short string.
//
// What it promises: equal fingerprints mean the same owner and the same
// replica list (Locate and LocateN) for every key, except for a collision of
// the 128-bit digest; and for the bounded algorithm the same static and live
// allocation. What it covers: the algorithm and its version, its parameters
// (the hash by name), the node IDs and what of their weights and zones
// decides placement, and the history state ([StateMarshaler]). Addresses are
// never covered. Equivalent configurations are written alike: weights that
// give the same points or slots, weights scaled by a power of two, equal
// weights of any value, zones on a placement that does not use them. Any two
// placements with fewer than two nodes and the same IDs place every key
// alike whatever their algorithm, and share a fingerprint.
//
// What it does not promise: that the same next change keeps two
// placements alike. Two placements of one node, or two slot maps with the
// same table but different weights, are alike now and can differ after the
// same change; processes that must stay alike share the state
// ([StateMarshaler]), not only the fingerprint.
//
// The error wraps [ErrBadConfig] when p does not implement [Identity] or
// its identity cannot be written (see [Identity]).
func Fingerprint(p Placement) (string, error) {
	id, ok := p.(Identity)
	if !ok {
		return "", fmt.Errorf("%w: %T has no identity", ErrBadConfig, p)
	}
	b, err := id.AppendIdentity(nil)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16]), nil
}
