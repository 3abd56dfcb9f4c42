package membership

import (
	"errors"
	"slices"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
)

// FuzzFollowerVersions hands a follower's version handling a sequence of
// versions built from the input - node sets, weights, and a stored state
// that is absent, current, left behind, another algorithm's or not a state
// at all - and checks that each is applied whole or refused whole: an
// applied view places over exactly the version's nodes, and, where the
// store keeps a state, as the state says; a refusal wraps a sentinel and
// leaves the view as it was.
func FuzzFollowerVersions(f *testing.F) {
	f.Add(uint8(0), []byte{0x0f, 0x4b, 0x8c, 0x0d})
	f.Add(uint8(1), []byte{0x1f, 0x5e, 0x01, 0xc3})
	f.Add(uint8(2), []byte{0x07, 0x47, 0x46, 0x87, 0x05})
	f.Add(uint8(3), []byte{0x3f, 0x61, 0xe3})
	names := []string{"jump", "anchor", "slots", "ring"}
	ids := []string{"a", "b", "c", "d", "e"}
	f.Fuzz(func(t *testing.T, which uint8, script []byte) {
		name := names[int(which)%len(names)]
		info, _ := algo.Lookup(name)
		opts := algo.Options{Capacity: 8, Slots: 64}
		fl := &Follower{cfg: FollowConfig{Algorithm: name, Options: opts}, hist: info.HistoryDependent}
		p, err := algo.New(name, nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		view, err := fl.newView(p, Version{}, true)
		if err != nil {
			t.Fatal(err)
		}
		writer, _ := NewPlacementState("anchor", nil, opts) // the store's state, kept by a writer
		if info.HistoryDependent {
			writer, _ = NewPlacementState(name, nil, opts)
		}
		for i, b := range script {
			v := Version{Revision: int64(i + 1)}
			for j, id := range ids {
				if b&(1<<j) != 0 {
					n := kolco.Node{ID: id}
					if b&0x20 != 0 && j == 0 {
						n.Weight = 3
					}
					v.Nodes = append(v.Nodes, n)
				}
			}
			switch b >> 6 {
			case 1: // a writer stored the state with the change
				if next, err := writer.Next(v.Nodes); err == nil {
					writer = next
				}
				v.State = writer.Marshal()
			case 2: // changed without the state
				v.State = writer.Marshal()
			case 3:
				v.State = []byte{b}
			}
			next, _, _, err := fl.build(view, v)
			if err != nil {
				if !errors.Is(err, ErrBadContent) && !errors.Is(err, ErrBadConfig) && !errors.Is(err, kolco.ErrBadWeight) && !errors.Is(err, kolco.ErrBadState) {
					t.Fatalf("version %v: error %v wraps no sentinel", v, err)
				}
				continue
			}
			if !slices.Equal(next.Placement.Nodes(), v.Nodes) || next.Revision != v.Revision {
				t.Fatalf("version %v: view over %v at revision %d", v, next.Placement.Nodes(), next.Revision)
			}
			if info.HistoryDependent && v.State != nil {
				want, err := writer.Placement(v.Nodes, opts)
				if err != nil {
					t.Fatalf("version %v applied; the stored state does not place: %v", v, err)
				}
				if fp, _ := kolco.Fingerprint(want); fp != next.Fingerprint {
					t.Fatalf("version %v: the view places otherwise than the stored state", v)
				}
			}
			view = next
		}
	})
}
