package keys

import (
	"slices"
	"strconv"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/algo"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/ring"
)

// TestAssignRingMatchesLocate checks the bulk path (sorted hashes merged
// with the ring's points) against one Locate per key.
func TestAssignRingMatchesLocate(t *testing.T) {
	ks := Synthetic(20_000)
	for _, c := range []struct {
		name string
		cfg  ring.Config
	}{
		{"V=1", ring.Config{VNodes: 1}},
		{"V=50 md5", ring.Config{VNodes: 50, Hash: keyhash.MD5}},
		{"V=7 fnv1a", ring.Config{VNodes: 7, Hash: keyhash.FNV1a}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := ring.New(kolcotest.Nodes(13), c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			a, err := Assign(r, ks)
			if err != nil {
				t.Fatal(err)
			}
			for i := range ks.Len() {
				n, _ := r.Locate(ks.Key(i))
				if got := a.Nodes[a.Owner[i]].ID; got != n.ID {
					t.Fatalf("key %d on %s, Locate says %s", i, got, n.ID)
				}
			}
		})
	}
}

// TestCompareSparseMatchesDense: the map used for large clusters tallies
// the same flows as the matrix.
func TestCompareSparseMatchesDense(t *testing.T) {
	ks := Synthetic(5000)
	p, _ := algo.New("modulo", kolcotest.Nodes(7), algo.Options{})
	before, _ := Assign(p, ks)
	p.Add(kolco.Node{ID: "x"}, kolco.Node{ID: "y"})
	p.Remove("node-3")
	after, _ := Assign(p, ks)
	dense, sparse := compare(before, after, ks, 1<<30), compare(before, after, ks, 0)
	if dense.Moved != sparse.Moved || !slices.Equal(dense.Edges, sparse.Edges) || len(dense.Edges) == 0 {
		t.Errorf("dense %d moved in %d flows, sparse %d in %d", dense.Moved, len(dense.Edges), sparse.Moved, len(sparse.Edges))
	}
}

// TestBucketSortMatchesSort checks the bucket sort against slices.SortFunc
// on uniform, 32-bit, duplicated and tiny inputs.
func TestBucketSortMatchesSort(t *testing.T) {
	ks := Synthetic(30_000)
	uniform := make([]uint64, ks.Len())
	narrow := make([]uint64, ks.Len())
	dups := make([]uint64, ks.Len())
	for i := range uniform {
		uniform[i] = keyhash.XXH3(ks.Key(i))
		narrow[i] = uniform[i] >> 32
		dups[i] = uniform[i] % 7
	}
	for name, in := range map[string][]uint64{"uniform": uniform, "32-bit": narrow, "duplicates": dups,
		"tiny": {5, 3, 5, 0}, "empty": nil, "zeros": {0, 0, 0}} {
		t.Run(name, func(t *testing.T) {
			want := make([]hp, len(in))
			for i, h := range in {
				want[i] = hp{h, int32(i)}
			}
			slices.SortFunc(want, cmpHP)
			if got := bucketSort(in); !slices.Equal(got, want) {
				t.Error("bucket sort differs from slices.SortFunc")
			}
		})
	}
}

func TestSyntheticKeysNames(t *testing.T) {
	ks := Synthetic(1001)
	for _, i := range []int{0, 1, 9, 10, 999, 1000} {
		if got, want := ks.Key(i), "key:"+strconv.Itoa(i); got != want {
			t.Errorf("key %d: %q, want %q", i, got, want)
		}
	}
	if p := Prefix("user:", 3); p.Key(2) != "user:2" || p.Len() != 3 {
		t.Errorf("prefix keys: %q, %d", p.Key(2), p.Len())
	}
	if e := Synthetic(0); e.Len() != 0 {
		t.Errorf("empty set has %d keys", e.Len())
	}
}

// TestScaledTo: the copy's sizes keep their proportions and sum to the
// total; the original keeps its own.
func TestScaledTo(t *testing.T) {
	ks := List([]string{"a", "b", "c"})
	ks.Sizes = []float64{1, 2, 5}
	s := ks.ScaledTo(16)
	if !slices.Equal(s.Sizes, []float64{2, 4, 10}) || s.Key(2) != "c" || s.Len() != 3 {
		t.Errorf("scaled sizes %v, key 2 %q", s.Sizes, s.Key(2))
	}
	if !slices.Equal(ks.Sizes, []float64{1, 2, 5}) {
		t.Errorf("the original's sizes changed to %v", ks.Sizes)
	}
	if u := Synthetic(4).ScaledTo(2); u.TotalSize() != 2 || u.Size(3) != 0.5 {
		t.Errorf("sizes without sizes: %v", u.Sizes)
	}
}
