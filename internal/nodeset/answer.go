package nodeset

import "github.com/kolco-dev/kolco"

// The answers of a lookup that found the owner at index i of nodes (the
// node set of the state it read), or no owner (i < 0) in a placement
// without nodes. Each algorithm's Locate, LocateID and LocateIndex is one
// call to its own search and one to these, small enough to be inlined.

// Owner returns nodes[i], or kolco.ErrNoNodes when i < 0.
func Owner(nodes []kolco.Node, i int) (kolco.Node, error) {
	if i < 0 {
		return kolco.Node{}, kolco.ErrNoNodes
	}
	return nodes[i], nil
}

// OwnerID returns the ID of nodes[i], or kolco.ErrNoNodes when i < 0.
func OwnerID(nodes []kolco.Node, i int) (string, error) {
	if i < 0 {
		return "", kolco.ErrNoNodes
	}
	return nodes[i].ID, nil
}

// OwnerIndex returns i, or -1 and kolco.ErrNoNodes when i < 0.
func OwnerIndex(i int) (int, error) {
	if i < 0 {
		return -1, kolco.ErrNoNodes
	}
	return i, nil
}
