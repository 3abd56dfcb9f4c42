package rendezvous_test

import (
	"crypto/md5"
	"encoding/binary"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/kolco-dev/kolco"
	"github.com/kolco-dev/kolco/keyhash"
	"github.com/kolco-dev/kolco/kolcotest"
	"github.com/kolco-dev/kolco/rendezvous"
)

func algorithm(name string, cfg rendezvous.Config) kolcotest.Algorithm {
	return kolcotest.Algorithm{
		Name:             name,
		New:              func(nodes []kolco.Node) (kolco.Placement, error) { return rendezvous.New(nodes, cfg) },
		OrderIndependent: true,
		Undo:             true,
		MinimalAdd:       true,
		MinimalRemove:    true,
		Weighted:         true,
		Balance:          func(int) float64 { return 1 },
		NewHashed: func(nodes []kolco.Node, h keyhash.Func) (kolco.Placement, error) {
			c := cfg
			c.Hash = h
			return rendezvous.New(nodes, c)
		},
		// Every node's share is 1/N: the loads differ from the mean by
		// sampling noise alone, 0.7% for 18,000 keys a node (see doc.go).
		MaxOverMean: 1.10,
		MinOverMean: 0.90,
	}
}

func TestProperties(t *testing.T) {
	kolcotest.Run(t, algorithm("rendezvous", rendezvous.Config{}))
}

func TestPropertiesSeparator(t *testing.T) {
	a := algorithm("rendezvous/md5", rendezvous.Config{Hash: keyhash.MD5, Separator: ":"})
	// One MD5 per node per key: the 1000-node balance run would take
	// seconds, and the mixer-mode run above covers the same selection code.
	a.MaxNodes = 100
	a.SkipAllocs = purego
	kolcotest.Run(t, a)
}

// ringHash is the article's ring_hash: the first 8 bytes of MD5, big-endian.
func ringHash(s string) uint64 {
	d := md5.Sum([]byte(s))
	return binary.BigEndian.Uint64(d[:8])
}

// TestArticle checks owners printed by the article's Python rendezvous
// (the node with the largest md5 of "node:key"), run with CPython 3 on the
// node lists below.
func TestArticle(t *testing.T) {
	abc := []kolco.Node{{ID: "cache-a"}, {ID: "cache-b"}, {ID: "cache-c"}}
	eleven := kolcotest.Nodes(11)
	cases := []struct{ key, abc, eleven string }{
		{"user:0", "cache-c", "node-9"},
		{"user:1", "cache-c", "node-6"},
		{"user:7", "cache-c", "node-1"},
		{"user:42", "cache-b", "node-0"},
		{"user:99999", "cache-b", "node-4"},
		{"", "cache-c", "node-0"},
		{"ключ", "cache-a", "node-6"},
		{strings.Repeat("a", 300), "cache-c", "node-3"},
		{strings.Repeat("b", 600), "cache-b", "node-0"}, // beyond the stack buffer
	}
	cfg := rendezvous.Config{Hash: keyhash.MD5, Separator: ":"}
	r1, _ := rendezvous.New(abc, cfg)
	r2, _ := rendezvous.New(eleven, cfg)
	for _, c := range cases {
		if got, _ := r1.Locate(c.key); got.ID != c.abc {
			t.Errorf("cache-a..c: Locate(%.10q) = %s, Python says %s", c.key, got.ID, c.abc)
		}
		if got, _ := r2.Locate(c.key); got.ID != c.eleven {
			t.Errorf("node-0..10: Locate(%.10q) = %s, Python says %s", c.key, got.ID, c.eleven)
		}
	}
}

// TestArticleMeasurement reproduces the article's figure: on keys
// user:0..199999, going from node-0..9 to node-0..10 moves 9.11% of the
// keys, all onto the new node.
func TestArticleMeasurement(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("4.2 million MD5 hashes; run without -short and -race")
	}
	cfg := rendezvous.Config{Hash: keyhash.MD5, Separator: ":"}
	before, _ := rendezvous.New(kolcotest.Nodes(10), cfg)
	after, _ := rendezvous.New(kolcotest.Nodes(11), cfg)
	moved := 0
	for i := range 200_000 {
		k := "user:" + itoa(i)
		b, _ := before.Locate(k)
		a, _ := after.Locate(k)
		if a.ID != b.ID {
			moved++
			if a.ID != "node-10" {
				t.Fatalf("key %s moved %s -> %s, not onto node-10", k, b.ID, a.ID)
			}
		}
	}
	if got := math.Round(10000*float64(moved)/200_000) / 100; got != 9.11 {
		t.Errorf("moved %.2f%% (%d keys), the article measured 9.11%%", got, moved)
	}
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		if i /= 10; i == 0 {
			return string(b[n:])
		}
	}
}

// reference ranks all nodes by a straightforward score and sorts them:
// score descending, then ID ascending.
func reference(nodes []kolco.Node, key string, cfg rendezvous.Config) []string {
	type scored struct {
		id    string
		raw   uint64
		score float64
	}
	uniform := true
	for _, n := range nodes {
		uniform = uniform && n.EffectiveWeight() == nodes[0].EffectiveWeight()
	}
	var all []scored
	for _, n := range nodes {
		var raw uint64
		if cfg.Separator == "" {
			raw = fmix(keyhash.XXH3(key) ^ fmix(keyhash.XXH3(n.ID)))
		} else {
			raw = keyhash.Finalized(cfg.Hash)(n.ID + cfg.Separator + key) // a weak hash finalized
		}
		u := (float64(raw>>11) + 0.5) / (1 << 53)
		all = append(all, scored{n.ID, raw, n.EffectiveWeight() / -math.Log(u)})
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if uniform && a.raw != b.raw {
			return a.raw > b.raw
		}
		if !uniform && a.score != b.score {
			return a.score > b.score
		}
		return a.id < b.id
	})
	ids := make([]string, len(all))
	for i, s := range all {
		ids[i] = s.id
	}
	return ids
}

// fmix is MurmurHash3's 64-bit finalizer as published by Austin Appleby.
func fmix(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

func TestKnownAnswers(t *testing.T) {
	weighted := kolcotest.Nodes(40)
	for i := range weighted {
		weighted[i].Weight = 0.5 + float64(i%7)
	}
	sets := map[string][]kolco.Node{
		"one": kolcotest.Nodes(1), "three": kolcotest.Nodes(3), "forty": kolcotest.Nodes(40), "weighted": weighted,
	}
	configs := map[string]rendezvous.Config{
		"mixer": {}, "md5": {Hash: keyhash.MD5, Separator: ":"}, "fnv": {Hash: keyhash.FNV1a, Separator: "/"},
	}
	for cname, cfg := range configs {
		for sname, nodes := range sets {
			t.Run(cname+"/"+sname, func(t *testing.T) {
				r, err := rendezvous.New(nodes, cfg)
				if err != nil {
					t.Fatal(err)
				}
				var dst []kolco.Node
				for _, k := range kolcotest.Keys(300) {
					want := reference(nodes, k, cfg)
					dst, err = r.LocateN(dst[:0], k, len(nodes))
					if err != nil {
						t.Fatal(err)
					}
					for i := range want {
						if dst[i].ID != want[i] {
							t.Fatalf("LocateN(%q)[%d] = %s, want %s (full %v)", k, i, dst[i].ID, want[i], want)
						}
					}
				}
			})
		}
	}
}
